import {
  type AuthInfo,
  type CallToolResult,
  createMcpHandler,
  INVALID_PARAMS,
  isLegacyRequest,
  ProtocolError,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { isDatabaseUnavailable } from '../db/connection-errors.ts';
import { AppError, CoreErrors } from '../errors.ts';
import { databaseUnavailable, toAppError } from '../http/error-handler.ts';
import { readableIssues, type SchemaIssue } from '../http/validation.ts';

/** JSON-RPC error codes this endpoint uses beyond the protocol's own (-32700 … -32603). */
export const McpErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  invalidParams: INVALID_PARAMS,
  unauthorized: -32001,
  forbidden: -32003,
  rateLimited: -32029,
  internal: -32603,
} as const;

/** What a tool handler is told about the call. */
export interface McpCall<P> {
  principal: P;
  /** The request id (`x-request-id`): put it in logs, never in a tool's data. */
  traceId: string;
  request: FastifyRequest;
}

/**
 * One tool: its TypeBox schema is both the advertised JSON Schema `inputSchema` and the validator applied to
 * `arguments` before `run` is called, so the two cannot drift apart.
 */
export interface McpTool<P, S extends TObject = TObject> {
  name: string;
  title?: string;
  description: string;
  inputSchema: S;
  /** Optional JSON Schema of the structured result (advertised; clients may validate results against it). */
  outputSchema?: Record<string, unknown>;
  /** The permission a principal must hold to see (`tools/list`) and call (`tools/call`) the tool. */
  permission: string;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /**
   * Optional authorization of one call from its raw arguments (e.g. "may this key use this workspace?"), run
   * before the SDK sees the request: an AppError 401/403 becomes a JSON-RPC error with that HTTP status.
   * Malformed arguments should be ignored here (the schema check reports them as a tool result).
   */
  authorizeCall?(args: Record<string, unknown>, call: McpCall<P>): Promise<void>;
  /**
   * Returns the structured result (an object). Throw an AppError for a business failure: it becomes
   * `isError: true`; a 401/403 AppError becomes a JSON-RPC error instead.
   */
  run(args: Static<S>, call: McpCall<P>): Promise<Record<string, unknown>>;
}

/** Declares a tool with `run`'s arguments typed from its schema. */
export function defineMcpTool<P, S extends TObject = TObject>(tool: McpTool<P, S>): McpTool<P> {
  return tool as unknown as McpTool<P>;
}

export interface McpEndpointOptions<P> {
  /** Route path, e.g. `/api/v1/geo/mcp`. */
  path: string;
  serverInfo: { name: string; version: string; title?: string };
  instructions?: string;
  tools: readonly McpTool<P>[];
  /**
   * Tools of one principal besides `tools` (e.g. a realm's published flows), listed and called like them; a name
   * of `tools` always wins. Their schemas are compiled once per name, description and schema (a bounded cache).
   */
  principalTools?(principal: P): Promise<readonly McpTool<P>[]>;
  /**
   * Identifies the caller from the HTTP request (headers). Throw an AppError: 401 → JSON-RPC -32001, 403 →
   * -32003, with the same HTTP status. Runs before anything of the body is acted on.
   */
  authenticate(request: FastifyRequest): Promise<P>;
  /** True when the principal holds the permission (per-tool check for `tools/list` and `tools/call`). */
  authorize(principal: P, permission: string): boolean;
  /** OpenAPI documentation of the route (tags, summary, description, security). */
  docs?: { tags?: string[]; summary?: string; description?: string; security?: Record<string, string[]>[] };
  /** Per-route Fastify config (e.g. a rate limit). */
  routeConfig?: Record<string, unknown>;
  /**
   * Answer a plain stateless 2025-era `tools/call` (see `directCallOf`) without building an SDK server and
   * transport for it: the same tool call, the same JSON-RPC answer. Default true; false sends every request
   * through the SDK (the tests compare both).
   */
  directToolCalls?: boolean;
}

interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: Record<string, unknown> };
}

function requestIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function jsonRpcError(body: unknown, code: number, message: string, data?: Record<string, unknown>): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id: requestIdOf(body), error: { code, message, ...(data ? { data } : {}) } };
}

