// The Runtime group of the public tool endpoint: realm-bound tools authenticated with X-Engine-Realm-ID,
// X-Engine-Access-Key and X-Engine-Secret-Key (a realm service identity's key pair).
import { createHash } from 'node:crypto';
import { createError, defineMcpTool, type McpTool } from '@keel/core';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Uuid } from '../http/schemas.ts';
import { exchangeToken, register, whoAmI } from '../identity/identity-service.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import type { Principal } from '../merchants/principal.ts';
import { listProviders } from '../providers/provider-service.ts';
import { runTurn } from '../runtime/orchestrator.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { executeTool } from '../toolservers/tool-execution-service.ts';
import { toolRuntimeOf } from '../toolservers/tool-runtime-registry.ts';
import { usageSummary } from '../usage/usage-service.ts';

/** A caller of the Runtime group: the realm service identity behind the three headers. */
export interface RealmCaller {
  kind: 'realm';
  principal: RuntimePrincipal;
  /** A bearer token of the caller (for `engine_api_request`, which calls the REST routes with the caller's rights). */
  token: string;
  expiresIn: number;
}

/** Who calls the public endpoint: a merchant key (catalog groups) or realm credentials (Runtime group). */
export type EndpointCaller = Principal | RealmCaller;

export const RUNTIME_PERMISSION = 'runtime';

export const RuntimeMcpErrors = {
  headersIncomplete: createError(
    'MCP_REALM_CREDENTIALS_INCOMPLETE',
    'Realm-bound tools need X-Engine-Realm-ID, X-Engine-Access-Key and X-Engine-Secret-Key together',
    401,
  ),
  realmMismatch: createError(
    'MCP_REALM_MISMATCH',
    'X-Engine-Realm-ID does not match the realm of the credentials',
    403,
  ),
  pathRefused: createError('MCP_API_PATH_REFUSED', '%s', 400),
};

export function isRealmCaller(caller: EndpointCaller): caller is RealmCaller {
  return (caller as RealmCaller).kind === 'realm';
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Authenticates realm credentials when any of the three headers is sent (all three are then required): the key
 * pair is checked like a token exchange and the realm id must be the credentials' realm (403 otherwise).
 * Undefined when none is sent (the merchant key decides).
 */
export async function authenticateRealmCaller(
  rt: RuntimeContext,
  request: FastifyRequest,
): Promise<RealmCaller | undefined> {
  const realmId = header(request, 'x-engine-realm-id');
  const accessKey = header(request, 'x-engine-access-key');
  const secretKey = header(request, 'x-engine-secret-key');
  if (!realmId && !accessKey && !secretKey) return undefined;
  if (!realmId || !accessKey || !secretKey || accessKey.length > 128 || secretKey.length > 256)
    throw RuntimeMcpErrors.headersIncomplete();
  const issued = await issuedToken(rt, accessKey, secretKey);
  if (issued.realmId === null || issued.realmId !== realmId.toLowerCase()) throw RuntimeMcpErrors.realmMismatch();
  // The token is verified on every request (signature, expiry, key standing: a revoked key fails at once).
  const principal = await rt.principals.authenticate(`Bearer ${issued.token}`);
  const expiresIn = Math.max(0, Math.round((issued.expiresAt - rt.clock()) / 1000));
  return { kind: 'realm', principal, token: issued.token, expiresIn };
}

interface IssuedToken {
  token: string;
  realmId: string | null;
  expiresAt: number;
  reuseUntil: number;
}
const issuedTokens = new WeakMap<RuntimeContext, Map<string, IssuedToken>>();

/**
 * A token for the key pair: a fresh exchange, or one issued to the same pair within the last minute (keyed by the
 * SHA-256 of the pair, never the secret itself). Reuse is safe because the token's key standing is checked on every
 * request; a wrong secret is a different key and always goes through the exchange (401).
 */
async function issuedToken(rt: RuntimeContext, accessKey: string, secretKey: string): Promise<IssuedToken> {
  let cache = issuedTokens.get(rt);
  if (!cache) {
    cache = new Map();
    issuedTokens.set(rt, cache);
  }
  const key = createHash('sha256').update(`${accessKey}\n${secretKey}`).digest('base64url');
  const now = rt.clock();
  const hit = cache.get(key);
  if (hit && hit.reuseUntil > now) return hit;
  const exchanged = await exchangeToken(rt, accessKey, secretKey);
  const lifetimeMs = exchanged.expires_in * 1000;
  const issued = {
    token: exchanged.access_token,
    realmId: exchanged.realm_id,
    expiresAt: now + lifetimeMs,
    reuseUntil: now + Math.min(60_000, lifetimeMs / 2),
  };
  if (cache.size >= 10_000) cache.clear();
  cache.set(key, issued);
  return issued;
}

/** REST paths `engine_api_request` may reach: the runtime's own routes (never the catalog, token or sign-up routes). */
const API_PATH =
  /^\/api\/v1\/(?:runtime|realms|users|usages|data|observability|governance|integrations|sdk\/config|auth\/is-authenticated|auth\/keys)(?:\/[A-Za-z0-9._~:@!$'()*+,;=-]+)*\/?$/;

function checkApiPath(path: string): void {
  if (path.includes('..') || path.includes('%') || path.includes('\\') || !API_PATH.test(path))
    throw RuntimeMcpErrors.pathRefused(
      'path must be a runtime REST path of this engine (/api/v1/runtime/…, /api/v1/realms/…, /api/v1/users/…, …); catalog, token and registration routes are not reachable through this tool',
    );
}

const Text = Type.String({ minLength: 1, maxLength: 20_000 });
const Scalar = Type.Union([Type.String({ maxLength: 2048 }), Type.Number(), Type.Boolean()]);
const open = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });
const args = <P extends Parameters<typeof Type.Object>[0]>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });
const realm = (caller: EndpointCaller): RealmCaller => caller as RealmCaller;

