import type { EngineApi } from '@keel/engine';
import { type EngineCaller, seg } from './engine-caller.ts';
import type { Page, PageQuery } from './engine-types.ts';

/** Model providers of the caller's realm and the provider templates (`engine.providers`). */
export class EngineProviders {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  listTemplates() {
    return this.#engine.call<{ data: Record<string, unknown>[] }>({
      method: 'GET',
      path: '/api/v1/runtime/providers/templates',
      idempotent: true,
    });
  }

  getTemplate(type: string) {
    return this.#engine.call<Record<string, unknown>>({
      method: 'GET',
      path: `/api/v1/runtime/providers/templates/${seg(type)}`,
      idempotent: true,
    });
  }

  list(query: PageQuery & { type?: string; is_active?: boolean } = {}) {
    return this.#engine.call<Page<EngineApi.Provider>>({
      method: 'GET',
      path: '/api/v1/runtime/providers',
      query: { ...query },
      idempotent: true,
    });
  }

  /** Creates a provider; `api_key` is write-only (stored encrypted, never returned). */
  create(input: EngineApi.ProviderInput) {
    return this.#engine.call<EngineApi.Provider>({
      method: 'POST',
      path: '/api/v1/runtime/providers',
      body: input,
      idempotent: false,
    });
  }

  get(id: string) {
    return this.#engine.call<EngineApi.Provider>({
      method: 'GET',
      path: `/api/v1/runtime/providers/${seg(id)}`,
      idempotent: true,
    });
  }

  /** Replaces the configuration; an omitted api_key keeps the stored one. */
  update(id: string, input: EngineApi.ProviderInput) {
    return this.#engine.call<EngineApi.Provider>({
      method: 'PUT',
      path: `/api/v1/runtime/providers/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  delete(id: string) {
    return this.#engine.call<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/providers/${seg(id)}`,
      idempotent: true,
    });
  }

  /** Sets `is_active`, or flips it when not given (then not retried: a repeat would flip it back). */
  toggle(id: string, isActive?: boolean) {
    return this.#engine.call<EngineApi.Provider>({
      method: 'PATCH',
      path: `/api/v1/runtime/providers/${seg(id)}/toggle`,
      body: isActive === undefined ? {} : { is_active: isActive },
      idempotent: isActive !== undefined,
    });
  }
}
