import type { EngineApi } from '@keel/engine';
import { type EngineCaller, resumeHeaders, seg } from './engine-caller.ts';
import type { KnowledgeInput, KnowledgeSearch, Page, PageQuery } from './engine-types.ts';

/** Knowledge entries with provenance, and search over them (`engine.knowledge`). */
export class EngineKnowledge {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  list(
    query: PageQuery & { scope?: 'realm' | 'agent' | 'user'; agent_id?: string; user_id?: string; tag?: string } = {},
  ) {
    return this.#engine.call<Page<EngineApi.Knowledge>>({
      method: 'GET',
      path: '/api/v1/runtime/knowledge',
      query: { ...query },
      idempotent: true,
    });
  }

  create(input: KnowledgeInput, resumeToken?: string) {
    return this.#engine.call<EngineApi.Knowledge>({
      method: 'POST',
      path: '/api/v1/runtime/knowledge',
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: false,
    });
  }

  search(input: KnowledgeSearch, resumeToken?: string) {
    return this.#engine.call<{ data: EngineApi.Knowledge[] }>({
      method: 'POST',
      path: '/api/v1/runtime/knowledge/search',
      body: input,
      headers: resumeHeaders(resumeToken),
      idempotent: true,
    });
  }

  forget(id: string) {
    return this.#engine.call<void>({
      method: 'DELETE',
      path: `/api/v1/runtime/knowledge/${seg(id)}`,
      idempotent: true,
    });
  }
}
