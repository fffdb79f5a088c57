import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactOpenApi, openApiPart } from '../src/index.ts';

const money = {
  type: 'object',
  description: 'An amount in a currency, with its exact decimal text and its three-letter ISO 4217 code',
  properties: { amount: { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,2})?$' }, currency: { type: 'string' } },
  required: ['amount', 'currency'],
};
const body = (extra: string) => ({
  content: {
    'application/json': {
      schema: { type: 'object', properties: { [extra]: { type: 'string' }, price: structuredClone(money) } },
    },
  },
});
const documentOf = () => ({
  openapi: '3.1.0',
  paths: {
    '/api/v1/catalog/products': { post: { requestBody: body('name'), responses: { '201': { description: 'ok' } } } },
    '/api/v1/runtime/offers': { post: { requestBody: body('title'), responses: { '201': { description: 'ok' } } } },
  },
  components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
});

test('a schema repeated in two operations is written once under components.schemas and referenced', () => {
  const doc = compactOpenApi(documentOf()) as any;
  const schemas = doc.components.schemas;
  assert.equal(Object.keys(schemas).length, 1);
  const [name] = Object.keys(schemas);
  assert.deepEqual(schemas[name], money);
  for (const path of ['/api/v1/catalog/products', '/api/v1/runtime/offers'])
    assert.deepEqual(doc.paths[path].post.requestBody.content['application/json'].schema.properties.price, {
      $ref: `#/components/schemas/${name}`,
    });
  // A schema seen once stays inline.
  assert.deepEqual(
    doc.paths['/api/v1/catalog/products'].post.requestBody.content['application/json'].schema.properties.name,
    { type: 'string' },
  );
});

test('an area part keeps its operations under relative paths and only the components they reach', () => {
  const whole = compactOpenApi(documentOf()) as any;
  whole.components.schemas.Unused = { type: 'object', description: 'reached by nothing' };
  const part = openApiPart(whole, { prefix: '/api/v1/catalog' }) as any;
  assert.deepEqual(Object.keys(part.paths), ['/products']);
  assert.deepEqual(part.servers, [{ url: '/api/v1/catalog' }]);
  assert.ok(!('Unused' in part.components.schemas));
  assert.equal(Object.keys(part.components.schemas).length, 1);
  assert.ok(part.components.securitySchemes.bearerAuth);
  const rest = openApiPart(whole, { prefix: '/api', exclude: ['/api/v1/catalog'] }) as any;
  assert.deepEqual(Object.keys(rest.paths), ['/v1/runtime/offers']);
});
