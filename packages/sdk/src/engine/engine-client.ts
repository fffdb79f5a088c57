import { EngineAgents } from './agents.ts';
import { type EngineCall, EngineCaller, type EngineClientOptions, type TokenResponse } from './engine-caller.ts';
import { EngineIdentity } from './identity.ts';
import { EngineKnowledge } from './knowledge.ts';
import { EnginePrompts } from './prompts.ts';
import { EngineProviders } from './providers.ts';
import { EngineRuntime } from './runtime.ts';
import { EngineSessions } from './sessions.ts';

/**
 * Server-side client of the engine's agent runtime, one property per area (`identity`, `providers`, `prompts`,
 * `agents`, `sessions`, `knowledge`, `runtime`). It exchanges the key pair for a bearer token on first use,
 * shares one exchange between concurrent calls, exchanges again shortly before expiry, and after a 401 exchanges
 * once and repeats the call once. Transient failures of idempotent calls are retried with backoff (Retry-After
 * honoured); 400, 401 (after the refresh), 403, 404 and 409 never are. Keys belong in server-side secret stores.
 */
export class EngineClient {
  readonly #engine: EngineCaller;
  readonly identity: EngineIdentity;
  readonly providers: EngineProviders;
  readonly prompts: EnginePrompts;
  readonly agents: EngineAgents;
  readonly sessions: EngineSessions;
  readonly knowledge: EngineKnowledge;
  readonly runtime: EngineRuntime;

  constructor(options: EngineClientOptions) {
    this.#engine = new EngineCaller(options);
    this.identity = new EngineIdentity(this.#engine);
    this.providers = new EngineProviders(this.#engine);
    this.prompts = new EnginePrompts(this.#engine);
    this.agents = new EngineAgents(this.#engine);
    this.sessions = new EngineSessions(this.#engine);
    this.knowledge = new EngineKnowledge(this.#engine);
    this.runtime = new EngineRuntime(this.#engine);
  }

  /** A valid bearer token (cached; exchanged when missing or about to expire). */
  accessToken(): Promise<string> {
    return this.#engine.accessToken();
  }

  /** Forgets the cached token; the next call exchanges the key pair again. */
  invalidateToken(): void {
    this.#engine.invalidateToken();
  }

  /** POST /api/v1/auth/token with the configured key pair. */
  exchangeToken(): Promise<TokenResponse> {
    return this.#engine.exchangeToken();
  }

  /** Any engine call, authenticated and retried like the typed ones (for endpoints without a typed method yet). */
  request<T>(call: EngineCall): Promise<T> {
    return this.#engine.call<T>(call);
  }
}