/** The one mapper from AppError to a JSON-RPC error object (the HTTP status stays the AppError's). */
function codeFor(error: AppError): number {
  if (error.statusCode === 401) return McpErrorCodes.unauthorized;
  if (error.statusCode === 403) return McpErrorCodes.forbidden;
  if (error.statusCode === 429) return McpErrorCodes.rateLimited;
  if (error.code === 'INVALID_JSON') return McpErrorCodes.parseError;
  if (error.statusCode >= 500) return McpErrorCodes.internal;
  return McpErrorCodes.invalidRequest;
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const exposed = error.statusCode < 500;
  const message = exposed ? error.message : 'Internal Server Error';
  if (error.headers) reply.headers(error.headers);
  return reply
    .status(error.statusCode)
    .header('content-type', 'application/json; charset=utf-8')
    .send(
      jsonRpcError(request.body, codeFor(error), message, {
        code: exposed ? error.code : 'INTERNAL',
        traceId: request.id,
      }),
    );
}

function textResult(payload: unknown, isError: boolean): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(payload) }] };
  if (isError) result.isError = true;
  else result.structuredContent = payload as Record<string, unknown>;
  return result;
}

interface CompiledTool<P> {
  tool: McpTool<P>;
  check(value: unknown): boolean;
  errors(value: unknown): SchemaIssue[];
  advertised: Record<string, unknown>;
}

function compileTool<P>(tool: McpTool<P>): CompiledTool<P> {
  const validator = Compile(tool.inputSchema);
  // A plain JSON copy: what `tools/list` advertises is exactly the validated schema.
  const inputSchema = JSON.parse(JSON.stringify(tool.inputSchema)) as Record<string, unknown>;
  return {
    tool,
    check: (value) => validator.Check(value),
    errors: (value) =>
      [...validator.Errors(value)].map((e) => ({
        keyword: e.keyword,
        instancePath: e.instancePath,
        params: e.params as Record<string, unknown>,
        message: e.message,
      })),
    advertised: {
      name: tool.name,
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    },
  };
}

/** Protocol versions of the 2025 era (`initialize` → `tools/call`), the ones a direct call may name. */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function keysWithin(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false;
  return true;
}

/**
 * A `tools/call` the endpoint answers itself, without an SDK server: only the plainest stateless 2025-era form —
 * `{jsonrpc, id, method, params: {name, arguments?}}` with a string or integer id, a string name, an object (or
 * no) `arguments`, no `_meta` (no progress token, no 2026-07-28 envelope claim) and no or a 2025-era
 * `MCP-Protocol-Version` header. The SDK would validate exactly that and hand `name` and `arguments` to the same
 * `tools/call` handler; its answer is `{result, jsonrpc, id}` or `{jsonrpc, id, error}` with HTTP 200 and
 * `application/json`, which is what the direct answer is. Anything else (initialize, tools/list, notifications,
 * `_meta`, extra members, other versions) goes through the SDK.
 */
function directCallOf(
  request: FastifyRequest,
  body: Record<string, unknown>,
): { id: string | number; name: string; args: Record<string, unknown> | undefined } | undefined {
  if (body.method !== 'tools/call' || !keysWithin(body, ['jsonrpc', 'id', 'method', 'params'])) return undefined;
  const { id, params } = body;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !(typeof version === 'string' && LEGACY_VERSIONS.has(version))) return undefined;
  if (!isPlainObject(params) || !keysWithin(params, ['name', 'arguments'])) return undefined;
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || (args !== undefined && !isPlainObject(args))) return undefined;
  return { id: id as string | number, name, args };
}

const PRINCIPAL = Symbol('keel.mcp.principal');
interface PrincipalCarrier<P> {
  [PRINCIPAL]?: { principal: P; request: FastifyRequest; tools: ReadonlyMap<string, CompiledTool<P>> };
}

/**
 * Mounts a stateless MCP tool endpoint (official SDK, v2 packages) on a Fastify app: every POST gets a fresh
 * server and transport and a JSON (never SSE) response. 2025-era clients (`initialize` → `tools/list` →
 * `tools/call`) and 2026-07-28 clients (per-request envelope) are both served from one tool list.
 *
 * - `authenticate` runs first: a failure is a JSON-RPC error object with the HTTP status of the AppError (401/403).
 * - `tools/list` lists only the tools the principal may call.
 * - `tools/call` of a tool the principal may not call: JSON-RPC -32003 and HTTP 403; of an unknown tool:
 *   JSON-RPC -32602 (HTTP 200, as the protocol says).
 * - Arguments that fail the tool's schema and AppErrors thrown by `run` are tool results with `isError: true`.
 * - Malformed JSON → -32700 / HTTP 400; a body that is not a JSON-RPC message, or a batch → -32600 / HTTP 400.
 */
