import type { EngineApi } from '@keel/engine';
import type { EngineCaller } from './engine-caller.ts';

/** Execute and chat turns, status and discovery (`engine.runtime`). */
export class EngineRuntime {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  /** One synchronous turn. Retried on transient failures only when it carries an idempotency_key. */
  execute(input: EngineApi.ExecuteRequest) {
    return this.#engine.call<EngineApi.RunResult>({
      method: 'POST',
      path: '/api/v1/runtime/execute',
      body: input,
      idempotent: input.idempotency_key !== undefined,
    });
  }

  /** One chat turn over a message list. Retried on transient failures only when it carries an idempotency_key. */
  chat(input: EngineApi.ChatRequest) {
    return this.#engine.call<EngineApi.RunResult>({
      method: 'POST',
      path: '/api/v1/runtime/ai/chat',
      body: input,
      idempotent: input.idempotency_key !== undefined,
    });
  }

  health() {
    return this.#engine.call<{ status: string }>({
      method: 'GET',
      path: '/api/v1/health',
      idempotent: true,
      anonymous: true,
    });
  }

  ready() {
    return this.#engine.call<{ status: string }>({
      method: 'GET',
      path: '/api/v1/ready',
      idempotent: true,
      anonymous: true,
    });
  }

  status() {
    return this.#engine.call<Record<string, unknown>>({
      method: 'GET',
      path: '/api/v1/runtime/status',
      idempotent: true,
    });
  }

  capabilities() {
    return this.#engine.call<Record<string, unknown>>({
      method: 'GET',
      path: '/api/v1/runtime/capabilities',
      idempotent: true,
    });
  }

  /** The versioned client contract (endpoint templates, transports, normalized actions, bounded schemas). */
  sdkConfig() {
    return this.#engine.call<Record<string, unknown>>({
      method: 'GET',
      path: '/api/v1/sdk/config',
      idempotent: true,
      anonymous: true,
    });
  }
}
