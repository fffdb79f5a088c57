import type { EngineApi } from '@keel/engine';
import { type EngineCaller, seg } from './engine-caller.ts';
import type { Page, PageQuery } from './engine-types.ts';

/** Versioned system prompts of the caller's realm (`engine.prompts`). */
export class EnginePrompts {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  list(query: PageQuery & { key?: string; is_active?: boolean } = {}) {
    return this.#engine.call<Page<EngineApi.Prompt>>({
      method: 'GET',
      path: '/api/v1/runtime/prompts',
      query: { ...query },
      idempotent: true,
    });
  }

  create(input: EngineApi.PromptInput) {
    return this.#engine.call<EngineApi.Prompt>({
      method: 'POST',
      path: '/api/v1/runtime/prompts',
      body: input,
      idempotent: false,
    });
  }

  get(id: string) {
    return this.#engine.call<EngineApi.Prompt>({
      method: 'GET',
      path: `/api/v1/runtime/prompts/${seg(id)}`,
      idempotent: true,
    });
  }

  update(id: string, input: EngineApi.PromptInput) {
    return this.#engine.call<EngineApi.Prompt>({
      method: 'PUT',
      path: `/api/v1/runtime/prompts/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  delete(id: string) {
    return this.#engine.call<void>({ method: 'DELETE', path: `/api/v1/runtime/prompts/${seg(id)}`, idempotent: true });
  }

  activate(id: string) {
    return this.#engine.call<EngineApi.Prompt>({
      method: 'POST',
      path: `/api/v1/runtime/prompts/${seg(id)}/activate`,
      idempotent: true,
    });
  }
}
