import { AsyncLocalStorage } from 'node:async_hooks';
import { checkOutboundUrl, createSafeAgent, createSafeLookup, currentSpan, currentTraceparent } from '@keel/core';
import {
  type CallToolResult,
  Client,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitRequestParams,
  type ElicitResult,
  ProtocolError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { ToolCallError } from './routing/index.ts';

/** Authentication profile types of a server (the secret of each lives in its credential versions). */
export const AUTH_TYPES = ['none', 'api_key', 'bearer', 'oauth_client_credentials', 'mtls', 'credential_ref'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** The secret-free part of a server's authentication profile. */
export interface AuthProfile {
  type: AuthType;
  /** api_key: the header carrying the key (default `X-API-Key`). */
  header_name?: string | undefined;
  /** oauth_client_credentials: the token endpoint, the client id and an optional scope. */
  token_url?: string | undefined;
  client_id?: string | undefined;
  scope?: string | undefined;
  /** credential_ref: the name of a customer-managed credential (`KEEL_TOOL_CREDENTIAL_<NAME>` in the engine's environment). */
  credential_ref?: string | undefined;
}

/** Everything a connection needs; the secret is decrypted only for the connection and never stored on it. */
export interface ServerEndpoint {
  id: string;
  url: string;
  type: 'http' | 'sse';
  auth: AuthProfile;
  /** The active credential version's secret (null for `none` and `credential_ref`). */
  secret: string | null;
  /** Cache key part: which credential version this connection uses. */
  credentialVersion: number | null;
  /** Hosts the server's URLs may name; empty = any public host. */
  allowedHosts: readonly string[];
  /** The realm the server belongs to. */
  realmId: string;
}

/**
 * The tool call a server request (sampling, elicitation) belongs to: what policy, budget and audit need. Counters
 * are per call and shared by every request the server makes during it.
 */
export interface InteractionCall {
  realmId: string;
  serverId: string;
  toolName: string;
  sessionId: string | null;
  traceId: string;
  /** The call's own cancellation and deadline (epoch ms): a served request never outlives the call. */
  signal: AbortSignal;
  deadline: number;
  used: { requests: number; tokens: number; audited: number };
}

/** What a server asked the engine's client for during a tool call. */
export type InteractionRequest =
  | { kind: 'sampling'; params: CreateMessageRequestParams }
  | { kind: 'elicitation'; params: ElicitRequestParams };

/**
 * Serves a server's sampling or elicitation request; `call` is undefined when the request cannot be attributed to
 * exactly one tool call of this connection. Throw a ProtocolError to refuse (it becomes the JSON-RPC error).
 */
export type InteractionHandler = (
  endpoint: ServerEndpoint,
  request: InteractionRequest,
  call: InteractionCall | undefined,
) => Promise<CreateMessageResult | ElicitResult>;

export interface ConnectionOptions {
  allowPrivate: boolean;
  /** Deadline of connecting and initializing. */
  connectTimeoutMs?: number;
  /** Sampling and elicitation requests of servers; without one every such request is refused. */
  interactions?: InteractionHandler;
}

/** JSON-RPC error code of a refused sampling or elicitation request (the MCP specification's rejection code). */
export const INTERACTION_REFUSED = -1;

/** The environment prefix of customer-managed credential references. */
export const CREDENTIAL_REF_PREFIX = 'KEEL_TOOL_CREDENTIAL_';

interface CallScope {
  status?: number;
  egressRefused?: boolean;
  networkError?: boolean;
}
const scope = new AsyncLocalStorage<CallScope>();
/** The tool call whose request is under way: server requests on that request's own stream see it. */
const callScope = new AsyncLocalStorage<InteractionCall | undefined>();

function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((entry) => {
    const rule = entry.toLowerCase();
    return rule.startsWith('*.') ? host.endsWith(rule.slice(1)) : host === rule;
  });
}

/** Checks a URL against the SSRF rules and the server's egress allowlist; throws TOOL_SERVER_EGRESS_REFUSED. */
export function checkEgress(raw: string, allowed: readonly string[], allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = checkOutboundUrl(raw, { allowPrivate });
  } catch (error) {
    throw new ToolCallError('TOOL_SERVER_EGRESS_REFUSED', (error as Error).message);
  }
  if (!hostAllowed(url, allowed))
    throw new ToolCallError('TOOL_SERVER_EGRESS_REFUSED', "the host is not in the server's egress allowlist");
  return url;
}

/** An mTLS credential: client certificate and key in PEM, and optionally the CA(s) trusted for the server instead of the system roots. */
export interface MtlsCredential {
  cert: string;
  key: string;
  ca?: string;
}

