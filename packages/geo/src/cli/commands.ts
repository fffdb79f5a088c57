import type { CliCommand } from '@keel/core';
import { GEO_USAGE } from './usage.ts';

/**
 * The command geo adds to `keel` (`keel geo …`). This module loads nothing but its usage lines: the command's code
 * (and the part of geo it needs) is imported when it runs, so `keel help` and the other services' commands start
 * without geo. The `@keel/geo/commands` entry point.
 */
export const geoCommands: CliCommand[] = [
  {
    name: 'geo',
    usage: GEO_USAGE,
    run: async (args, io) => (await import('./geo-command.ts')).geoCommand.run(args, io),
  },
];
