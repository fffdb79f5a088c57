import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryCache, openDatabase } from '@keel/core';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'g-'));
const database = await openDatabase<any>({ url: path.join(dir, 'geo.sqlite') });
await prepareGeoDatabase(database.db);
if (process.env.BIGCACHE) {
  const { sql } = await import('kysely');
  await sql`PRAGMA cache_size = -131072`.execute(database.db);
}
const boot = await bootstrapTenant(database.db);
const { app } = await buildGeoApp({
  config: readGeoConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000' }),
  db: database.db,
  cache: createMemoryCache(),
});
await app.ready();
const T = 10000,
  R = 50000;
const targets = Array.from({ length: T }, (_, i) => ({
  key: `t${i}`,
  name: `Target ${i}`,
  kind: 'page',
  url: `https://shop.example/p/${i}`,
}));
const seen = new Set<string>();
const relations: any[] = [];
let s = 1;
const rnd = () => {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
while (relations.length < R) {
  const a = Math.floor(rnd() * (T - 1));
  const b = a + 1 + Math.floor(rnd() * Math.min(200, T - a - 1));
  const k = a + '>' + b;
  if (seen.has(k)) continue;
  seen.add(k);
  relations.push({ from: `t${a}`, to: `t${b}`, kind: 'links_to' });
}
for (let run = 0; run < 2; run++) {
  const payload = JSON.stringify({
    operation: 'import',
    workspaceId: boot.workspaceId,
    projectId: `0195f3a2-7c1e-7d4b-9a61-00000000000${run}`,
    targets,
    relations,
  });
  const t0 = performance.now();
  (globalThis as any).T = t0;
  const r = await app.inject({
    method: 'POST',
    url: '/api/v1/geo/target-graph',
    headers: {
      authorization: `Bearer ${boot.keys.write}`,
      'content-type': 'application/json',
      'idempotency-key': 'g' + run,
    },
    payload,
  });
  console.log('import', r.statusCode, Math.round(performance.now() - t0), 'ms');
}
