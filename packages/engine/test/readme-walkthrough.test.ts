import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFaultDatabase } from '@keel/core/testing';
import { startUpstream } from './runtime-helper.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const README = path.join(ROOT, 'packages/engine/README.md');

/** The runtime "Try it" block of the engine README, as a user pastes it. */
function walkthrough(): string {
  const text = readFileSync(README, 'utf8');
  const match = /<!-- runtime-walkthrough:start -->\n```sh\n([\s\S]*?)```\n<!-- runtime-walkthrough:end -->/.exec(text);
  assert.ok(match, 'the README keeps its walkthrough between the runtime-walkthrough markers');
  return match[1]!;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const targets: { name: string; databaseUrl?: string }[] = [{ name: 'sqlite' }];
if (process.env.TEST_DATABASE_URL) targets.push({ name: 'postgres', databaseUrl: process.env.TEST_DATABASE_URL });

for (const target of targets) {
  test(`the engine README's runtime walkthrough runs as written (${target.name})`, async (t) => {
    const upstream = await startUpstream(t, () => ({ content: 'Yes, we ship tents to Norway within five days.' }));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'keel-walkthrough-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      KEEL_DATA_DIR: dataDir,
      KEEL_ALLOW_PRIVATE_URLS: 'true',
      ENGINE_PORT: String(await freePort()),
      ENGINE_MCP_PORT: String(await freePort()),
      ENGINE_WEBHOOK_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    delete env.DATABASE_URL;
    if (target.databaseUrl) {
      // Its own database: the CLI and the engine use the fixed `engine` schema.
      const database = await createFaultDatabase(target.databaseUrl);
      t.after(() => database.drop());
      env.DATABASE_URL = database.url;
    }
    const block = walkthrough();
    // Only the two settings a user edits change: where the engine listens and which model it calls.
    const script = block
      .replace(/^E=http:\/\/127\.0\.0\.1:8083 /m, `E=http://127.0.0.1:${env.ENGINE_PORT} `)
      .replace(/^MODEL_URL=.*$/m, `MODEL_URL=${upstream.url}; MODEL_KEY=sk-walkthrough-double`);
    assert.notEqual(script, block);
    const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { cwd: ROOT, env, detached: true });
    // The script leaves `keel start engine` running in the background: stop its whole process group.
    t.after(() => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {}
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, `the walkthrough failed:\n${stdout}\n${stderr}`);

    assert.match(stdout, /"system_prompt_id": "[0-9a-f-]{36}"/, 'the agent runs the prompt it created');
    assert.match(stdout, /"status": "succeeded"/);
    assert.match(stdout, /Yes, we ship tents to Norway within five days\./);
    const history = JSON.parse(stdout.slice(stdout.lastIndexOf('[\n')));
    assert.deepEqual(
      history.map((message: { role: string }) => message.role),
      ['user', 'assistant', 'user', 'assistant'],
      'chat and execute turns are both in the session',
    );
    assert.equal(upstream.calls.length, 2, 'one model call per turn');
    const sent = upstream.calls[0]!.body.messages;
    assert.match(sent[0].content, /shop assistant of Acme Outdoor/, "the prompt is the model's system message");
    assert.equal(upstream.calls[0]!.headers.authorization, 'Bearer sk-walkthrough-double');
  });
}