const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]+-----[\s\S]+?-----END [A-Z0-9 ]+-----/;

/** Reads an mTLS credential; a malformed one is an authentication failure whose message shows no part of it. */
export function parseMtlsCredential(secret: string): MtlsCredential {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secret);
  } catch {
    parsed = undefined;
  }
  const pair = parsed as Partial<Record<keyof MtlsCredential, unknown>> | undefined;
  const pem = (value: unknown) => typeof value === 'string' && PEM_BLOCK.test(value);
  if (
    !pair ||
    typeof pair !== 'object' ||
    !pem(pair.cert) ||
    !pem(pair.key) ||
    (pair.ca !== undefined && !pem(pair.ca))
  )
    throw new ToolCallError(
      'TOOL_SERVER_AUTH_FAILED',
      'the mTLS credential must be JSON {"cert","key"} (and optionally "ca") in PEM',
      { authFailure: true },
    );
  return pair as MtlsCredential;
}

interface OAuthToken {
  value: string;
  expiresAt: number;
}

/** A live MCP client of one server (one credential version), reused by every call until dropped. */
interface Connection {
  client: Client;
  key: string;
  closed: boolean;
  /** Tool calls under way on this connection (to attribute server requests that arrive on a shared stream). */
  inflight: Set<InteractionCall>;
}

/**
 * MCP client connections to registered servers (official SDK), one per server and credential version, reused
 * across calls. Every request of a connection passes the SSRF rules and the server's egress allowlist before it
 * leaves, and connects through core's safe agent (the name is resolved and vetted at connect time: no DNS rebinding).
 * Failures are classified into ToolCallError codes for the routing core: authentication (401/403), retryable
 * (connection errors, timeouts, 429, 5xx) or final.
 */
export class McpConnector {
  readonly #options: ConnectionOptions;
  readonly #agent: Agent;
  readonly #mtlsAgents = new Map<string, Agent>();
  readonly #connections = new Map<string, Promise<Connection>>();
  readonly #tokens = new Map<string, OAuthToken>();

