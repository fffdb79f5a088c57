import type { Cache } from '@keel/core';
import type { ModelProvider } from '@keel/models';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { AiValidatorClient } from './ai/ai-validator.ts';
import type { AuditRecorder } from './audit/audit-recorder.ts';
import type { GuardConfig } from './config.ts';
import type { GuardDb } from './db/schema.ts';
import type { UserWork } from './sandbox/user-work.ts';
import type { ActiveConfigCache } from './state/active-config.ts';

/** What guard's service functions work with; built once in `buildGuardApp`. */
export interface GuardContext {
  config: GuardConfig;
  db: Kysely<GuardDb>;
  cache: Cache;
  activeConfig: ActiveConfigCache;
  /** The upstream model, when one is configured. */
  provider: ModelProvider | undefined;
  aiValidator: AiValidatorClient | undefined;
  audit: AuditRecorder;
  /** Worker threads that run user patterns and REGEX/SCHEMA validators under a hard deadline. */
  userWork: UserWork;
  log: FastifyBaseLogger;
}
