import type { MigrationSet } from '@keel/core';
import * as createGuardTables from './2026_11_21_0001_create_guard_tables.ts';

/** Guard's migrations, in the order they run. */
export const guardMigrations: MigrationSet = {
  '2026_11_21_0001_create_guard_tables': createGuardTables,
};
