// Server-side clients of the Keel services, one folder per client; shared HTTP plumbing in http/.

export type { EngineApi } from '@keel/engine';
export type { GeoApi } from '@keel/geo';
export type { GuardApi } from '@keel/guard';
export type { EngineAgents } from './engine/agents.ts';
export type { EngineCall, EngineClientOptions, TokenResponse } from './engine/engine-caller.ts';
export { EngineClient } from './engine/engine-client.ts';
export type * from './engine/engine-types.ts';
export type { EngineIdentity } from './engine/identity.ts';
export type { EngineKnowledge } from './engine/knowledge.ts';
export type { EnginePrompts } from './engine/prompts.ts';
export type { EngineProviders } from './engine/providers.ts';
export type { EngineRuntime } from './engine/runtime.ts';
export type { EngineSessions } from './engine/sessions.ts';
export {
  type AnalyticsQuery,
  GeoClient,
  type GeoClientOptions,
  type IdempotencyOption,
  type ToolResult,
} from './geo/geo-client.ts';
export { GuardClient, type GuardClientOptions, type GuardList } from './guard/guard-client.ts';
export { ApiError, ToolCallError, TransportError } from './http/errors.ts';
