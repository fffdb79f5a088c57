import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { Type } from 'typebox';
import { reusingSerializerFactory, schemaReuseEnabled, setSchemaReuse } from '../src/http/schema-cache.ts';
import { type App, ConfigReader, createApp, readHttpConfig } from '../src/index.ts';
import { reuseCompiledSchemas } from '../src/testing.ts';

const Body = Type.Object({ name: Type.String({ maxLength: 5 }), count: Type.Integer({ default: 1 }) });
const Reply = Type.Object({ name: Type.String(), count: Type.Integer() });
const Referenced = Type.Unsafe({ $ref: 'Thing#' });

async function build(thing: Record<string, unknown>): Promise<App> {
  const app = await createApp({
    name: 'schema-cache-test',
    version: '0.0.0',
    description: 'test',
    http: readHttpConfig(new ConfigReader({})),
    logLevel: 'silent',
  });
  app.addSchema({ $id: 'Thing', ...thing });
  app.post('/echo', { schema: { body: Body, response: { 200: Reply } } }, async (request) => {
    const body = request.body as { name: string; count: number };
    return { ...body, secret: 'never serialized' } as typeof body;
  });
  app.get('/thing', { schema: { response: { 200: Referenced } } }, async () => ({ a: 1, b: 2 }));
  await app.ready();
  return app;
}

test('schema reuse is off unless a test turns it on; with it, apps answer exactly as without it', async (t) => {
  const cache = new URL('../src/http/schema-cache.ts', import.meta.url).href;
  const fresh = execFileSync(process.execPath, [
    '--input-type=module',
    '-e',
    `console.log((await import(${JSON.stringify(cache)})).schemaReuseEnabled())`,
  ]);
  assert.equal(fresh.toString().trim(), 'false', 'production never takes the reuse path');
  // This process may share other test files' modules (`--test-isolation=none`): start from reuse off.
  const before = schemaReuseEnabled();
  setSchemaReuse(false);
  t.after(() => setSchemaReuse(before));
  const plain = await build({ type: 'object', properties: { a: { type: 'integer' } } });
  t.after(() => plain.close());
  reuseCompiledSchemas();
  assert.equal(schemaReuseEnabled(), true);
  const first = await build({ type: 'object', properties: { a: { type: 'integer' } } });
  const second = await build({ type: 'object', properties: { a: { type: 'integer' } } });
  // Same route schemas, other shared schemas: the serializer of /thing must follow this app's `Thing`.
  const other = await build({ type: 'object', properties: { b: { type: 'integer' } } });
  t.after(async () => {
    await Promise.all([first.close(), second.close(), other.close()]);
  });
  for (const app of [plain, first, second, other]) {
    const ok = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'abc' } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { name: 'abc', count: 1 }, 'defaults applied, unknown fields not serialized');
    const bad = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'too long' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(
      bad.json().error.code,
      (await plain.inject({ method: 'POST', url: '/echo', payload: { name: 'too long' } })).json().error.code,
    );
  }
  for (const app of [plain, first, second]) assert.deepEqual((await app.inject('/thing')).json(), { a: 1 });
  assert.deepEqual((await other.inject('/thing')).json(), { b: 2 });
});

test('a serializer is compiled once per response schema and set of shared schemas', () => {
  const schema = Type.Object({ x: Type.Integer() });
  const route = { method: 'GET', url: '/', httpStatus: '200', schema };
  const externalsA = { A: { $id: 'A', type: 'string' } };
  const a1 = reusingSerializerFactory(externalsA, {})(route);
  const a2 = reusingSerializerFactory({ A: { $id: 'A', type: 'string' } }, {})(route);
  assert.equal(a1, a2, 'equal shared schemas: the compiled serializer is reused');
  const b = reusingSerializerFactory({ B: { $id: 'B', type: 'string' } }, {})(route);
  assert.notEqual(a1, b, 'other shared schemas: compiled again');
  const copy = reusingSerializerFactory(externalsA, {})({ ...route, schema: Type.Object({ x: Type.Integer() }) });
  assert.notEqual(a1, copy, 'another schema object: compiled again');
  assert.equal(a1({ x: 3, y: 4 }), '{"x":3}');
});
