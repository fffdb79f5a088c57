import { parseArgs } from 'node:util';
import {
  ConfigError,
  ConfigReader,
  describeServiceDatabase,
  type Env,
  type RunningService,
  readCoreConfig,
} from '@keel/core';
import { type LoadedService, selectServices } from '../services.ts';

/**
 * `keel start [service…]`: starts the named services (all by default) in this process, prints their
 * addresses, and on SIGINT/SIGTERM stops accepting connections, lets in-flight requests finish, and exits.
 */
export async function startCommand(args: string[], env: Env, out: NodeJS.WritableStream): Promise<void> {
  const names = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const services = await selectServices(names);
  // Every service's configuration is checked before any of them starts (and creates data or prints keys).
  checkConfigurations(services, env);
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  reader.done();
  const running: RunningService[] = [];
  try {
    for (const service of services) running.push(await service.definition.start({ env, core }));
  } catch (error) {
    await Promise.allSettled(running.map((r) => r.close()));
    throw error;
  }
  for (const service of running) {
    for (const address of service.addresses) out.write(`keel: ${address.label} listening on ${address.url}\n`);
    out.write(`keel: ${service.name} store: ${describeServiceDatabase(core, service.name)}\n`);
  }
  out.write(`keel: ready (${running.map((r) => r.name).join(', ')}); Ctrl-C to stop\n`);
  out.write(nextSteps(running, env));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    out.write(`keel: ${signal} received, finishing in-flight requests…\n`);
    const force = setTimeout(() => {
      out.write('keel: shutdown took longer than 30 s, exiting\n');
      process.exit(1);
    }, 30_000);
    force.unref();
    const results = await Promise.allSettled(running.map((r) => r.close()));
    const failed = results.filter((r) => r.status === 'rejected').length;
    out.write(failed ? `keel: stopped with ${failed} error(s)\n` : 'keel: stopped\n');
    process.exit(failed ? 1 : 0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

/**
 * Reads every named service's configuration before anything starts, and throws one ConfigError listing every
 * bad variable of every service (each shared variable once).
 */
function checkConfigurations(services: readonly LoadedService[], env: Env): void {
  const problems = new Set<string>();
  for (const service of services) {
    try {
      service.readConfig(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const line of error.message.split('\n').slice(1)) problems.add(line.replace(/^\s*-\s*/, ''));
    }
  }
  if (problems.size > 0) throw new ConfigError(`Invalid configuration:\n  - ${[...problems].join('\n  - ')}`);
}

/** A value as one shell word. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * What to do next, printed once everything listens: the API reference pages, credentials, a first request. The
 * bootstrap commands must write to the store the services read: they carry a non-default `KEEL_DATA_DIR`, and a
 * note names `DATABASE_URL` when it is set (never its value, which may hold a password).
 */
export function nextSteps(running: readonly RunningService[], env: Env = {}): string {
  const prefix = !env.DATABASE_URL && env.KEEL_DATA_DIR ? `KEEL_DATA_DIR=${shellWord(env.KEEL_DATA_DIR)} ` : '';
  const base = (label: string) =>
    running
      .flatMap((r) => r.addresses)
      .find((a) => a.label === label)
      ?.url.split(' ')[0];
  const lines = ['', 'API reference pages (OpenAPI at /openapi.json on each listener):'];
  for (const address of running.flatMap((r) => r.addresses))
    lines.push(`  ${address.label.padEnd(16)} ${address.url.split(' ')[0]}/docs`);
  const names = new Set(running.map((r) => r.name));
  lines.push('', 'Next:');
  const guard = base('guard');
  if (guard)
    lines.push(
      `  curl -s ${guard}/detect -H 'content-type: application/json' -d '{"text": "Mail jane.doe@example.org"}'`,
    );
  if (names.has('geo'))
    lines.push(`  ${prefix}npx keel geo bootstrap       geo credentials: a tenant, workspaces, API keys, a site token`);
  if (names.has('engine'))
    lines.push(`  ${prefix}npx keel engine bootstrap    engine credentials: merchant keys and a runtime key pair`);
  if (env.DATABASE_URL && (names.has('geo') || names.has('engine')))
    lines.push(
      '  (run the bootstrap commands with the same DATABASE_URL, so they write to the database the services use)',
    );
  lines.push('  npx keel help                every command; the SDK: packages/sdk/README.md', '');
  return lines.join('\n');
}
