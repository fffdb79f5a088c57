// The engine's start-up does not load the AWS SDK: @keel/models imports it only when a Bedrock provider is called.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

test('importing @keel/engine (its whole module graph, guard included) does not load the AWS SDK', async () => {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({
      resolve(specifier, context, next) {
        const result = next(specifier, context);
        if (/@aws-sdk|@smithy/.test(result.url)) seen.push(specifier);
        return result;
      },
    });
    const engine = await import('@keel/engine');
    process.stdout.write(JSON.stringify({ seen, exports: Object.keys(engine).length }));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: path.resolve(import.meta.dirname, '..'),
    timeout: 60_000,
  });
  const result = JSON.parse(stdout) as { seen: string[]; exports: number };
  assert.ok(result.exports > 0, 'the engine module graph loaded');
  assert.deepEqual(result.seen, []);
});
