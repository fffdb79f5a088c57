import { parseArgs } from 'node:util';
import { ConfigReader, type Env, readCoreConfig } from '@keel/core';
import { selectServices } from '../services.ts';

export const MIGRATE_USAGE = `migrate [SERVICE…]              apply database migrations to DATABASE_URL (or the embedded SQLite files)`;

/** `keel migrate [service…]`: applies pending migrations to each service's database (DATABASE_URL or SQLite). */
export async function migrateCommand(args: string[], env: Env, out: NodeJS.WritableStream): Promise<void> {
  const names = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  reader.done();
  for (const service of selectServices(names)) {
    const applied = await service.migrate({ env, core });
    out.write(
      applied.length === 0
        ? `keel: ${service.name} is up to date\n`
        : `keel: ${service.name}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
    );
  }
}
