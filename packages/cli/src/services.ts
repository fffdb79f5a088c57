import type { CliCommand, ServiceDefinition } from '@keel/core';
import { engineService } from '@keel/engine';
import { geoService } from '@keel/geo';
import { guardService } from '@keel/guard';

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

/** A mistake on the command line: printed without a stack, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
