import type { CliCommand, Env, ServiceDefinition } from '@keel/core';
import { engineCommands } from '@keel/engine/commands';
import { geoCommands } from '@keel/geo/commands';
import { UsageError } from './error-types.ts';

export { UsageError };

/** A service as `keel` knows it before loading it: its commands' usage lines, and how to load the rest. */
interface ServiceEntry {
  name: string;
  /** Commands the service contributes; each imports its own code when it runs. */
  commands: readonly CliCommand[];
  load(): Promise<LoadedService>;
}

/** A service's definition and its configuration reader, imported only when `start` or `migrate` names it. */
export interface LoadedService {
  definition: ServiceDefinition;
  readConfig(env: Env): unknown;
}

/** Every service `keel start` and `keel migrate` know, in start order. */
const SERVICES: readonly ServiceEntry[] = [
  {
    name: 'guard',
    commands: [],
    load: async () => {
      const guard = await import('@keel/guard');
      return { definition: guard.guardService, readConfig: guard.readGuardConfig };
    },
  },
  {
    name: 'engine',
    commands: engineCommands,
    load: async () => {
      const engine = await import('@keel/engine');
      return { definition: engine.engineService, readConfig: engine.readEngineConfig };
    },
  },
  {
    name: 'geo',
    commands: geoCommands,
    load: async () => {
      const geo = await import('@keel/geo');
      return { definition: geo.geoService, readConfig: geo.readGeoConfig };
    },
  },
];

/** The names of every service, in start order. */
export const SERVICE_NAMES: readonly string[] = SERVICES.map((s) => s.name);

/**
 * The services named on the command line (all when none), loaded; a UsageError naming the first unknown one before
 * any service is loaded.
 */
export async function selectServices(names: readonly string[]): Promise<LoadedService[]> {
  const selected =
    names.length === 0
      ? [...SERVICES]
      : names.map((name) => {
          const service = SERVICES.find((s) => s.name === name);
          if (!service) throw new UsageError(`unknown service "${name}" (known: ${SERVICE_NAMES.join(', ')})`);
          return service;
        });
  return Promise.all(selected.map((service) => service.load()));
}

/** Commands the services contribute (`keel geo …`, `keel import …`), without loading any service. */
export function serviceCommands(): CliCommand[] {
  return SERVICES.flatMap((service) => service.commands);
}
