export { engineApiSchemas } from './api-schemas.ts';
export type * as EngineApi from './api-types.ts';
export {
  buildEngineApps,
  ENGINE_VERSION,
  type EngineApps,
  type EngineAppsOptions,
  prepareEngineDatabase,
} from './app.ts';
export { type BootstrapResult, bootstrapMerchant } from './cli/bootstrap.ts';
export { type EngineConfig, readEngineConfig } from './config.ts';
export type { EngineContext } from './context.ts';
export type { EngineDb } from './db/schema.ts';
export type { ActionType, NormalizedAction } from './runtime/actions.ts';
export type { RunResult } from './runtime/orchestrator.ts';
export { engineService } from './service.ts';
