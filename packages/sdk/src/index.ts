// Server-side clients of the Keel services, one folder per client; shared HTTP plumbing in http/.

export type { GeoApi } from '@keel/geo';
export {
  type ActionType,
  type AgentConfig,
  type AgentConfigInput,
  type ChatRequest,
  type Credentials,
  EngineClient,
  type EngineClientOptions,
  type ExecuteRequest,
  type Knowledge,
  type NormalizedAction,
  type Prompt,
  type Provider,
  type ResumeGrant,
  type RunResult,
  type Session,
  type TokenResponse,
} from './engine-client.ts';
export {
  type AnalyticsQuery,
  GeoClient,
  type GeoClientOptions,
  type IdempotencyOption,
  type ToolResult,
} from './geo/geo-client.ts';
export { ApiError, ToolCallError, TransportError } from './http/errors.ts';
