// Server-side client of the engine's agent runtime: key-pair → bearer token exchange with refresh before
// expiry and after a 401, and typed calls for identity, realms, providers, prompts, agents, sessions,
// knowledge, chat and execute. Keys and secrets belong in server-side secret stores only.
import type { ActionType, NormalizedAction, RunResult } from '@keel/engine';
import { ApiError, TransportError } from './http/errors.ts';

/** The engine's own types for what execute and chat return (a type-only dependency, like the geo client's). */
export type { ActionType, NormalizedAction, RunResult };

export interface EngineClientOptions {
  /** The engine REST listener, e.g. `http://127.0.0.1:8083`. */
  baseUrl: string;
  accessKey: string;
  secretKey: string;
  /** Per attempt; default 60 s (a chat turn waits for the model). */
  timeoutMs?: number;
  /** Retries of transient failures (connection errors, 429, 5xx) for idempotent calls; default 2. */
  maxRetries?: number;
  /** First backoff; doubles each retry, with jitter, capped at 5 s. Default 200 ms. */
  retryBaseDelayMs?: number;
  /** Exchange a new token this many seconds before the current one expires; default 30. */
  refreshSkewSeconds?: number;
  fetch?: typeof fetch;
  /** For tests. */
  clock?: () => number;
}

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  token_type: 'Bearer';
  user_id: string;
  realm_id: string | null;
  user_type: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export interface Identity {
  id: string;
  username: string;
  user_type: 'user' | 'service' | 'agent';
  display_name: string | null;
  status: 'active' | 'disabled';
  realm_id: string | null;
  role?: Role;
  member_since?: string;
  metadata: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}

export type Role = 'owner' | 'admin' | 'developer' | 'operator' | 'viewer';

export interface Credentials {
  key_id: string;
  access_key: string;
  secret_key: string;
  realm_id: string | null;
  name: string;
  created_at: string;
  expires_at: string | null;
}

