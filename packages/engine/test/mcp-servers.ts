// Real MCP servers for the tool-server tests, built on the official SDK (`Server` from @modelcontextprotocol/server)
// and listening on 127.0.0.1: streamable HTTP (stateless, one SDK transport per request) and SSE (a GET stream plus
// POSTed messages, the SDK server connected to a minimal SSE transport). Tests change `state` to inject failures,
// latency, credential changes and contract changes.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';

export interface FakeTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The structured result (default: echoes the arguments with the server's label). */
  run?: (args: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Asks the client during the call (sampling, elicitation through `ctx.mcpReq`); its value is the structured
   * result, a thrown error's message becomes `{error}`. Needs SSE or `stateful` streamable HTTP.
   */
  interact?: (ctx: any, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export interface FakeServerState {
  tools: FakeTool[];
  resources: { uri: string; name: string; text: string }[];
  templates: { uriTemplate: string; name: string }[];
  /** Accepted credentials (X-API-Key or bearer); empty = no authentication. */
  keys: Set<string>;
  /** OAuth clients of the token endpoint `POST /token`: client id → client secret. */
  oauthClients: Map<string, string>;
  /** Answer every POST with this HTTP status instead of serving it. */
  failStatus: number | null;
  /** Fail only tools/call with this status (initialize and lists still work). */
  failCalls: number | null;
  /** Answer this many next tools/call requests with 503 (each recorded in `calls` with `failed: true`). */
  failNextCalls: number;
  delayMs: number;
}

export interface FakeServer {
  url: string;
  label: string;
  state: FakeServerState;
  /** tools/call requests served (`meta`: the request's `_meta`); refused ones only with `failNextCalls`. */
  calls: { name: string; args: Record<string, unknown>; meta?: Record<string, unknown>; failed?: true }[];
  /** The W3C `traceparent` header of every request that carried one. */
  traceparents: string[];
  close(): Promise<void>;
}

const lookupTool: FakeTool = {
  name: 'lookup_stock',
  description: 'Look up the stock level of a SKU',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string', minLength: 1, maxLength: 64 } },
    required: ['sku'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
};

/** A write tool (not read-only): reserves units of a SKU. */
export const reserveTool = {
  name: 'reserve_stock',
  description: 'Reserve units of a SKU',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
    required: ['sku', 'quantity'],
  },
  annotations: { readOnlyHint: false, destructiveHint: false },
};

/** The default tool set: one read-only lookup. */
export function defaultTools(): FakeTool[] {
  return [structuredClone(lookupTool)];
}

function buildServer(server: FakeServer): Server {
  const sdk = new Server(
    { name: `fake-${server.label}`, version: '1.0.0' },
    { capabilities: { tools: {}, resources: {} } },
  );
  sdk.setRequestHandler('tools/list', async () => ({
    tools: server.state.tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      inputSchema: (tool.inputSchema ?? { type: 'object', properties: {} }) as never,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    })),
  }));
  sdk.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = server.state.tools.find((t) => t.name === request.params.name);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const meta = request.params._meta as Record<string, unknown> | undefined;
    server.calls.push({ name: request.params.name, args, ...(meta ? { meta } : {}) });
    if (!tool) return { content: [{ type: 'text', text: 'unknown tool' }], isError: true };
    const result = tool.interact
      ? await tool.interact(ctx, args).catch((error: Error & { code?: number }) => ({
          error: error.message,
          code: error.code ?? null,
        }))
      : tool.run
        ? tool.run(args)
        : { server: server.label, tool: tool.name, echo: args };
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  });
  sdk.setRequestHandler('resources/list', async () => ({
    resources: server.state.resources.map((r) => ({ uri: r.uri, name: r.name, mimeType: 'text/plain' })),
  }));
  sdk.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: server.state.templates.map((r) => ({ uriTemplate: r.uriTemplate, name: r.name })),
  }));
  sdk.setRequestHandler('resources/read', async (request) => {
    const known = server.state.resources.find((r) => r.uri === request.params.uri);
    return {
      contents: [
        { uri: request.params.uri, mimeType: 'text/plain', text: known?.text ?? `templated ${request.params.uri}` },
      ],
    };
  });
  return sdk;
}

