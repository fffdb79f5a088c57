import type { EngineApi } from '@keel/engine';
import { type EngineCaller, resumeHeaders, seg } from './engine-caller.ts';
import type {
  Page,
  PageQuery,
  SessionCreate,
  SessionState,
  SessionStatus,
  SessionSummary,
  SessionUpdate,
  UserContext,
} from './engine-types.ts';

/**
 * Sessions, their messages, state and resume tokens, and per-user context (`engine.sessions`). Calls on a
 * session take its resume token when the caller is not the session's subject user.
 */
export class EngineSessions {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  list(query: PageQuery & { agent_id?: string; status?: string; subject_type?: string; channel?: string } = {}) {
    return this.#engine.call<Page<EngineApi.Session>>({
      method: 'GET',
      path: '/api/v1/runtime/sessions',
      query: { ...query },
      idempotent: true,
    });
  }

  /** Creates a session; keep the returned resume token in protected server-side state (it is shown once). */
  create(input: SessionCreate) {
    return this.#engine.call<EngineApi.ResumeGrant & { session: EngineApi.Session }>({
      method: 'POST',
      path: '/api/v1/runtime/sessions',
      body: input,
      idempotent: false,
    });
  }

  get(sessionId: string, resumeToken?: string) {
    return this.#engine.call<EngineApi.Session>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  update(sessionId: string, input: SessionUpdate, resumeToken?: string) {
    return this.#engine.call<EngineApi.Session>({
      method: 'PATCH',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  replace(sessionId: string, input: SessionUpdate, resumeToken?: string) {
    return this.#engine.call<EngineApi.Session>({
      method: 'PUT',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  delete(sessionId: string, resumeToken?: string) {
    return this.#engine.call<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  listMessages(sessionId: string, resumeToken?: string, query: { limit?: number; cursor?: number } = {}) {
    return this.#engine.call<Page<EngineApi.Message>>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/messages`,
      query: { ...query },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  appendMessage(sessionId: string, message: { role: 'user' | 'assistant'; content: string }, resumeToken?: string) {
    return this.#engine.call<EngineApi.Message>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/messages`,
      body: message,
      headers: resumeHeaders(resumeToken),
      idempotent: false,
    });
  }

  complete(sessionId: string, resumeToken?: string) {
    return this.#action(sessionId, 'complete', resumeToken);
  }

  cancel(sessionId: string, resumeToken?: string) {
    return this.#action(sessionId, 'cancel', resumeToken);
  }

  /** Clears the pinned flow; the next turn makes a new routing decision. */
  reset(sessionId: string, resumeToken?: string) {
    return this.#action(sessionId, 'reset', resumeToken);
  }

  #action(sessionId: string, action: string, resumeToken: string | undefined) {
    return this.#engine.call<EngineApi.Session>({
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
    return this.#engine.call<EngineApi.ResumeGrant>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/resume-token/refresh`,
      body: input,
      idempotent: false,
    });
  }

  /** Service recovery of an active or expired session (service identities). */
  recoverResumeToken(sessionId: string) {
    return this.#engine.call<EngineApi.ResumeGrant>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/resume-token/recover`,
      idempotent: false,
    });
  }

  status(sessionId: string) {
    return this.#engine.call<SessionStatus>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/status`,
      idempotent: true,
    });
  }

  getState(sessionId: string, resumeToken?: string) {
    return this.#engine.call<SessionState>({
      method: 'GET',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  putState(sessionId: string, state: Record<string, unknown>, resumeToken?: string) {
    return this.#engine.call<SessionState>({
      method: 'PUT',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state`,
      body: { state },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  forgetState(sessionId: string, key: string, resumeToken?: string) {
    return this.#engine.call<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/state/${seg(key)}`,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  summarize(sessionId: string, resumeToken?: string, maxLength?: number) {
    return this.#engine.call<SessionSummary>({
      method: 'POST',
      path: `/api/v1/runtime/sessions/${seg(sessionId)}/summarize`,
      body: maxLength === undefined ? {} : { max_length: maxLength },
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  getUserContext(userId: string) {
    return this.#engine.call<UserContext>({
      method: 'GET',
      path: `/api/v1/runtime/users/${seg(userId)}/context`,
      idempotent: true,
    });
  }

  putUserContext(userId: string, context: Record<string, unknown>) {
    return this.#engine.call<UserContext>({
      method: 'PUT',
      path: `/api/v1/runtime/users/${seg(userId)}/context`,
      body: { context },
      idempotent: true,
    });
  }
}
