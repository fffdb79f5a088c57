// Server-side clients of the Keel services, one folder per client; shared HTTP plumbing in http/.

export type { GeoApi } from '@keel/geo';
export {
  type AnalyticsQuery,
  GeoClient,
  type GeoClientOptions,
  type IdempotencyOption,
  type ToolResult,
} from './geo/geo-client.ts';
export { ApiError, ToolCallError, TransportError } from './http/errors.ts';
