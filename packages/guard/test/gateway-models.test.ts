import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { startChatUpstream, startGateway } from './gateway-fixtures.ts';

const MODELS = {
  object: 'list',
  data: [
    { id: 'gpt-4o-mini', object: 'model', created: 1_721_172_741, owned_by: 'system' },
    { id: 'text-embedding-3-small', object: 'model', created: 1_705_948_997, owned_by: 'system' },
  ],
};

describe('gateway: GET /v1/models', () => {
  test("the official client's models.list() gets the upstream's list, fetched with the gateway's own key", async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: MODELS }));
    const { client } = await startGateway(t, upstream.url, { AI_API_KEY: 'sk-gateway-upstream-key' });
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, ['gpt-4o-mini', 'text-embedding-3-small']);
    assert.equal(upstream.calls.length, 1);
    assert.equal(upstream.calls[0]!.url, '/v1/models');
    assert.equal(upstream.calls[0]!.headers.authorization, 'Bearer sk-gateway-upstream-key', "the gateway's key");
  });

  test('with auth on, listing models needs gateway:use like the chat route', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: MODELS }));
    const { url } = await startGateway(t, upstream.url, {
      AUTH_ENABLED: 'true',
      AUTH_TOKEN_PERMISSIONS: 'app=gateway:use,reader=patterns:admin',
    });
    const allowed = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'app', maxRetries: 0 });
    assert.equal((await allowed.models.list()).data.length, 2);
    const other = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'reader', maxRetries: 0 });
    await assert.rejects(other.models.list(), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 403);
    const none = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'nobody', maxRetries: 0 });
    await assert.rejects(none.models.list(), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 401);
    assert.equal(upstream.calls.length, 1, 'refused calls never reach the upstream');
  });

  test('an upstream error passes through with its status; no upstream configured is a 503', async (t) => {
    const upstream = await startChatUpstream(t, () => ({
      status: 401,
      json: {
        error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
      },
    }));
    const { client } = await startGateway(t, upstream.url);
    await assert.rejects(
      client.models.list(),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 401 && /Incorrect API key/.test(error.message),
    );
    const bare = await startGateway(t, undefined);
    await assert.rejects(
      bare.client.models.list(),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 503 && error.code === 'upstream_not_configured',
    );
  });
});