export interface KeyRecord {
  id: string;
  access_key: string;
  name: string;
  realm_id: string | null;
  status: 'active' | 'expired' | 'revoked';
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface Realm {
  id: string;
  name: string;
  status: string;
  role?: Role;
  created_at: string;
  updated_at: string;
}

export interface WhoAmI {
  authenticated: true;
  user_id: string;
  username: string;
  user_type: string;
  display_name: string | null;
  realm_id: string | null;
  role: Role | null;
  key_id: string;
  expires_at: string;
}

export interface Theme {
  brand_name?: string | null;
  logo_url?: string | null;
  favicon_url?: string | null;
  primary_color?: string;
  secondary_color?: string;
  accent_color?: string;
  background_color?: string;
  text_color?: string;
  font_family?: string;
  border_radius_px?: number;
  mode?: 'light' | 'dark' | 'auto';
  welcome_message?: string | null;
}

export interface ProviderInput {
  realm_id?: string;
  type: 'openai_compatible' | 'bedrock';
  name: string;
  description?: string | null;
  /** Write only: never returned by the engine. */
  api_key?: string | null;
  base_url?: string | null;
  supports_text?: boolean;
  supports_image?: boolean;
  text_model?: string | null;
  image_model?: string | null;
  input_price_per_million?: number;
  output_price_per_million?: number;
  image_price?: number;
  currency?: string;
  is_default?: boolean;
  is_active?: boolean;
  settings?: Record<string, unknown> | null;
}

export interface Provider extends Omit<ProviderInput, 'api_key' | 'realm_id'> {
  id: string;
  realm_id: string;
  api_key_set: boolean;
  created_at: string;
  updated_at: string;
}

export interface PromptInput {
  realm_id?: string;
  name: string;
  key: string;
  content: string;
  variables?: string[];
  is_active?: boolean;
}

export interface Prompt extends Required<Omit<PromptInput, 'realm_id'>> {
  id: string;
  realm_id: string;
  version: number;
  activated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AgentSettings {
  max_tool_calls?: number;
  max_latency_ms?: number;
  max_concurrency?: number;
  max_dependency_concurrency?: number;
  node_timeout_ms?: number;
  max_node_retries?: number;
  retry_base_ms?: number;
  max_execution_cost?: number | null;
  max_orchestration_depth?: number;
  quality_tier?: 'economy' | 'standard' | 'premium';
  provider_region?: string | null;
  data_handling?: 'standard' | 'no_retention';
}

export interface AgentProfile {
  priority: number;
  channel?: string[];
  client_capabilities?: { vision?: boolean; actions?: ActionType[] };
  user_segment?: string[];
  deployment?: string[];
}

export interface AgentConfigInput {
  realm_id?: string;
  system_prompt_id?: string | null;
  ai_provider_id?: string | null;
  default_flow_id?: string | null;
  allowed_mcp_servers?: string[];
  metadata?: Record<string, unknown> | null;
  settings?: AgentSettings | null;
  profile?: AgentProfile | null;
  is_default?: boolean;
}

export interface AgentConfig extends Required<Omit<AgentConfigInput, 'realm_id' | 'settings'>> {
  agent_id: string;
  realm_id: string;
  name: string;
  status: string;
  settings: Required<AgentSettings>;
  updated_at: string | null;
}

export interface SessionCreate {
  agent_id: string;
  flow_id?: string;
  subject_type?: 'anonymous' | 'external' | 'user';
  subject_id?: string;
  channel?: string;
  ttl_seconds?: number;
  metadata?: Record<string, unknown> | null;
  transcript_retention?: boolean;
  label?: string;
}

export interface Session {
  session_id: string;
  realm_id: string;
  agent_id: string;
  flow_id: string | null;
  subject_type: string;
  subject_id: string;
  channel: string | null;
  status: 'active' | 'expired' | 'completed' | 'cancelled';
  label: string | null;
  metadata: Record<string, unknown> | null;
  transcript_retention: boolean;
  ttl_seconds: number;
  expires_at: string;
  message_count: number;
  summary: string | null;
  summary_updated_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
}

export interface ResumeGrant {
  session_id: string;
  /** Keep it in protected server-side state; it is shown once. */
  resume_token: string;
  expires_at: string;
}

export interface SessionUpdate {
  label?: string | null;
  metadata?: Record<string, unknown> | null;
  channel?: string | null;
  ttl_seconds?: number;
  transcript_retention?: boolean;
}

export interface Message {
  id: string;
  session_id: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  execution_id: string | null;
  action_type: ActionType | null;
  created_at: string;
}

export interface StateEntry {
  type: string;
  value: unknown;
  version: number;
  updated_at: string;
}

export interface KnowledgeInput {
  title?: string;
  content: string;
  scope?: 'realm' | 'agent' | 'session' | 'user';
  agent_id?: string;
  session_id?: string;
  user_id?: string;
  tags?: string[];
  source: {
    type: 'manual' | 'document' | 'url' | 'conversation' | 'tool' | 'import';
    uri?: string;
    name?: string;
    captured_at?: string;
  };
  confidence?: number;
  metadata?: Record<string, unknown> | null;
  expires_at?: string;
}

export interface Knowledge {
  id: string;
  realm_id: string;
  scope: string;
  agent_id: string | null;
  session_id: string | null;
  user_id: string | null;
  title: string | null;
  content: string;
  tags: string[];
  provenance: {
    source: Record<string, unknown>;
    created_by: string;
    created_at: string;
    content_sha256: string;
    confidence: number | null;
  };
  metadata: Record<string, unknown> | null;
  expires_at: string | null;
  score?: number;
  matched_terms?: string[];
}

export interface ClientCapabilities {
  vision?: boolean;
  actions?: ActionType[];
}

export interface ExecuteRequest {
  /** Omit for the current contract; a pinned client sends `2026-08-22`. */
  version?: string;
  agent_id?: string;
  flow_id?: string;
  session_id?: string;
  resume_token?: string;
  channel?: string;
  locale?: string;
  input: { message: string };
  client_capabilities?: ClientCapabilities;
  metadata?: Record<string, unknown>;
  idempotency_key?: string;
  mode?: 'sync';
}

export interface ChatRequest {
  agent_id: string;
  messages: { role: 'user' | 'assistant'; content: string }[];
  session_id?: string;
  resume_token?: string;
  flow_id?: string;
  channel?: string;
  locale?: string;
  client_capabilities?: ClientCapabilities;
  metadata?: Record<string, unknown>;
  idempotency_key?: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Query = Record<string, string | number | boolean | undefined>;

interface Call {
  method: Method;
  path: string;
  query?: Query | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  /** Repeating the call is harmless (reads, calls carrying an idempotency key). */
  idempotent: boolean;
  /** Sends no bearer token (token exchange, registration, public endpoints). */
  anonymous?: boolean;
}

const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504]);
const SAFE_FOR_ANY_METHOD = new Set([429, 503]);
const seg = (value: string) => encodeURIComponent(value);
const resumeHeaders = (token: string | undefined) => (token ? { 'x-resume-token': token } : undefined);

/**
 * The engine runtime client. It exchanges the key pair for a bearer token on first use, shares one exchange
 * between concurrent calls, exchanges again shortly before expiry, and after a 401 exchanges once and repeats
 * the call once. Transient failures of idempotent calls are retried with backoff (Retry-After honoured);
 * 400, 401 (after the refresh), 403, 404 and 409 never are.
 */
export class EngineClient {
  readonly #options: Required<Omit<EngineClientOptions, 'fetch' | 'clock'>> & {
    fetch: typeof fetch;
    clock: () => number;
  };
  #token: { value: string; expiresAt: number } | undefined;
  #exchange: Promise<string> | undefined;

