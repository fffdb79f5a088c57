import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryCache, openDatabase } from '@keel/core';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'p-'));
const database = await openDatabase<any>({ url: path.join(dir, 'geo.sqlite') });
await prepareGeoDatabase(database.db);
const boot = await bootstrapTenant(database.db);
const { app } = await buildGeoApp({
  config: readGeoConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000' }),
  db: database.db,
  cache: createMemoryCache(),
});
await app.ready();
const events = Array.from({ length: 100 }, (_, i) => ({
  type: i % 5 === 0 ? 'event' : 'pageview',
  ...(i % 5 === 0 ? { name: 'add', properties: { sku: 'S' + i, qty: 1 } } : {}),
  url: `https://shop.example/products/${i}?utm_source=newsletter`,
  referrer: 'https://www.google.com/',
}));
const payload = JSON.stringify({ consent: { analytics: true }, events });
const headers = { 'content-type': 'application/json', 'x-site-token': boot.siteToken };
for (let i = 0; i < 200; i++) await app.inject({ method: 'POST', url: '/api/v2/geo/events', headers, payload });
const t0 = performance.now();
const N = 1000;
for (let i = 0; i < N; i++) {
  const r = await app.inject({ method: 'POST', url: '/api/v2/geo/events', headers, payload });
  if (r.statusCode !== 202) throw new Error(r.body);
}
const ms = performance.now() - t0;
console.log(`inject: ${(ms / N).toFixed(3)} ms/batch, ${Math.round((N * 100) / (ms / 1000))} events/s`);
await app.close();
await database.close();