/** The Runtime group's tools; `inject` runs a request against the engine's REST app. */
export function runtimeGroupTools(
  rt: RuntimeContext,
  inject: (options: {
    method: string;
    url: string;
    headers: Record<string, string>;
    payload?: string;
  }) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>,
): McpTool<EndpointCaller>[] {
  return [
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_api_request',
      title: 'Call a runtime REST route',
      description:
        "Calls one of this realm's runtime REST routes (/api/v1/runtime/…, /api/v1/realms/…, /api/v1/users/…) with the caller's own rights, as if it had sent its bearer token. Catalog, token and registration routes are not reachable. Answers the HTTP status and JSON body.",
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      inputSchema: args({
        method: Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m))),
        path: Type.String({ minLength: 8, maxLength: 2048, description: 'e.g. /api/v1/runtime/providers' }),
        query: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Scalar, { maxProperties: 20 })),
        body: Type.Optional(open),
      }),
      async run(input, call) {
        const { method, path, query, body } = input as {
          method: string;
          path: string;
          query?: Record<string, unknown>;
          body?: unknown;
        };
        checkApiPath(path);
        const search = new URLSearchParams(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)])).toString();
        const response = await inject({
          method,
          url: search ? `${path}?${search}` : path,
          headers: {
            authorization: `Bearer ${realm(call.principal).token}`,
            'x-request-id': call.traceId,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
        });
        let parsed: unknown = null;
        try {
          parsed = response.body ? JSON.parse(response.body) : null;
        } catch {
          parsed = response.body.slice(0, 10_000);
        }
        return { status: response.statusCode, body: parsed as never };
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_mcp_authenticate',
      title: 'Check the realm credentials',
      description:
        'Validates the X-Engine-* credentials and answers the identity context (realm, identity, type, role) and a short-lived bearer token for the REST API (never stored or logged).',
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: args({}),
      async run(_input, call) {
        const caller = realm(call.principal);
        return {
          ...(await whoAmI(rt, caller.principal)),
          access_token: caller.token,
          expires_in: caller.expiresIn,
          token_type: 'Bearer',
        };
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_auth_register',
      title: 'Register an identity',
      description:
        'POST /api/v1/auth/register as a tool: creates an identity (and optionally a realm it owns) with a first key pair, shown once. Only when registration is enabled on the engine (ENGINE_REGISTRATION_ENABLED).',
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      inputSchema: args({
        username: Type.String({ minLength: 1, maxLength: 255 }),
        user_type: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('service')])),
        realm_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      }),
      async run(input) {
        return register(rt, input as never) as never;
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_runtime_ai_chat',
      title: 'Chat with an agent',
      description:
        'POST /api/v1/runtime/ai/chat as a tool: the same resolver, policy, idempotency and result (content, normalized action, execution and session ids, trace id, routing diagnostics). With session_id send only the new turn(s) and the resume_token.',
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      inputSchema: args({
        agent_id: Uuid(),
        messages: Type.Array(
          Type.Object(
            { role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Text },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 50 },
        ),
        session_id: Type.Optional(Uuid()),
        resume_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
        flow_id: Type.Optional(Uuid()),
        idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      }),
      async run(input, call) {
        const body = input as {
          agent_id: string;
          messages: { role: 'user' | 'assistant'; content: string }[];
          session_id?: string;
          resume_token?: string;
          flow_id?: string;
          idempotency_key?: string;
        };
        const outcome = await runTurn(
          rt,
          realm(call.principal).principal,
          {
            kind: 'chat',
            agentId: body.agent_id,
            flowId: body.flow_id,
            sessionId: body.session_id,
            resumeToken: body.resume_token,
            messages: body.messages,
            messagePath: (index) => `arguments/messages/${index}/content`,
            idempotencyKey: body.idempotency_key,
            payload: body,
          },
          call.traceId,
        );
        return { ...(outcome.body as unknown as Record<string, unknown>), idempotent_replayed: outcome.replayed };
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_runtime_list_providers',
      title: 'List model providers',
      description: "The realm's providers (metadata only: api keys are never returned), newest first, paginated.",
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: args({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 64 })),
        is_active: Type.Optional(Type.Boolean()),
      }),
      async run(input, call) {
        const query = input as { limit?: number; cursor?: string; is_active?: boolean };
        return listProviders(rt, realm(call.principal).principal, { ...query, limit: query.limit ?? 20 }) as never;
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_runtime_mcp_execute_tool',
      title: 'Execute a registered tool',
      description:
        'POST /api/v1/runtime/mcp/tools/execute as a tool: routes and executes one approved tool of a registered MCP server, failing closed (unknown or unapproved tools, invalid arguments, high-impact tools, servers not attached to the session agent). Answers {mcp_server_id, tool_name, result, trace_id, attempts}.',
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      inputSchema: args({
        tool_name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' }),
        arguments: Type.Optional(open),
        session_id: Type.Optional(Uuid()),
        resume_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
        strategy: Type.Optional(
          Type.Union([Type.Literal('registry'), Type.Literal('first_healthy'), Type.Literal('parallel')]),
        ),
        idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      }),
      async run(input, call) {
        const body = input as {
          tool_name: string;
          arguments?: Record<string, unknown>;
          session_id?: string;
          resume_token?: string;
          strategy?: 'registry' | 'first_healthy' | 'parallel';
          idempotency_key?: string;
        };
        return executeTool(
          toolRuntimeOf(rt),
          realm(call.principal).principal,
          { ...body, sessionId: body.session_id, resumeToken: body.resume_token },
          call.traceId,
          'mcp',
        ) as never;
      },
    }),
    defineMcpTool<EndpointCaller, ReturnType<typeof args>>({
      name: 'engine_usage_summary',
      title: 'Usage summary',
      description:
        'Realm and per-agent AI usage totals over the last `days` days (default 30, at most 90), the same figures as GET /api/v1/usages/summary: chat and execute turns (one record each), durable flow model calls (one record each) and reported AI usage, turns by status, tokens, exact cost per currency.',
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: args({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })) }),
      async run(input, call) {
        return usageSummary(rt, realm(call.principal).principal, input as { days?: number }) as never;
      },
    }),
  ];
}