export async function registerMcpEndpoint<P>(app: FastifyInstance, options: McpEndpointOptions<P>): Promise<void> {
  const compiled = new Map(options.tools.map((tool) => [tool.name, compileTool(tool)]));
  if (compiled.size !== options.tools.length) throw new Error('MCP tool names must be unique');
  const perPrincipal = new Map<string, CompiledTool<P>>();
  /** The tools a principal reaches: the static ones and its own (`principalTools`). */
  const toolsOf = async (principal: P): Promise<ReadonlyMap<string, CompiledTool<P>>> => {
    const extra = options.principalTools ? await options.principalTools(principal) : [];
    if (extra.length === 0) return compiled;
    const all = new Map(compiled);
    for (const tool of extra) {
      if (all.has(tool.name)) continue;
      const key = JSON.stringify([tool.name, tool.description, tool.inputSchema, tool.outputSchema ?? null]);
      let entry = perPrincipal.get(key);
      if (!entry) {
        entry = compileTool(tool);
        if (perPrincipal.size >= 1000) perPrincipal.delete(perPrincipal.keys().next().value!);
        perPrincipal.set(key, entry);
      }
      // The compiled validator is shared; `run` is this principal's.
      all.set(tool.name, { ...entry, tool });
    }
    return all;
  };

  type Carrier = { principal: P; request: FastifyRequest; tools: ReadonlyMap<string, CompiledTool<P>> };

  /** One `tools/call`: the result, or a ProtocolError (unknown tool, 401/403) that becomes a JSON-RPC error. */
  const callTool = async (carrier: Carrier, name: string, rawArgs: unknown): Promise<CallToolResult> => {
    const entry = carrier.tools.get(name);
    if (!entry) throw new ProtocolError(INVALID_PARAMS, `Unknown tool: ${name.slice(0, 100)}`);
    if (!options.authorize(carrier.principal, entry.tool.permission)) {
      // Pre-screened with HTTP 403 before the call is served; this is the second line of defence.
      throw new ProtocolError(McpErrorCodes.forbidden, `The credential lacks the permission ${entry.tool.permission}`);
    }
    const args = Value.Default(entry.tool.inputSchema, structuredClone(rawArgs ?? {}));
    if (!entry.check(args)) {
      const problems = readableIssues(entry.errors(args), 'argument', args).slice(0, 10);
      const summary = problems.map((p) => p.text).join('; ');
      const details = problems.map(({ path, message }) => ({ path, message }));
      return textResult(
        { error: { code: 'INVALID_ARGUMENTS', message: `Invalid arguments: ${summary}`, details } },
        true,
      );
    }
    try {
      const result = await entry.tool.run(args as never, {
        principal: carrier.principal,
        traceId: carrier.request.id,
        request: carrier.request,
      });
      return textResult(result, false);
    } catch (error) {
      const appError =
        error instanceof AppError ? error : isDatabaseUnavailable(error) ? databaseUnavailable() : undefined;
      if (appError && (appError.statusCode === 401 || appError.statusCode === 403)) {
        throw new ProtocolError(codeFor(appError), appError.message, {
          code: appError.code,
          traceId: carrier.request.id,
        });
      }
      if (appError && (appError.statusCode < 500 || appError.code === 'DATABASE_UNAVAILABLE')) {
        return textResult({ error: { code: appError.code, message: appError.message } }, true);
      }
      carrier.request.log.error({ err: error, tool: name }, 'MCP tool failed');
      return textResult(
        { error: { code: 'INTERNAL', message: 'Internal Server Error', traceId: carrier.request.id } },
        true,
      );
    }
  };

  const buildServer = (carrier: Carrier): Server => {
    const compiled = carrier.tools;
    const server = new Server(
      {
        name: options.serverInfo.name,
        version: options.serverInfo.version,
        ...(options.serverInfo.title ? { title: options.serverInfo.title } : {}),
      },
      { capabilities: { tools: {} }, ...(options.instructions ? { instructions: options.instructions } : {}) },
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: [...compiled.values()]
        .filter((entry) => options.authorize(carrier.principal, entry.tool.permission))
        .map((entry) => entry.advertised) as never,
    }));
    server.setRequestHandler('tools/call', (request) =>
      callTool(carrier, request.params.name, request.params.arguments),
    );
    return server;
  };

  const modern = createMcpHandler(
    (ctx) => {
      const carrier = (ctx.authInfo?.extra as PrincipalCarrier<P> | undefined)?.[PRINCIPAL];
      if (!carrier) throw new Error('MCP request without an authenticated principal');
      return buildServer(carrier);
    },
    // 'auto' answers with one JSON body unless a handler emits a message before its result, which ours never do.
    { legacy: 'reject', responseMode: 'auto' },
  );
  app.addHook('onClose', async () => modern.close());

  await app.register(async (scope) => {
    // JSON-RPC endpoints answer every failure (bad JSON, 413, 415, 429, auth) as a JSON-RPC error object.
    scope.setErrorHandler((error, request, reply) => {
      const appError = toAppError(error, app.initialConfig.bodyLimit ?? 1_048_576);
      if (appError.statusCode >= 500) request.log.error({ err: error }, 'MCP endpoint failed');
      return sendError(request, reply, appError);
    });

    scope.post(
      options.path,
      {
        schema: { ...(options.docs ?? {}) },
        ...(options.routeConfig ? { config: options.routeConfig } : {}),
      },
      async (request, reply) => {
        const principal = await options.authenticate(request);
        const body = request.body as Record<string, unknown> | unknown[] | null | undefined;
        // A call of a static tool never needs the principal's own tools (a name of `tools` always wins).
        const calledName =
          body && !Array.isArray(body) && body.method === 'tools/call'
            ? (body.params as { name?: unknown } | undefined)?.name
            : undefined;
        const tools = typeof calledName === 'string' && compiled.has(calledName) ? compiled : await toolsOf(principal);
        if (Array.isArray(body)) {
          return sendError(
            request,
            reply,
            CoreErrors.badRequest('JSON-RPC batches are not supported; send one message per request'),
          );
        }
        if (!body || typeof body !== 'object' || body.jsonrpc !== '2.0') {
          return sendError(
            request,
            reply,
            CoreErrors.badRequest('The body must be a JSON-RPC 2.0 message ({"jsonrpc":"2.0",…})'),
          );
        }
        if (body.method === 'tools/call') {
          const name = (body.params as { name?: unknown } | undefined)?.name;
          const entry = typeof name === 'string' ? tools.get(name) : undefined;
          if (entry && !options.authorize(principal, entry.tool.permission)) {
            return sendError(request, reply, CoreErrors.forbidden(entry.tool.permission));
          }
          const args = (body.params as { arguments?: unknown } | undefined)?.arguments;
          if (entry?.tool.authorizeCall && args !== null && typeof args === 'object' && !Array.isArray(args)) {
            try {
              await entry.tool.authorizeCall(args as Record<string, unknown>, {
                principal,
                traceId: request.id,
                request,
              });
            } catch (error) {
              if (error instanceof AppError && (error.statusCode === 401 || error.statusCode === 403))
                return sendError(request, reply, error);
              throw error;
            }
          }
        }

        const carrier = { principal, request, tools };
        const direct = options.directToolCalls === false ? undefined : directCallOf(request, body);
        if (direct) {
          let answer: Record<string, unknown>;
          try {
            answer = { result: await callTool(carrier, direct.name, direct.args), jsonrpc: '2.0', id: direct.id };
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error;
            const { code, message, data } = error;
            answer = {
              jsonrpc: '2.0',
              id: direct.id,
              error: { code, message, ...(data !== undefined ? { data } : {}) },
            };
          }
          return reply.status(200).header('content-type', 'application/json').send(JSON.stringify(answer));
        }
        const url = `http://${request.hostname || 'localhost'}${request.url}`;
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string' && name !== 'content-length' && name !== 'host') headers.set(name, value);
        }
        // Responses are always JSON, so a client that asks only for one of the two media types is still served.
        headers.set('accept', 'application/json, text/event-stream');
        headers.set('content-type', 'application/json');
        const webRequest = new Request(url, { method: 'POST', headers });
        const authInfo: AuthInfo = {
          token: 'redacted',
          clientId: 'keel',
          scopes: [],
          extra: { [PRINCIPAL]: carrier } as never,
        };

        let response: Response;
        if (await isLegacyRequest(webRequest, body)) {
          const server = buildServer(carrier);
          const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: undefined,
            enableJsonResponse: true,
          });
          try {
            await server.connect(transport);
            response = await transport.handleRequest(webRequest, { parsedBody: body, authInfo });
          } finally {
            await server.close().catch(() => undefined);
          }
        } else {
          response = await modern.fetch(webRequest, { parsedBody: body, authInfo });
        }

        reply.status(response.status);
        const contentType = response.headers.get('content-type');
        if (contentType) reply.header('content-type', contentType);
        const protocolVersion = response.headers.get('mcp-protocol-version');
        if (protocolVersion) reply.header('mcp-protocol-version', protocolVersion);
        const text = await response.text();
        return reply.send(text.length > 0 ? text : null);
      },
    );
  });
}
