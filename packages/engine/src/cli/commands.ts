import type { CliCommand } from '@keel/core';
import { ENGINE_USAGE, IMPORT_USAGE } from './usage.ts';

/**
 * The commands the engine adds to `keel` (`keel engine …`, `keel import …`). This module loads nothing but their
 * usage lines: a command's code (and the part of the engine it needs) is imported when it runs, so `keel help` and
 * the other services' commands start without the engine. The `@keel/engine/commands` entry point.
 */
export const engineCommands: CliCommand[] = [
  {
    name: 'engine',
    usage: ENGINE_USAGE,
    run: async (args, io) => (await import('./engine-command.ts')).engineCommand.run(args, io),
  },
  {
    name: 'import',
    usage: IMPORT_USAGE,
    run: async (args, io) => (await import('./import-command.ts')).importCommand.run(args, io),
  },
];
