import type { EngineApi } from '@keel/engine';
import { type EngineCaller, seg } from './engine-caller.ts';

/** Agent configuration: prompt, provider, settings, routing profile (`engine.agents`). */
export class EngineAgents {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  getConfig(agentId: string) {
    return this.#engine.call<EngineApi.AgentConfig>({
      method: 'GET',
      path: `/api/v1/runtime/agents/${seg(agentId)}/config`,
      idempotent: true,
    });
  }

  putConfig(agentId: string, input: EngineApi.AgentConfigInput) {
    return this.#engine.call<EngineApi.AgentConfig>({
      method: 'PUT',
      path: `/api/v1/runtime/agents/${seg(agentId)}/config`,
      body: input,
      idempotent: true,
    });
  }
}
