// The AWS SDK is loaded only when a managed model is called: importing @keel/models, building a chat-completions
// provider (and even a Bedrock provider that is never called) must not load it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { awsModulesLoadedBy as loadedBy } from '../src/testing.ts';

/** Runs `body` after importing @keel/models (as `models`) in a fresh node process; returns the AWS modules seen. */
function awsModulesLoadedBy(body: string): Promise<string[]> {
  return loadedBy(`const models = await import('@keel/models');\n${body}`, {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: 'AKIDLOCALTESTONLY000',
      AWS_SECRET_ACCESS_KEY: 'local-test-secret-not-real',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
  });
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
