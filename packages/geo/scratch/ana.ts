import { createMemoryCache, openDatabase } from '@keel/core';
import { buildGeoApp, prepareGeoDatabase } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import { bootstrapTenant } from '../src/tenancy/tenancy-service.ts';

const database = await openDatabase<any>({ url: ':memory:' });
await prepareGeoDatabase(database.db);
const boot = await bootstrapTenant(database.db);
const { app } = await buildGeoApp({
  config: readGeoConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000' }),
  db: database.db,
  cache: createMemoryCache(),
});
await app.ready();
const records = Array.from({ length: 500 }, (_, i) => ({
  dataset: 'metrics',
  definitionVersion: 'v/3',
  runId: 'run-1',
  data: { metric: 'ai_visibility', engine: 'chatgpt', query: `query ${i}`, value: 0.5 },
  confidence: { value: 0.5, interval: [0.4, 0.6] },
  evidence: [{ type: 'query', ref: `q-${i}` }],
}));
for (let k = 0; k < 4; k++)
  await app.inject({
    method: 'POST',
    url: '/api/v1/geo/signals',
    headers: {
      authorization: `Bearer ${boot.keys.admin}`,
      'content-type': 'application/json',
      'idempotency-key': `k${k}`,
    },
    payload: JSON.stringify({ workspaceId: boot.workspaceId, records }),
  });
const url = `/api/v1/geo/analytics?workspaceId=${boot.workspaceId}&dataset=metrics&limit=100`;
const headers = { authorization: `Bearer ${boot.keys.read}` };
for (let i = 0; i < 200; i++) await app.inject({ method: 'GET', url, headers });
const N = 1000;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const r = await app.inject({ method: 'GET', url, headers });
  if (r.statusCode !== 200) throw new Error(r.body);
}
console.log('analytics inject', ((performance.now() - t0) / N).toFixed(3), 'ms/request');
