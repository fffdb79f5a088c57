import { parseArgs } from 'node:util';
import { ConfigReader, describeServiceDatabase, type Env, type RunningService, readCoreConfig } from '@keel/core';
import { checkConfigurations, selectServices } from '../services.ts';

export const START_USAGE = `start [SERVICE…]                start services (default: all: guard, engine, geo) on the embedded defaults;
Ctrl-C stops gracefully`;

/**
 * `keel start [service…]`: starts the named services (all by default) in this process, prints their
 * addresses, and on SIGINT/SIGTERM stops accepting connections, lets in-flight requests finish, and exits.
 */
export async function startCommand(args: string[], env: Env, out: NodeJS.WritableStream): Promise<void> {
  const names = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const services = selectServices(names);
  // Every service's configuration is checked before any of them starts (and creates data or prints keys).
  checkConfigurations(services, env);
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  reader.done();
  const running: RunningService[] = [];
  try {
    for (const service of services) running.push(await service.start({ env, core }));
  } catch (error) {
    await Promise.allSettled(running.map((r) => r.close()));
    throw error;
  }
  for (const service of running) {
    for (const address of service.addresses) out.write(`keel: ${address.label} listening on ${address.url}\n`);
    out.write(`keel: ${service.name} store: ${describeServiceDatabase(core, service.name)}\n`);
  }
  out.write(`keel: ready (${running.map((r) => r.name).join(', ')}); Ctrl-C to stop\n`);

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