function authorized(state: FakeServerState, headers: http.IncomingHttpHeaders): boolean {
  if (state.keys.size === 0) return true;
  const key = headers['x-api-key'];
  const bearer = headers.authorization?.replace(/^Bearer /, '');
  return (typeof key === 'string' && state.keys.has(key)) || (bearer !== undefined && state.keys.has(bearer));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts an MCP server on 127.0.0.1 (`http`: streamable HTTP at /mcp; `sse`: GET /sse + POST /messages). */
export async function startMcpServer(
  t: TestContext | undefined,
  options: {
    transport?: 'http' | 'sse';
    label?: string;
    tools?: FakeTool[];
    keys?: string[];
    port?: number;
    /** Streamable HTTP with sessions and SSE responses (the server can ask the client during a call). */
    stateful?: boolean;
    /** Serve HTTPS with this certificate and require a client certificate issued by `ca` (mTLS). */
    tls?: { cert: string; key: string; ca: string };
  } = {},
): Promise<FakeServer> {
  const transport = options.transport ?? 'http';
  const server: FakeServer = {
    url: '',
    label: options.label ?? transport,
    state: {
      tools: options.tools ?? defaultTools(),
      resources: [{ uri: 'inventory://warehouses/main', name: 'Main warehouse', text: 'aisle 4' }],
      templates: [{ uriTemplate: 'inventory://skus/{sku}', name: 'SKU record' }],
      keys: new Set(options.keys ?? []),
      oauthClients: new Map(),
      failStatus: null,
      failCalls: null,
      failNextCalls: 0,
      delayMs: 0,
    },
    calls: [],
    traceparents: [],
    close: async () => undefined,
  };
  const streams = new Map<string, { res: http.ServerResponse; deliver: (message: unknown) => void }>();
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  const handler = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = server.state;
    if (typeof req.headers.traceparent === 'string') server.traceparents.push(req.headers.traceparent);
    const body = req.method === 'POST' ? await readBody(req) : '';
    if (state.delayMs > 0) await sleep(state.delayMs);
    if (req.method === 'POST' && req.url === '/token') {
      // OAuth client credentials: the client secret must be one of `oauthClients`; the token becomes an accepted key.
      const form = new URLSearchParams(body);
      const secret = state.oauthClients.get(form.get('client_id') ?? '');
      if (form.get('grant_type') !== 'client_credentials' || !secret || secret !== form.get('client_secret')) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
        return;
      }
      const token = `oauth-${randomUUID()}`;
      state.keys.add(token);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: token, expires_in: 300 }));
      return;
    }
    if (!authorized(state, req.headers)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (state.failStatus !== null && req.method === 'POST') {
      res.writeHead(state.failStatus, { 'content-type': 'application/json' }).end('{"error":"injected"}');
      return;
    }
    const parsed = body ? JSON.parse(body) : undefined;
    if (state.failNextCalls > 0 && parsed?.method === 'tools/call') {
      state.failNextCalls -= 1;
      server.calls.push({
        name: parsed.params?.name,
        args: parsed.params?.arguments ?? {},
        ...(parsed.params?._meta ? { meta: parsed.params._meta } : {}),
        failed: true,
      });
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"injected"}');
      return;
    }
    if (state.failCalls !== null && parsed?.method === 'tools/call') {
      res.writeHead(state.failCalls, { 'content-type': 'application/json' }).end('{"error":"injected"}');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (transport === 'http' && options.stateful && url.pathname === '/mcp') {
      const sessionId = req.headers['mcp-session-id'];
      let web = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!web) {
        web = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, web!),
        });
        await buildServer(server).connect(web);
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && name !== 'content-length' && name !== 'host') headers.set(name, value);
      const response = await web.handleRequest(
        new Request(`http://127.0.0.1${req.url}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'POST' ? { body } : {}),
        }),
        req.method === 'POST' ? { parsedBody: parsed } : undefined,
      );
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (!response.body) return void res.end();
      const reader = response.body.getReader();
      res.on('close', () => void reader.cancel().catch(() => undefined));
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (chunk.done) break;
        res.write(chunk.value);
      }
      res.end();
      return;
    }
    if (transport === 'http' && req.method === 'POST' && url.pathname === '/mcp') {
      const sdk = buildServer(server);
      const web = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await sdk.connect(web);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && name !== 'content-length' && name !== 'host') headers.set(name, value);
      const response = await web.handleRequest(
        new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body }),
        {
          parsedBody: parsed,
        },
      );
      const text = await response.text();
      res.writeHead(response.status, Object.fromEntries(response.headers.entries())).end(text);
      await sdk.close().catch(() => undefined);
      return;
    }
    if (transport === 'sse' && req.method === 'GET' && url.pathname === '/sse') {
      const sessionId = randomUUID();
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      res.write(`event: endpoint\ndata: /messages?sessionId=${sessionId}\n\n`);
      const sdk = buildServer(server);
      const sse = {
        onmessage: undefined as ((message: unknown) => void) | undefined,
        onclose: undefined as (() => void) | undefined,
        onerror: undefined as ((error: Error) => void) | undefined,
        sessionId,
        async start() {},
        async send(message: unknown) {
          res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
        },
        async close() {
          res.end();
        },
      };
      streams.set(sessionId, { res, deliver: (message) => sse.onmessage?.(message) });
      req.on('close', () => {
        streams.delete(sessionId);
        sse.onclose?.();
      });
      await sdk.connect(sse as never);
      return;
    }
    if (transport === 'sse' && req.method === 'POST' && url.pathname === '/messages') {
      const stream = streams.get(url.searchParams.get('sessionId') ?? '');
      if (!stream) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(202).end('Accepted');
      stream.deliver(parsed);
      return;
    }
    res.writeHead(404).end();
  };
  const httpServer = options.tls
    ? https.createServer({ ...options.tls, requestCert: true, rejectUnauthorized: true }, handler)
    : http.createServer(handler);
  await new Promise<void>((resolve) => httpServer.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;
  const origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  server.url = transport === 'sse' ? `${origin}/sse` : `${origin}/mcp`;
  server.close = () =>
    new Promise<void>((resolve) => {
      for (const stream of streams.values()) stream.res.end();
      httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    });
  t?.after(server.close);
  return server;
}
