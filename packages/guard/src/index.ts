export { guardApiSchemas } from './api-schemas.ts';
export type * as GuardApi from './api-types.ts';
export { buildGuardApp, GUARD_VERSION, type GuardAppOptions, prepareGuardDatabase } from './app.ts';
export { type GuardConfig, PERMISSIONS, type Permission, readGuardConfig } from './config.ts';
export type { GuardContext } from './context.ts';
export type { GuardDb } from './db/schema.ts';
export { analyzeText, type DetectResponse } from './detect-api/analyze-text.ts';
export { createLocalScanner } from './local-scanner.ts';
export { guardService } from './service.ts';
