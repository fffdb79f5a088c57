import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { createApp, readableIssues, type SchemaIssue } from '../src/index.ts';

const DATASETS = ['metrics', 'alerts', 'reports'] as const;

async function app() {
  const server = await createApp({
    name: 'test',
    version: '1',
    description: 'validation messages',
    http: {
      maxRequestSizeBytes: 65_536,
      corsAllowedOrigins: [],
      securityHeadersEnabled: true,
      rateLimitMax: 1000,
      rateLimitWindowMs: 60_000,
    },
    logLevel: 'silent',
  });
  server.get(
    '/analytics',
    {
      schema: {
        querystring: Type.Object({
          dataset: Type.Union(DATASETS.map((d) => Type.Literal(d))),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
        }),
      },
    },
    async () => ({ ok: true }),
  );
  server.post(
    '/items',
    {
      schema: {
        body: Type.Object({
          items: Type.Array(
            Type.Object({
              sku: Type.String({ minLength: 1, maxLength: 8 }),
              mode: Type.Union([Type.Literal('fast'), Type.Literal('slow'), Type.Null()]),
              password: Type.Optional(Type.String({ maxLength: 4 })),
            }),
          ),
        }),
      },
    },
    async () => ({ ok: true }),
  );
  return server;
}

describe('readable validation messages', () => {
  test('a value outside a union of constants is one message naming the field, the value given and every allowed value', async (t) => {
    const server = await app();
    t.after(() => server.close());
    const response = await server.inject({ method: 'GET', url: '/analytics?dataset=nope' });
    assert.equal(response.statusCode, 400);
    const { error } = response.json();
    assert.equal(
      error.message,
      'Invalid request: query parameter dataset must be one of metrics, alerts, reports (got "nope")',
    );
    assert.deepEqual(error.details, [
      { path: 'querystring/dataset', message: 'must be one of metrics, alerts, reports (got "nope")' },
    ]);
    assert.doesNotMatch(response.body, /anyOf|equal to constant/);
    const range = await server.inject({ method: 'GET', url: '/analytics?dataset=alerts&limit=900' });
    assert.equal(range.json().error.message, 'Invalid request: query parameter limit must be at most 500 (got 900)');
    const missing = await server.inject({ method: 'GET', url: '/analytics' });
    assert.equal(missing.json().error.message, 'Invalid request: query parameter dataset is required');
  });

  test('nested body fields are named by path; long, key-like and secret-named values are never echoed', async (t) => {
    const server = await app();
    t.after(() => server.close());
    const key = 'AKIAQ3EGRTZ7VKD4LN2X';
    const long = await server.inject({ method: 'POST', url: '/items', payload: { items: [{ sku: key, mode: null }] } });
    assert.equal(
      long.json().error.message,
      'Invalid request: body field items[0].sku must be at most 8 characters long (got a string of 20 characters)',
    );
    assert.doesNotMatch(long.body, new RegExp(key));
    const mode = await server.inject({ method: 'POST', url: '/items', payload: { items: [{ sku: 'a', mode: 'x' }] } });
    assert.equal(
      mode.json().error.message,
      'Invalid request: body field items[0].mode must be one of fast, slow (or null) (got "x")',
    );
    const secret = await server.inject({
      method: 'POST',
      url: '/items',
      payload: { items: [{ sku: 'a', mode: 'fast', password: 'hunter22' }] },
    });
    assert.equal(
      secret.json().error.message,
      'Invalid request: body field items[0].password must be at most 4 characters long',
    );
    assert.doesNotMatch(secret.body, /hunter22/);
    const type = await server.inject({ method: 'POST', url: '/items', payload: { items: 'all' } });
    assert.equal(type.json().error.message, 'Invalid request: body field items must be array (got "all")');
  });

  test('tool arguments: an unknown argument is named as such, not "schema is false"', () => {
    const schema = Type.Object(
      { workspaceId: Type.String(), limit: Type.Optional(Type.Integer({ maximum: 100 })) },
      { additionalProperties: false },
    );
    const args = { workspaceId: 'w', limit: 1000, q: 'shoes' };
    const issues = [...Compile(schema).Errors(args)] as SchemaIssue[];
    assert.deepEqual(
      readableIssues(issues, 'argument', args).map((i) => i.text),
      ['unknown argument q', 'argument limit must be at most 100 (got 1000)'],
    );
  });
});
