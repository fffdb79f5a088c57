import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { type App, createApp, type HttpConfig } from '../src/index.ts';
import { invalidExamples, type ReplayRequest, replayExamples } from '../src/testing.ts';

const http: HttpConfig = {
  maxRequestSizeBytes: 1_048_576,
  corsAllowedOrigins: [],
  securityHeadersEnabled: true,
  rateLimitMax: 1000,
  rateLimitWindowMs: 60_000,
};

async function shop(
  examples: Record<string, { body?: unknown; query?: Record<string, unknown>; params?: Record<string, unknown> }>,
) {
  const app = await createApp({ name: 'shop', version: '1', description: 'shop', http, logLevel: 'silent', examples });
  const Item = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) });
  app.post('/items', { schema: { body: Item } }, async (_request, reply) => reply.code(201).send({ id: 'itm_1' }));
  app.get(
    '/items/:itemId',
    {
      schema: {
        params: Type.Object({ itemId: Type.String() }),
        querystring: Type.Object({ fields: Type.Optional(Type.String()) }),
      },
    },
    async (request) => ({ id: request.params.itemId }),
  );
  await app.ready();
  return app;
}

/** Sends a replayed request to an app in process. */
function injectInto(app: App, sent: string[] = []) {
  return async (request: ReplayRequest) => {
    sent.push(`${request.method} ${request.url}`);
    const response = await app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers,
      payload: request.body,
    });
    return { status: response.statusCode, body: response.json() };
  };
}

describe('operation examples', () => {
  test('a body example becomes the media-type example, a parameter example the parameter example', async (t) => {
    const app = await shop({
      'POST /items': { body: { name: 'Trail running shoe', price: 89.99 } },
      'GET /items/{itemId}': { params: { itemId: 'itm_example' }, query: { fields: 'name,price' } },
    });
    t.after(() => app.close());
    const document = app.swagger() as any;
    assert.deepEqual(document.paths['/items'].post.requestBody.content['application/json'].example, {
      name: 'Trail running shoe',
      price: 89.99,
    });
    const parameters = document.paths['/items/{itemId}'].get.parameters;
    assert.equal(parameters.find((p: any) => p.name === 'itemId').example, 'itm_example');
    assert.equal(parameters.find((p: any) => p.name === 'fields').example, 'name,price');
    assert.deepEqual(invalidExamples(document), []);
    const ids = new Map([['itm_example', 'itm_1']]);
    const sent: string[] = [];
    await replayExamples({
      document,
      ids,
      send: injectInto(app, sent),
    });
    assert.deepEqual(sent, ['POST /items', 'GET /items/itm_1?fields=name%2Cprice']);
  });

  test('an example that does not match its schema is reported', async (t) => {
    const app = await shop({
      'POST /items': { body: { name: '', price: -1 } },
      'GET /items/{itemId}': { params: { itemId: 'x' } },
    });
    t.after(() => app.close());
    assert.match(invalidExamples(app.swagger() as any).join('\n'), /POST \/items body/);
  });

  test('the replay fails when an operation lacks an example, and when one does not succeed', async (t) => {
    const app = await shop({ 'POST /items': { body: { name: 'Trail running shoe', price: 89.99 } } });
    t.after(() => app.close());
    const send = injectInto(app);
    await assert.rejects(
      replayExamples({ document: app.swagger() as any, ids: new Map(), send }),
      /GET \/items\/\{itemId\}: no example for path parameter itemId/,
    );
    await assert.rejects(
      replayExamples({
        document: app.swagger() as any,
        ids: new Map(),
        send: async () => ({ status: 400, body: {} }),
        exclude: { 'GET /items/{itemId}': 'needs an item' },
      }),
      /POST \/items \(POST \/items\) answered 400/,
    );
  });
});