  constructor(options: EngineClientOptions) {
    this.#options = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 200,
      refreshSkewSeconds: options.refreshSkewSeconds ?? 30,
      fetch: options.fetch ?? globalThis.fetch,
      clock: options.clock ?? Date.now,
    };
  }

  /** A valid bearer token (cached; exchanged when missing or about to expire). */
  async accessToken(): Promise<string> {
    const now = this.#options.clock();
    if (this.#token && this.#token.expiresAt - this.#options.refreshSkewSeconds * 1000 > now) return this.#token.value;
    this.#exchange ??= this.exchangeToken()
      .then((reply) => {
        this.#token = { value: reply.access_token, expiresAt: this.#options.clock() + reply.expires_in * 1000 };
        return reply.access_token;
      })
      .finally(() => {
        this.#exchange = undefined;
      });
    return this.#exchange;
  }

  /** Forgets the cached token; the next call exchanges the key pair again. */
  invalidateToken(): void {
    this.#token = undefined;
  }

  /** POST /api/v1/auth/token with the configured key pair. */
  exchangeToken(): Promise<TokenResponse> {
    return this.#send<TokenResponse>({
      method: 'POST',
      path: '/api/v1/auth/token',
      body: { access_key: this.#options.accessKey, secret_key: this.#options.secretKey },
      idempotent: true,
      anonymous: true,
    });
  }

  /** Any runtime call, authenticated and retried like the typed ones. */
  async request<T>(call: Call): Promise<T> {
    if (call.anonymous) return this.#send<T>(call);
    const token = await this.accessToken();
    try {
      return await this.#send<T>(call, token);
    } catch (error) {
      // A 401 means the token expired or was revoked: exchange once and repeat the call once.
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      if (this.#token?.value === token) this.#token = undefined;
      return this.#send<T>(call, await this.accessToken());
    }
  }

  async #send<T>(call: Call, token?: string): Promise<T> {
    const { maxRetries, retryBaseDelayMs, timeoutMs } = this.#options;
    const url = new URL(this.#options.baseUrl + call.path);
    for (const [key, value] of Object.entries(call.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    let lastError: unknown;
    let attempts = 0;
    let wait: number | undefined;
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      if (attempt > 0) await sleep(wait ?? Math.random() * Math.min(5000, retryBaseDelayMs * 2 ** (attempt - 1)));
      wait = undefined;
      attempts++;
      let response: Response;
      try {
        response = await this.#options.fetch(url, {
          method: call.method,
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        lastError = error;
        if (!call.idempotent) break;
        continue;
      }
      if (response.status === 204) return undefined as T;
      const text = await response.text().catch(() => '');
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      if (response.ok) return parsed as T;
      const retryable = TRANSIENT.has(response.status) && (call.idempotent || SAFE_FOR_ANY_METHOD.has(response.status));
      const error = new ApiError(response.status, parsed, retryable);
      if (!retryable || attempt === maxRetries) throw error;
      lastError = error;
      const after = Number(response.headers.get('retry-after'));
      if (Number.isFinite(after) && after >= 0) wait = Math.min(after * 1000, 30_000);
    }
    throw new TransportError(
      `${call.method} ${call.path} failed after ${attempts} attempt(s): ${(lastError as Error)?.message ?? 'no answer'}`,
      attempts,
      lastError,
    );
  }

  // Identity and realms

  /** POST /api/v1/auth/register (when the engine allows registration); no token needed. */
  register(input: { username: string; user_type?: 'user' | 'service'; realm_name?: string }) {
    return this.request<{ user: Identity; realm: Realm | null; credentials: Credentials }>({
      method: 'POST',
      path: '/api/v1/auth/register',
      body: input,
      idempotent: false,
      anonymous: true,
    });
  }

  isAuthenticated() {
    return this.request<WhoAmI>({ method: 'GET', path: '/api/v1/auth/is-authenticated', idempotent: true });
  }

  createKeys(input: { name?: string; realm_id?: string; expires_at?: string } = {}) {
    return this.request<Credentials>({ method: 'POST', path: '/api/v1/auth/keys', body: input, idempotent: false });
  }

  listKeys() {
    return this.request<{ data: KeyRecord[] }>({ method: 'GET', path: '/api/v1/auth/keys', idempotent: true });
  }

  revokeKey(keyId: string) {
    return this.request<KeyRecord>({ method: 'DELETE', path: `/api/v1/auth/keys/${seg(keyId)}`, idempotent: true });
  }

  getUser(id: string) {
    return this.request<Identity>({ method: 'GET', path: `/api/v1/users/${seg(id)}`, idempotent: true });
  }

  updateUser(
    id: string,
    input: { display_name?: string | null; metadata?: Record<string, unknown> | null; status?: 'active' | 'disabled' },
  ) {
    return this.request<Identity>({ method: 'PATCH', path: `/api/v1/users/${seg(id)}`, body: input, idempotent: true });
  }

  replaceUser(
    id: string,
    input: { display_name?: string | null; metadata?: Record<string, unknown> | null; status?: 'active' | 'disabled' },
  ) {
    return this.request<Identity>({ method: 'PUT', path: `/api/v1/users/${seg(id)}`, body: input, idempotent: true });
  }

  deleteUser(id: string) {
    return this.request<void>({ method: 'DELETE', path: `/api/v1/users/${seg(id)}`, idempotent: true });
  }

  createRealm(input: { name: string }) {
    return this.request<Realm>({ method: 'POST', path: '/api/v1/realms', body: input, idempotent: false });
  }

  listMembers(realmId: string, query: PageQuery = {}) {
    return this.request<Page<Identity>>({
      method: 'GET',
      path: `/api/v1/realms/${seg(realmId)}/members`,
      query: { ...query },
      idempotent: true,
    });
  }

  addMember(realmId: string, input: { identity_id?: string; username?: string; role: Role }) {
    return this.request<Identity>({
      method: 'POST',
      path: `/api/v1/realms/${seg(realmId)}/members`,
      body: input,
      idempotent: true,
    });
  }

  createAgentIdentity(realmId: string, input: IdentityCreate) {
    return this.#createIdentity(`/api/v1/realms/${seg(realmId)}/agents`, input);
  }

  createServiceIdentity(realmId: string, input: IdentityCreate) {
    return this.#createIdentity(`/api/v1/realms/${seg(realmId)}/identities/services`, input);
  }

  #createIdentity(path: string, input: IdentityCreate) {
    return this.request<{ identity: Identity; credentials: Credentials | null }>({
      method: 'POST',
      path,
      body: input,
      idempotent: false,
    });
  }

  getTheme(realmId: string) {
    return this.request<{ realm_id: string; theme: Required<Theme>; updated_at: string | null }>({
      method: 'GET',
      path: `/api/v1/realms/${seg(realmId)}/theme`,
      idempotent: true,
    });
  }

  putTheme(realmId: string, theme: Theme) {
    return this.request<{ realm_id: string; theme: Required<Theme>; updated_at: string | null }>({
      method: 'PUT',
      path: `/api/v1/realms/${seg(realmId)}/theme`,
      body: theme,
      idempotent: true,
    });
  }

  // Providers and prompts

  listProviderTemplates() {
    return this.request<{ data: Record<string, unknown>[] }>({
      method: 'GET',
      path: '/api/v1/runtime/providers/templates',
      idempotent: true,
    });
  }

  getProviderTemplate(type: string) {
    return this.request<Record<string, unknown>>({
      method: 'GET',
      path: `/api/v1/runtime/providers/templates/${seg(type)}`,
      idempotent: true,
    });
  }

  listProviders(query: PageQuery & { type?: string; is_active?: boolean } = {}) {
    return this.request<Page<Provider>>({
      method: 'GET',
      path: '/api/v1/runtime/providers',
      query: { ...query },
      idempotent: true,
    });
  }

  createProvider(input: ProviderInput) {
    return this.request<Provider>({
      method: 'POST',
      path: '/api/v1/runtime/providers',
      body: input,
      idempotent: false,
    });
  }

  getProvider(id: string) {
    return this.request<Provider>({ method: 'GET', path: `/api/v1/runtime/providers/${seg(id)}`, idempotent: true });
  }

  /** Replaces the configuration; an omitted api_key keeps the stored one. */
  updateProvider(id: string, input: ProviderInput) {
    return this.request<Provider>({
      method: 'PUT',
      path: `/api/v1/runtime/providers/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  deleteProvider(id: string) {
    return this.request<void>({ method: 'DELETE', path: `/api/v1/runtime/providers/${seg(id)}`, idempotent: true });
  }

  toggleProvider(id: string, isActive?: boolean) {
    return this.request<Provider>({
      method: 'PATCH',
      path: `/api/v1/runtime/providers/${seg(id)}/toggle`,
      body: isActive === undefined ? {} : { is_active: isActive },
      idempotent: isActive !== undefined,
    });
  }

  listPrompts(query: PageQuery & { key?: string; is_active?: boolean } = {}) {
    return this.request<Page<Prompt>>({
      method: 'GET',
      path: '/api/v1/runtime/prompts',
      query: { ...query },
      idempotent: true,
    });
  }

  createPrompt(input: PromptInput) {
    return this.request<Prompt>({ method: 'POST', path: '/api/v1/runtime/prompts', body: input, idempotent: false });
  }

  getPrompt(id: string) {
    return this.request<Prompt>({ method: 'GET', path: `/api/v1/runtime/prompts/${seg(id)}`, idempotent: true });
  }

  updatePrompt(id: string, input: PromptInput) {
    return this.request<Prompt>({
      method: 'PUT',
      path: `/api/v1/runtime/prompts/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  deletePrompt(id: string) {
    return this.request<void>({ method: 'DELETE', path: `/api/v1/runtime/prompts/${seg(id)}`, idempotent: true });
  }

  activatePrompt(id: string) {
    return this.request<Prompt>({
      method: 'POST',
      path: `/api/v1/runtime/prompts/${seg(id)}/activate`,
      idempotent: true,
    });
  }

  // Agents

  getAgentConfig(agentId: string) {
    return this.request<AgentConfig>({
      method: 'GET',
      path: `/api/v1/runtime/agents/${seg(agentId)}/config`,
      idempotent: true,
    });
  }

  putAgentConfig(agentId: string, input: AgentConfigInput) {
    return this.request<AgentConfig>({
      method: 'PUT',
      path: `/api/v1/runtime/agents/${seg(agentId)}/config`,
      body: input,
      idempotent: true,
    });
  }

  // Sessions

  listSessions(
    query: PageQuery & { agent_id?: string; status?: Session['status']; subject_type?: string; channel?: string } = {},
  ) {
    return this.request<Page<Session>>({
      method: 'GET',
      path: '/api/v1/runtime/sessions',
      query: { ...query },
      idempotent: true,
    });
  }

  createSession(input: SessionCreate) {
    return this.request<ResumeGrant & { session: Session }>({
      method: 'POST',
      path: '/api/v1/runtime/sessions',
      body: input,
      idempotent: false,
    });
  }

  getSession(sessionId: string, resumeToken?: string) {
    return this.request<Session>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  updateSession(sessionId: string, input: SessionUpdate, resumeToken?: string) {
    return this.request<Session>({
      method: 'PATCH',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  replaceSession(sessionId: string, input: SessionUpdate, resumeToken?: string) {
    return this.request<Session>({
      method: 'PUT',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  deleteSession(sessionId: string, resumeToken?: string) {
    return this.request<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  listMessages(sessionId: string, resumeToken?: string, query: { limit?: number; cursor?: number } = {}) {
    return this.request<Page<Message>>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/messages`,
      query: { ...query },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  appendMessage(sessionId: string, message: { role: 'user' | 'assistant'; content: string }, resumeToken?: string) {
    return this.request<Message>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/messages`,
      body: message,
      headers: resumeHeaders(resumeToken),
      idempotent: false,
    });
  }

  completeSession(sessionId: string, resumeToken?: string) {
    return this.#sessionAction(sessionId, 'complete', resumeToken);
  }

  cancelSession(sessionId: string, resumeToken?: string) {
    return this.#sessionAction(sessionId, 'cancel', resumeToken);
  }

  /** Clears the pinned flow; the next turn makes a new routing decision. */
  resetSession(sessionId: string, resumeToken?: string) {
    return this.#sessionAction(sessionId, 'reset', resumeToken);
  }

  #sessionAction(sessionId: string, action: string, resumeToken: string | undefined) {
    return this.request<Session>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/${action}`,
      headers: resumeHeaders(resumeToken),
      idempotent: false,
    });
  }

  /** Rotates the resume token (the old one stops working); not retried, since a lost answer would lose the new token. */
  refreshResumeToken(
    sessionId: string,
    input: { resume_token: string; label?: string | null; metadata?: Record<string, unknown> | null },
  ) {
    return this.request<ResumeGrant>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/resume-token/refresh`,
      body: input,
      idempotent: false,
    });
  }

  /** Service recovery of an active or expired session (service identities). */
  recoverResumeToken(sessionId: string) {
    return this.request<ResumeGrant>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/resume-token/recover`,
      idempotent: false,
    });
  }

  sessionStatus(sessionId: string) {
    return this.request<{
      session_id: string;
      status: Session['status'];
      expires_at: string;
      has_pinned_flow: boolean;
      ended_at: string | null;
    }>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/status`,
      idempotent: true,
    });
  }

  getState(sessionId: string, resumeToken?: string) {
    return this.request<{ session_id: string; state: Record<string, StateEntry> }>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  putState(sessionId: string, state: Record<string, unknown>, resumeToken?: string) {
    return this.request<{ session_id: string; state: Record<string, StateEntry> }>({
      method: 'PUT',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state`,
      body: { state },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  forgetState(sessionId: string, key: string, resumeToken?: string) {
    return this.request<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state/${seg(key)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  summarizeSession(sessionId: string, resumeToken?: string, maxLength?: number) {
    return this.request<{
      session_id: string;
      summary: string;
      method: 'model' | 'extractive';
      message_count: number;
      updated_at: string;
    }>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/summarize`,
      body: maxLength === undefined ? {} : { max_length: maxLength },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  getUserContext(userId: string) {
    return this.request<{
      user_id: string;
      context: Record<string, unknown>;
      version: number;
      updated_at: string | null;
    }>({
      method: 'GET',
      path: `/api/v1/runtime/users/${seg(userId)}/context`,
      idempotent: true,
    });
  }

  putUserContext(userId: string, context: Record<string, unknown>) {
    return this.request<{
      user_id: string;
      context: Record<string, unknown>;
      version: number;
      updated_at: string | null;
    }>({
      method: 'PUT',
      path: `/api/v1/runtime/users/${seg(userId)}/context`,
      body: { context },
      idempotent: true,
    });
  }

  // Knowledge

  listKnowledge(
    query: PageQuery & { scope?: 'realm' | 'agent' | 'user'; agent_id?: string; user_id?: string; tag?: string } = {},
  ) {
    return this.request<Page<Knowledge>>({
      method: 'GET',
      path: '/api/v1/runtime/knowledge',
      query: { ...query },
      idempotent: true,
    });
  }

  createKnowledge(input: KnowledgeInput, resumeToken?: string) {
    return this.request<Knowledge>({
      method: 'POST',
      path: '/api/v1/runtime/knowledge',
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: false,
    });
  }

  searchKnowledge(
    input: { query: string; agent_id?: string; session_id?: string; user_id?: string; tags?: string[]; limit?: number },
    resumeToken?: string,
  ) {
    return this.request<{ data: Knowledge[] }>({
      method: 'POST',
      path: '/api/v1/runtime/knowledge/search',
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  forgetKnowledge(id: string) {
    return this.request<void>({ method: 'DELETE', path: `/api/v1/runtime/knowledge/${seg(id)}`, idempotent: true });
  }

  // Chat and execute

  /** One synchronous turn. Retried on transient failures only when it carries an idempotency_key. */
  execute(input: ExecuteRequest) {
    return this.request<RunResult>({
      method: 'POST',
      path: '/api/v1/runtime/execute',
      body: input,
      idempotent: input.idempotency_key !== undefined,
    });
  }

  chat(input: ChatRequest) {
    return this.request<RunResult>({
      method: 'POST',
      path: '/api/v1/runtime/ai/chat',
      body: input,
      idempotent: input.idempotency_key !== undefined,
    });
  }

  // Status and discovery

  health() {
    return this.request<{ status: string }>({
      method: 'GET',
      path: '/api/v1/health',
      idempotent: true,
      anonymous: true,
    });
  }

  ready() {
    return this.request<{ status: string }>({
      method: 'GET',
      path: '/api/v1/ready',
      idempotent: true,
      anonymous: true,
    });
  }

  runtimeStatus() {
    return this.request<Record<string, unknown>>({ method: 'GET', path: '/api/v1/runtime/status', idempotent: true });
  }

  capabilities() {
    return this.request<Record<string, unknown>>({
      method: 'GET',
      path: '/api/v1/runtime/capabilities',
      idempotent: true,
    });
  }

  /** The versioned client contract (endpoint templates, transports, normalized actions, bounded schemas). */
  sdkConfig() {
    return this.request<Record<string, unknown>>({
      method: 'GET',
      path: '/api/v1/sdk/config',
      idempotent: true,
      anonymous: true,
    });
  }
}

export interface IdentityCreate {
  username: string;
  display_name?: string;
  role?: Role;
  metadata?: Record<string, unknown> | null;
  issue_credentials?: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
