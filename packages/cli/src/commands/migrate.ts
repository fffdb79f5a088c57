import { parseArgs } from 'node:util';
import { ConfigReader, type Env, readCoreConfig } from '@keel/core';
import { selectServices } from '../services.ts';

/** `keel migrate [service…]`: applies pending migrations to each service's database (DATABASE_URL or SQLite). */
export async function migrateCommand(args: string[], env: Env, out: NodeJS.WritableStream): Promise<void> {
  const names = parseArgs({ args, options: {}, allowPositionals: true }).positionals;
  const reader = new ConfigReader(env);
  const core = readCoreConfig(reader);
  reader.done();
  for (const { definition } of await selectServices(names)) {
    const applied = await definition.migrate({ env, core });
    out.write(
      applied.length === 0
        ? `keel: ${definition.name} is up to date\n`
        : `keel: ${definition.name}: applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
    );
  }
}
