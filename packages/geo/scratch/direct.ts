import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryCache, openDatabase } from '@keel/core';
import { prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import { ingestEvents, SiteTokenDirectory } from '../src/events/event-service.ts';
import { VisitorSalts } from '../src/events/visitor-salt.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'p-'));
const database = await openDatabase<any>({ url: path.join(dir, 'geo.sqlite') });
await prepareGeoDatabase(database.db);
const boot = await bootstrapTenant(database.db);
const ctx: any = {
  config: readGeoConfig({}),
  db: database.db,
  cache: createMemoryCache(),
  log: console,
  now: () => new Date(),
};
const dirx = new SiteTokenDirectory(ctx);
const salts = new VisitorSalts(database.db);
const events = Array.from({ length: 100 }, (_, i) => ({
  type: i % 5 === 0 ? 'event' : 'pageview',
  ...(i % 5 === 0 ? { name: 'add', properties: { sku: 'S' + i, qty: 1 } } : {}),
  url: `https://shop.example/products/${i}?utm_source=newsletter`,
  referrer: 'https://www.google.com/',
}));
const body = JSON.stringify({ consent: { analytics: true }, events });
for (const mode of ['full', 'full']) {
  const N = 1000;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const site = await dirx.identify(boot.siteToken);
    await ingestEvents(ctx, salts, site, JSON.parse(body), { ip: '1.2.3.4', userAgent: 'Mozilla' });
  }
  const ms = performance.now() - t0;
  console.log(mode, (ms / N).toFixed(3), 'ms/batch', Math.round((N * 100) / (ms / 1000)), 'events/s');
}
