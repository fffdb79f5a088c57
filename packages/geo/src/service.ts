import {
  type CoreConfig,
  type Env,
  openCache,
  openDatabase,
  type RunningService,
  type ServiceDefinition,
} from '@keel/core';
import { buildGeoApp } from './app.ts';
import { geoCommands } from './cli/commands.ts';
import { readGeoConfig } from './config.ts';
import { geoDatabaseUrl, prepareGeoDatabase } from './db/open.ts';
import type { GeoDb } from './db/schema.ts';

/** Starts geo: opens and migrates its database, opens the cache, starts the background worker, then listens. */
async function start({ env }: { env: Env; core: CoreConfig }): Promise<RunningService> {
  const config = readGeoConfig(env);
  const database = await openDatabase<GeoDb>({ url: geoDatabaseUrl(config.core), schema: 'geo' });
  const opened = openCache({ redisUrl: config.core.redisUrl, service: 'geo' });
  let built: Awaited<ReturnType<typeof buildGeoApp>> | undefined;
  try {
    await prepareGeoDatabase(database.db);
    built = await buildGeoApp({
      config,
      db: database.db,
      cache: opened.cache,
      redis: opened.redis,
      startWorker: config.worker.enabled,
    });
    const { app } = built;
    await app.listen({ host: config.core.host, port: config.core.ports.geo });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.core.ports.geo;
    const host = config.core.host;
    const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return {
      name: 'geo',
      addresses: [{ label: 'geo', url: base }],
      close: async () => {
        await app.close();
        await opened.close();
        await database.close();
      },
    };
  } catch (error) {
    // Stops the background worker too, before the database goes away.
    await built?.app.close().catch(() => undefined);
    await opened.close();
    await database.close();
    throw error;
  }
}

async function migrate({ env }: { env: Env; core: CoreConfig }): Promise<string[]> {
  const config = readGeoConfig(env);
  const database = await openDatabase<GeoDb>({ url: geoDatabaseUrl(config.core), schema: 'geo' });
  try {
    return await prepareGeoDatabase(database.db);
  } finally {
    await database.close();
  }
}

export const geoService: ServiceDefinition = {
  name: 'geo',
  description:
    'Workspace measurement for generative engine optimization: datasets, target graph, privacy, exports, MCP tools, tracking events, shares',
  start,
  migrate,
  commands: geoCommands,
};
