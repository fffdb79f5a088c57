import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { Type } from 'typebox';
import {
  type App,
  AppError,
  CoreErrors,
  createApp,
  defineMcpTool,
  McpErrorCodes,
  type McpTool,
  registerMcpEndpoint,
} from '../src/index.ts';
import { reuseCompiledSchemas } from '../src/testing.ts';

// Every test builds its own app from the same route schemas: each is compiled once.
reuseCompiledSchemas();

interface Principal {
  name: string;
  permissions: Set<string>;
}

const KEYS = new Map<string, Principal>([
  ['reader-key', { name: 'reader', permissions: new Set(['demo:read']) }],
  ['writer-key', { name: 'writer', permissions: new Set(['demo:read', 'demo:write']) }],
]);

const Echo = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: 50 }), times: Type.Integer({ minimum: 1, maximum: 5, default: 1 }) },
  { additionalProperties: false },
);

const Scoped = Type.Object({ scope: Type.String() });

/** Endpoint options a test varies: the direct tools/call answer, extra static tools, per-principal tools. */
interface Variant {
  directToolCalls?: boolean;
  extraTools?: McpTool<Principal>[];
  principalTools?: (principal: Principal) => Promise<McpTool<Principal>[]>;
}

async function buildApp(t: TestContext, variant: Variant = {}): Promise<{ app: App; url: string }> {
  const app = await createApp({
    name: 'mcp-test',
    version: '1',
    description: 'mcp test',
    http: {
      maxRequestSizeBytes: 4096,
      corsAllowedOrigins: [],
      securityHeadersEnabled: true,
      rateLimitMax: 10_000,
      rateLimitWindowMs: 60_000,
    },
    logLevel: 'silent',
  });
  await registerMcpEndpoint<Principal>(app, {
    path: '/mcp',
    serverInfo: { name: 'demo', version: '1.0.0' },
    authenticate: async (request) => {
      const header = request.headers.authorization;
      const principal = typeof header === 'string' ? KEYS.get(header.replace(/^Bearer /, '')) : undefined;
      if (!principal) throw CoreErrors.unauthorized();
      return principal;
    },
    authorize: (principal, permission) => principal.permissions.has(permission),
    tools: [
      defineMcpTool<Principal, typeof Echo>({
        name: 'demo_echo',
        description: 'Echo a text',
        inputSchema: Echo,
        permission: 'demo:read',
        run: async (args, call) => ({ echoed: args.text.repeat(args.times), by: call.principal.name }),
      }),
      defineMcpTool<Principal, typeof Echo>({
        name: 'demo_fail',
        description: 'Always a business failure',
        inputSchema: Echo,
        permission: 'demo:read',
        run: async () => {
          throw new AppError('DEMO_NOT_ALLOWED', 'that action is not in a state that allows it', 409);
        },
      }),
      defineMcpTool<Principal, typeof Echo>({
        name: 'demo_db_lost',
        description: 'Its database connection was terminated',
        inputSchema: Echo,
        permission: 'demo:read',
        run: async () => {
          throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
        },
      }),
      defineMcpTool<Principal, typeof Scoped>({
        name: 'demo_scoped',
        description: 'Only the own scope',
        inputSchema: Scoped,
        permission: 'demo:read',
        authorizeCall: async (args, call) => {
          if (args.scope !== call.principal.name)
            throw CoreErrors.forbidden(`scope ${String(args.scope).slice(0, 20)}`);
        },
        run: async (args) => ({ scope: args.scope }),
      }),
      defineMcpTool<Principal>({
        name: 'demo_write',
        description: 'Needs the write permission',
        inputSchema: Type.Object({}),
        permission: 'demo:write',
        run: async () => ({ written: true }),
      }),
      ...(variant.extraTools ?? []),
    ],
    ...(variant.directToolCalls !== undefined ? { directToolCalls: variant.directToolCalls } : {}),
    ...(variant.principalTools ? { principalTools: variant.principalTools } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp` };
}

async function connect(t: TestContext, url: string, key: string, mode: 'legacy' | 'auto' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

async function post(app: App, body: unknown, key = 'reader-key', extra: Record<string, string> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...extra,
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.statusCode, body: response.body ? response.json() : undefined, headers: response.headers };
}

describe('registerMcpEndpoint', () => {
  test('the SDK Client runs initialize → tools/list → tools/call; the list holds only the permitted tools', async (t) => {
    const { url } = await buildApp(t);
    const reader = await connect(t, url, 'reader-key');
    assert.equal(reader.getServerVersion()?.name, 'demo');
    const listed = await reader.listTools();
    assert.deepEqual(listed.tools.map((tool) => tool.name).sort(), [
      'demo_db_lost',
      'demo_echo',
      'demo_fail',
      'demo_scoped',
    ]);
    const echo = listed.tools.find((tool) => tool.name === 'demo_echo')!;
    assert.deepEqual(echo.inputSchema, JSON.parse(JSON.stringify(Echo)), 'the advertised schema is the TypeBox schema');
    const result = await reader.callTool({ name: 'demo_echo', arguments: { text: 'ab', times: 2 } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, { echoed: 'abab', by: 'reader' });

    const writer = await connect(t, url, 'writer-key');
    assert.deepEqual((await writer.listTools()).tools.map((tool) => tool.name).sort(), [
      'demo_db_lost',
      'demo_echo',
      'demo_fail',
      'demo_scoped',
      'demo_write',
    ]);
    assert.deepEqual((await writer.callTool({ name: 'demo_write', arguments: {} })).structuredContent, {
      written: true,
    });
  });

  test('a client negotiating the 2026 protocol is served from the same tools', async (t) => {
    const { url } = await buildApp(t);
    const client = await connect(t, url, 'writer-key', 'auto');
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), [
      'demo_db_lost',
      'demo_echo',
      'demo_fail',
      'demo_scoped',
      'demo_write',
    ]);
    const result = await client.callTool({ name: 'demo_echo', arguments: { text: 'x' } });
    assert.deepEqual(result.structuredContent, { echoed: 'x', by: 'writer' });
  });

  test('initialize advertises the protocol version and answers with JSON, not SSE', async (t) => {
    const { app } = await buildApp(t);
    const response = await post(app, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /application\/json/);
    assert.equal(response.body.result.protocolVersion, '2025-06-18');
    assert.deepEqual(response.body.result.capabilities.tools, {});
  });

  test('bad arguments and business failures are tool results with isError: true', async (t) => {
    const { url } = await buildApp(t);
    const client = await connect(t, url, 'reader-key');
    const invalid = await client.callTool({ name: 'demo_echo', arguments: { text: '', times: 9 } });
    assert.equal(invalid.isError, true);
    assert.match(JSON.stringify(invalid.content), /INVALID_ARGUMENTS/);
    const extra = await client.callTool({ name: 'demo_echo', arguments: { text: 'a', unknown: 1 } });
    assert.equal(extra.isError, true, 'additional properties are rejected by the same schema');
    const failed = await client.callTool({ name: 'demo_fail', arguments: { text: 'a' } });
    assert.equal(failed.isError, true);
    assert.match(JSON.stringify(failed.content), /DEMO_NOT_ALLOWED/);
  });

  test('a lost database connection is a tool result DATABASE_UNAVAILABLE, not an internal error', async (t) => {
    const { url } = await buildApp(t);
    const client = await connect(t, url, 'reader-key');
    const lost = await client.callTool({ name: 'demo_db_lost', arguments: { text: 'a' } });
    assert.equal(lost.isError, true);
    assert.match(JSON.stringify(lost.content), /DATABASE_UNAVAILABLE/);
    assert.doesNotMatch(JSON.stringify(lost.content), /administrator command/);
  });

  test('an unknown tool is a JSON-RPC -32602 error', async (t) => {
    const { app, url } = await buildApp(t);
    const client = await connect(t, url, 'reader-key');
    await assert.rejects(
      client.callTool({ name: 'nope', arguments: {} }),
      (error: { code?: number }) => error.code === -32602,
    );
    const raw = await post(app, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'nope', arguments: {} },
    });
    assert.equal(raw.body.id, 7);
    assert.equal(raw.body.error.code, -32602);
  });

  test('authentication and permission failures are JSON-RPC errors and HTTP 401/403', async (t) => {
    const { app } = await buildApp(t);
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'demo_write', arguments: {} } };
    const missing = await post(app, call, '');
    assert.equal(missing.status, 401);
    assert.deepEqual(
      { id: missing.body.id, code: missing.body.error.code },
      { id: 3, code: McpErrorCodes.unauthorized },
    );
    assert.equal(missing.body.error.data.code, 'UNAUTHORIZED');
    const wrong = await post(app, call, 'not-a-key');
    assert.equal(wrong.status, 401);
    const forbidden = await post(app, call, 'reader-key');
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, McpErrorCodes.forbidden);
    assert.match(forbidden.body.error.message, /demo:write/);
    assert.equal(typeof forbidden.body.error.data.traceId, 'string');
  });

  test('a per-call authorization failure (authorizeCall) is a JSON-RPC error and HTTP 403', async (t) => {
    const { app, url } = await buildApp(t);
    const denied = await post(app, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'demo_scoped', arguments: { scope: 'writer' } },
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, McpErrorCodes.forbidden);
    const client = await connect(t, url, 'reader-key');
    assert.deepEqual(
      (await client.callTool({ name: 'demo_scoped', arguments: { scope: 'reader' } })).structuredContent,
      { scope: 'reader' },
    );
  });

  test('the SDK client sees a rejected key as an error at connect', async (t) => {
    const { url } = await buildApp(t);
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: 'Bearer wrong' } },
    });
    await assert.rejects(client.connect(transport));
  });

  test('malformed JSON, non-JSON-RPC bodies, batches, wrong media type and oversized bodies are JSON-RPC errors', async (t) => {
    const { app } = await buildApp(t);
    const parse = await post(app, '{"jsonrpc":');
    assert.equal(parse.status, 400);
    assert.equal(parse.body.error.code, McpErrorCodes.parseError);
    assert.equal(parse.body.id, null);
    const shape = await post(app, { hello: 'world' });
    assert.equal(shape.status, 400);
    assert.equal(shape.body.error.code, McpErrorCodes.invalidRequest);
    const batch = await post(app, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
    assert.equal(batch.status, 400);
    assert.equal(batch.body.error.code, McpErrorCodes.invalidRequest);
    const media = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'text/plain', authorization: 'Bearer reader-key' },
      payload: 'x',
    });
    assert.equal(media.statusCode, 415);
    assert.equal(media.json().error.code, McpErrorCodes.invalidRequest);
    const big = await post(app, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(5000) } });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.data.code, 'PAYLOAD_TOO_LARGE');
  });

  test('a plain tools/call answered directly is byte for byte what the SDK server answers', async (t) => {
    // Tools whose failures become JSON-RPC errors (403 / 401 from run) or an internal error, and a rich result.
    const extraTools = [
      defineMcpTool<Principal>({
        name: 'demo_denied',
        description: 'Refuses inside run',
        inputSchema: Type.Object({}),
        permission: 'demo:read',
        run: async () => {
          throw CoreErrors.forbidden('demo scope');
        },
      }),
      defineMcpTool<Principal>({
        name: 'demo_expired',
        description: 'Authentication lapses inside run',
        inputSchema: Type.Object({}),
        permission: 'demo:read',
        run: async () => {
          throw CoreErrors.unauthorized();
        },
      }),
      defineMcpTool<Principal>({
        name: 'demo_crash',
        description: 'A bug',
        inputSchema: Type.Object({}),
        permission: 'demo:read',
        run: async () => {
          throw new Error('boom');
        },
      }),
      defineMcpTool<Principal>({
        name: 'demo_rich',
        description: 'Nested, unicode and null values',
        inputSchema: Type.Object({}, { additionalProperties: true }),
        permission: 'demo:read',
        run: async (args) => ({ args, list: [1, 'ü', null, { deep: [true] }], none: null, skipped: undefined }),
      }),
    ];
    const direct = (await buildApp(t, { extraTools })).app;
    const sdk = (await buildApp(t, { extraTools, directToolCalls: false })).app;
    const call = (id: unknown, name: string, args?: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, ...(args !== undefined ? { arguments: args } : {}) },
    });
    const cases: { body: unknown; headers?: Record<string, string> }[] = [
      { body: call(1, 'demo_echo', { text: 'ab', times: 2 }) },
      { body: call('req-ü', 'demo_echo', { text: 'x' }), headers: { 'mcp-protocol-version': '2025-11-25' } },
      { body: call(2, 'demo_echo', { text: 'x' }), headers: { 'mcp-protocol-version': '2024-11-05' } },
      { body: call(3, 'demo_echo') },
      { body: call(4, 'demo_echo', { text: '', times: 9 }) },
      { body: call(5, 'demo_echo', { text: 'a', unknown: 1 }) },
      { body: call(6, 'demo_fail', { text: 'a' }) },
      { body: call(7, 'demo_db_lost', { text: 'a' }) },
      { body: call(8, 'nope', {}) },
      { body: call(9, 'demo_denied', {}) },
      { body: call(10, 'demo_expired', {}) },
      { body: call(11, 'demo_crash', {}) },
      { body: call(12, 'demo_rich', { a: [1, { b: 'ç' }], c: null }) },
      { body: call(-13, 'demo_echo', { text: 'neg' }) },
      // Served by the SDK on both (not the plain form): each still answers the same.
      { body: call(14, 'demo_echo', { text: 'x' }), headers: { 'mcp-protocol-version': '1999-01-01' } },
      { body: call(1.5, 'demo_echo', { text: 'x' }) },
      { body: call(15, 'demo_echo', []) },
      {
        body: {
          ...call(16, 'demo_echo', { text: 'x' }),
          params: { name: 'demo_echo', arguments: { text: 'x' }, _meta: { progressToken: 1 } },
        },
      },
      { body: { ...call(17, 'demo_echo', { text: 'x' }), extra: true } },
      { body: { jsonrpc: '2.0', id: 18, method: 'tools/call', params: { name: 42 } } },
    ];
    // Counts the SDK servers connected, to see which cases the direct answer served (restored after the test).
    const connect = Server.prototype.connect;
    let connected = 0;
    Server.prototype.connect = function (this: Server, ...args: Parameters<Server['connect']>) {
      connected++;
      return connect.apply(this, args);
    };
    t.after(() => {
      Server.prototype.connect = connect;
    });
    const PLAIN = 14;
    for (const [index, { body, headers }] of cases.entries()) {
      const send = (app: App) =>
        app.inject({
          method: 'POST',
          url: '/mcp',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: 'Bearer reader-key',
            'x-request-id': `case-${index}`,
            ...headers,
          },
          payload: JSON.stringify(body),
        });
      connected = 0;
      const a = await send(direct);
      const directServers = connected;
      connected = 0;
      const b = await send(sdk);
      if (index < PLAIN) {
        assert.equal(directServers, 0, `case ${index}: answered without an SDK server`);
        assert.equal(connected, 1, `case ${index}: the SDK endpoint builds a server`);
      } else assert.equal(directServers, connected, `case ${index}: served by the SDK on both`);
      const view = (r: typeof a) => ({
        status: r.statusCode,
        type: r.headers['content-type'],
        version: r.headers['mcp-protocol-version'],
        body: r.body,
      });
      assert.deepEqual(view(a), view(b), `case ${index}: ${JSON.stringify(body)}`);
    }
  });

  test("a static tool's call does not load the principal's own tools; tools/list and their calls do", async (t) => {
    let loads = 0;
    const own = defineMcpTool<Principal>({
      name: 'demo_own',
      description: "The principal's own tool",
      inputSchema: Type.Object({}),
      permission: 'demo:read',
      run: async (_args, call) => ({ own: call.principal.name }),
    });
    const { app } = await buildApp(t, {
      principalTools: async () => {
        loads++;
        return [own];
      },
    });
    const echo = await post(app, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'demo_echo', arguments: { text: 'a' } },
    });
    assert.deepEqual(echo.body.result.structuredContent, { echoed: 'a', by: 'reader' });
    assert.equal(loads, 0);
    const called = await post(app, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'demo_own', arguments: {} },
    });
    assert.deepEqual(called.body.result.structuredContent, { own: 'reader' });
    assert.equal(loads, 1);
    const listed = await post(app, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    assert.ok(listed.body.result.tools.some((tool: { name: string }) => tool.name === 'demo_own'));
    assert.equal(loads, 2);
  });

  test('an unknown method is a JSON-RPC method-not-found error; a notification is accepted with 202', async (t) => {
    const { app } = await buildApp(t);
    const unknown = await post(app, { jsonrpc: '2.0', id: 9, method: 'nope/nope', params: {} });
    assert.equal(unknown.body.error.code, -32601);
    const notification = await post(app, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notification.status, 202);
  });
});
