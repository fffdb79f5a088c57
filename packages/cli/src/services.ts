import { type CliCommand, ConfigError, type Env, type ServiceDefinition } from '@keel/core';
import { engineService, readEngineConfig } from '@keel/engine';
import { geoService, readGeoConfig } from '@keel/geo';
import { guardService, readGuardConfig } from '@keel/guard';
import { UsageError } from './errors.ts';

export { UsageError };

/** Every service `keel start` and `keel migrate` know, in start order. */
export const SERVICES: readonly ServiceDefinition[] = [guardService, engineService, geoService];

/** The services named on the command line (all when none), or an error naming the unknown one. */
export function selectServices(names: readonly string[]): ServiceDefinition[] {
  if (names.length === 0) return [...SERVICES];
  return names.map((name) => {
    const service = SERVICES.find((s) => s.name === name);
    if (!service) throw new UsageError(`unknown service "${name}" (known: ${SERVICES.map((s) => s.name).join(', ')})`);
    return service;
  });
}

/** Commands the services contribute (`keel geo …`, `keel import …`). */
export function serviceCommands(): CliCommand[] {
  return SERVICES.flatMap((service) => service.commands ?? []);
}

const CONFIG_READERS: Record<string, (env: Env) => unknown> = {
  guard: readGuardConfig,
  engine: readEngineConfig,
  geo: readGeoConfig,
};

/**
 * Reads every named service's configuration before anything starts, and throws one ConfigError listing every
 * bad variable of every service (each shared variable once).
 */
export function checkConfigurations(services: readonly ServiceDefinition[], env: Env): void {
  const problems = new Set<string>();
  for (const service of services) {
    try {
      CONFIG_READERS[service.name]?.(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const line of error.message.split('\n').slice(1)) problems.add(line.replace(/^\s*-\s*/, ''));
    }
  }
  if (problems.size > 0) throw new ConfigError(`Invalid configuration:\n  - ${[...problems].join('\n  - ')}`);
}
