// Entry point of one guard worker process (GUARD_WORKERS > 1): the primary has migrated the database; this
// process serves guard on the shared port until the primary asks it to stop.
import { reportListening } from '@keel/core';
import { runGuardInstance } from './service.ts';

const instance = await runGuardInstance(process.env, { prepare: false });
reportListening(instance.port, instance.close);
