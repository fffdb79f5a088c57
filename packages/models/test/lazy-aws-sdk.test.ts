// The AWS SDK is loaded only when a managed model is called: importing @keel/models, building a chat-completions
// provider (and even a Bedrock provider that is never called) must not load it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `body` in a fresh node process that records every module it resolves; returns the AWS modules seen. */
async function awsModulesLoadedBy(body: string): Promise<string[]> {
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
    const models = await import('@keel/models');
    ${body}
    process.stdout.write(JSON.stringify(seen));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: 'AKIDLOCALTESTONLY000',
      AWS_SECRET_ACCESS_KEY: 'local-test-secret-not-real',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as string[];
}

test('importing @keel/models and creating a chat-completions provider does not load the AWS SDK', async () => {
  const seen = await awsModulesLoadedBy(`
    const chat = models.createChatCompletionsProvider({ baseUrl: 'http://127.0.0.1:9', apiKey: undefined, defaultModel: 'm' });
    const idle = models.createBedrockProvider({ region: 'us-east-1', modelId: 'm' });
    await chat.close();
    await idle.close();
  `);
  assert.deepEqual(seen, []);
});

test('the first call of a managed model loads the AWS SDK (the check above would see it)', async () => {
  const seen = await awsModulesLoadedBy(`
    const bedrock = models.createBedrockProvider({ region: 'us-east-1', modelId: 'm', endpointOverride: 'http://127.0.0.1:9' });
    await bedrock.complete({ messages: [{ role: 'user', content: 'hi' }] }, { timeoutMs: 2000 }).catch(() => undefined);
    await bedrock.close();
  `);
  assert.ok(seen.includes('@aws-sdk/client-bedrock-runtime'), JSON.stringify(seen));
});