  constructor(options: ConnectionOptions) {
    this.#options = options;
    this.#agent = createSafeAgent({
      allowPrivate: options.allowPrivate,
      connections: 64,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    });
  }

  #dispatcher(endpoint: ServerEndpoint): Agent {
    if (endpoint.auth.type !== 'mtls' || !endpoint.secret) return this.#agent;
    const key = `${endpoint.id}:${endpoint.credentialVersion}`;
    let agent = this.#mtlsAgents.get(key);
    if (!agent) {
      const pair = parseMtlsCredential(endpoint.secret);
      agent = new Agent({
        connect: {
          lookup: createSafeLookup({ allowPrivate: this.#options.allowPrivate }) as never,
          timeout: this.#options.connectTimeoutMs ?? 5000,
          cert: pair.cert,
          key: pair.key,
          ...(pair.ca ? { ca: pair.ca } : {}),
        },
        connections: 16,
      });
      this.#mtlsAgents.set(key, agent);
    }
    return agent;
  }

  /** The fetch a transport uses: egress checks, the safe dispatcher, and the status noted for classification. */
  #fetch(endpoint: ServerEndpoint) {
    const dispatcher = this.#dispatcher(endpoint);
    return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const noted = scope.getStore();
      try {
        checkEgress(target, endpoint.allowedHosts, this.#options.allowPrivate);
      } catch (error) {
        if (noted) noted.egressRefused = true;
        throw error;
      }
      try {
        // The W3C trace context of the call in progress (the tool call's span), so the server's spans join it.
        const headers = new Headers(init?.headers);
        if (currentSpan()) headers.set('traceparent', currentTraceparent());
        // The transport passes one long-lived signal (its own close) with every request. undici adds an abort
        // listener to the signal it is given and drops it only when the request is garbage collected, and adding
        // a listener walks the ones already there: on the shared signal every call got slower until a GC. A
        // per-request signal that follows the transport's (AbortSignal.any holds it weakly, no listener) keeps
        // the close semantics at a constant cost.
        const signal = init?.signal ? AbortSignal.any([init.signal]) : undefined;
        const response = (await undiciFetch(target, {
          ...(init as object),
          headers,
          dispatcher,
          redirect: 'manual',
          ...(signal ? { signal } : {}),
        } as never)) as unknown as Response;
        if (noted && (noted.status === undefined || response.status >= 400)) noted.status = response.status;
        return response;
      } catch (error) {
        if (noted && (error as Error).name !== 'AbortError') noted.networkError = true;
        throw error;
      }
    };
  }

  async #headers(endpoint: ServerEndpoint): Promise<Record<string, string>> {
    const auth = endpoint.auth;
    switch (auth.type) {
      case 'api_key':
        return endpoint.secret ? { [auth.header_name ?? 'X-API-Key']: endpoint.secret } : {};
      case 'bearer':
        return endpoint.secret ? { authorization: `Bearer ${endpoint.secret}` } : {};
      case 'credential_ref': {
        const value = process.env[`${CREDENTIAL_REF_PREFIX}${auth.credential_ref ?? ''}`];
        if (!value)
          throw new ToolCallError('TOOL_SERVER_CREDENTIAL_MISSING', 'the referenced credential is not configured', {
            authFailure: true,
          });
        return auth.header_name ? { [auth.header_name]: value } : { authorization: `Bearer ${value}` };
      }
      case 'oauth_client_credentials':
        return { authorization: `Bearer ${await this.#oauthToken(endpoint)}` };
      default:
        return {};
    }
  }

  /** A client-credentials access token from the profile's token endpoint, cached until shortly before it expires. */
  async #oauthToken(endpoint: ServerEndpoint): Promise<string> {
    const key = `${endpoint.id}:${endpoint.credentialVersion}`;
    const cached = this.#tokens.get(key);
    if (cached && cached.expiresAt > Date.now() + 30_000) return cached.value;
    const { token_url: tokenUrl, client_id: clientId, scope: tokenScope } = endpoint.auth;
    if (!tokenUrl || !clientId || !endpoint.secret)
      throw new ToolCallError('TOOL_SERVER_AUTH_FAILED', 'the OAuth profile is incomplete', { authFailure: true });
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId });
    form.set('client_secret', endpoint.secret);
    if (tokenScope) form.set('scope', tokenScope);
    const response = await this.#fetch(endpoint)(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
    if (response.status !== 200 || typeof body.access_token !== 'string')
      throw new ToolCallError('TOOL_SERVER_AUTH_FAILED', `the token endpoint answered ${response.status}`, {
        authFailure: true,
      });
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 300;
    this.#tokens.set(key, { value: body.access_token, expiresAt: Date.now() + lifetime * 1000 });
    return body.access_token;
  }

  async #open(endpoint: ServerEndpoint, key: string): Promise<Connection> {
    const url = checkEgress(endpoint.url, endpoint.allowedHosts, this.#options.allowPrivate);
    const headers = await this.#headers(endpoint);
    const fetch = this.#fetch(endpoint);
    const transport =
      endpoint.type === 'sse'
        ? new SSEClientTransport(url, { requestInit: { headers }, fetch, eventSourceInit: { fetch } as never })
        : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch, redirectPolicy: 'same-origin' });
    // Both capabilities are declared so a server may ask; whether it is served is the realm's policy at that moment.
    const client = new Client(
      { name: 'keel-engine', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: { form: {} } } },
    );
    const connection: Connection = { client, key, closed: false, inflight: new Set() };
    client.setRequestHandler('sampling/createMessage', (request) =>
      this.#interact(endpoint, connection, { kind: 'sampling', params: request.params }),
    );
    client.setRequestHandler('elicitation/create', (request) =>
      this.#interact(endpoint, connection, { kind: 'elicitation', params: request.params }),
    );
    client.onclose = () => {
      connection.closed = true;
      if (this.#connections.get(endpoint.id + key)) this.#connections.delete(endpoint.id + key);
    };
    // Streams opened while connecting must not carry the context of the call that happened to open them.
    await callScope.run(undefined, () =>
      client.connect(transport, { timeout: this.#options.connectTimeoutMs ?? 10_000 } as never),
    );
    return connection;
  }

  /**
   * A server request during a tool call: attributed to the call whose request stream carried it (streamable HTTP),
   * else to the only call under way on the connection (a shared SSE stream); otherwise it belongs to no call.
   */
  #interact(endpoint: ServerEndpoint, connection: Connection, request: InteractionRequest) {
    const carried = callScope.getStore();
    const call =
      carried && connection.inflight.has(carried)
        ? carried
        : connection.inflight.size === 1
          ? [...connection.inflight][0]
          : undefined;
    if (!this.#options.interactions)
      throw new ProtocolError(INTERACTION_REFUSED, `${request.kind} is not available on this client`);
    return this.#options.interactions(endpoint, request, call) as Promise<never>;
  }

  /**
   * Runs `work` with a connected client of the server (connecting and initializing on first use); failures are
   * ToolCallErrors. A failed connection is dropped so the next call connects again.
   */
  async use<T>(endpoint: ServerEndpoint, work: (client: Client) => Promise<T>, call?: InteractionCall): Promise<T> {
    const key = `:${endpoint.credentialVersion ?? 0}:${endpoint.url}:${endpoint.type}`;
    const noted: CallScope = {};
    return scope.run(noted, async () => {
      let pending = this.#connections.get(endpoint.id + key);
      if (!pending) {
        pending = this.#open(endpoint, key);
        this.#connections.set(endpoint.id + key, pending);
        pending.catch(() => this.#connections.delete(endpoint.id + key));
      }
      try {
        const connection = await pending;
        if (!call) return await work(connection.client);
        connection.inflight.add(call);
        try {
          return await callScope.run(call, () => work(connection.client));
        } finally {
          connection.inflight.delete(call);
        }
      } catch (error) {
        const classified = classify(error, noted);
        if (classified.retryable || classified.authFailure) await this.#drop(endpoint.id + key, pending);
        throw classified;
      }
    });
  }

  async #drop(key: string, pending: Promise<Connection>): Promise<void> {
    if (this.#connections.get(key) === pending) this.#connections.delete(key);
    const connection = await pending.catch(() => undefined);
    await connection?.client.close().catch(() => undefined);
  }

  /** A fresh, uncached connection used once (tests of a new credential, probes): initialize, `work`, close. */
  async once<T>(endpoint: ServerEndpoint, work: (client: Client) => Promise<T>): Promise<T> {
    const noted: CallScope = {};
    return scope.run(noted, async () => {
      let connection: Connection | undefined;
      try {
        connection = await this.#open(endpoint, ':once');
        return await work(connection.client);
      } catch (error) {
        throw classify(error, noted);
      } finally {
        await connection?.client.close().catch(() => undefined);
      }
    });
  }

  /** Closes every connection of a server (after an update, a toggle or a delete). */
  async drop(serverId: string): Promise<void> {
    for (const [key, pending] of [...this.#connections])
      if (key.startsWith(`${serverId}:`)) await this.#drop(key, pending);
    for (const key of [...this.#tokens.keys()]) if (key.startsWith(`${serverId}:`)) this.#tokens.delete(key);
    for (const [key, agent] of [...this.#mtlsAgents]) {
      if (!key.startsWith(`${serverId}:`)) continue;
      this.#mtlsAgents.delete(key);
      await agent.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    for (const [key, pending] of [...this.#connections]) await this.#drop(key, pending);
    for (const agent of this.#mtlsAgents.values()) await agent.close().catch(() => undefined);
    await this.#agent.close().catch(() => undefined);
  }
}

/** Sorts a failure into the routing core's classes; messages are made safe by the routing core. */
function classify(error: unknown, noted: CallScope): ToolCallError {
  if (error instanceof ToolCallError) return error;
  if (noted.egressRefused)
    return new ToolCallError('TOOL_SERVER_EGRESS_REFUSED', 'the request was refused by the egress policy');
  const status = noted.status;
  if (status === 401 || status === 403)
    return new ToolCallError('TOOL_SERVER_AUTH_FAILED', `the server refused the credential (${status})`, {
      authFailure: true,
    });
  if (status === 429 || (status !== undefined && status >= 500))
    return new ToolCallError('TOOL_SERVER_UNAVAILABLE', `the server answered ${status}`, { retryable: true });
  const name = (error as { name?: string } | null)?.name ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (noted.networkError || /ECONNREFUSED|ECONNRESET|EADDRNOTPUBLIC|ENOTFOUND|fetch failed|socket/i.test(message))
    return new ToolCallError('TOOL_SERVER_UNREACHABLE', 'the server could not be reached', { retryable: true });
  if (/timed? ?out/i.test(message) || name === 'TimeoutError')
    return new ToolCallError('TOOL_TIMEOUT', 'the server did not answer in time', { retryable: true });
  if (status !== undefined && status >= 400)
    return new ToolCallError('TOOL_SERVER_REJECTED', `the server answered ${status}`);
  return new ToolCallError('TOOL_SERVER_ERROR', message);
}

/** The text and structured parts of a tool result, bounded for storage and answers. */
export function toolResultView(result: CallToolResult): Record<string, unknown> {
  const view: Record<string, unknown> = { content: result.content ?? [] };
  if (result.structuredContent !== undefined) view.structured_content = result.structuredContent;
  if (result.isError) view.is_error = true;
  return view;
}
