import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createMemoryCache, openDatabase } from '@keel/core';
import { keelInProcess } from '../../cli/test/in-process.ts';
import { buildGeoApp, geoSecretBox } from '../src/app.ts';
import { readGeoConfig } from '../src/config.ts';
import type { GeoDb } from '../src/db/schema.ts';
import { startEngineDouble } from './engine-double.ts';
import { call } from './helper.ts';

test('keel geo prompts import loads a CSV; keel geo run shows progress and prints the metrics table', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-measure-cli-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    KEEL_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    KEEL_ALLOW_PRIVATE_URLS: 'true',
    DATABASE_URL: undefined,
  };
  // `keel geo …` in this process.
  const keel = (...args: string[]) => keelInProcess(['geo', ...args], env);
  const boot = JSON.parse((await keel('bootstrap', '--json')).stdout);

  const double = await startEngineDouble({
    e1: {
      default: [
        { text: 'Acme is a great pick [1].', citations: ['https://acme.com/'] },
        { text: 'Globex is a fine pick.' },
      ],
    },
  });
  t.after(() => double.close());
  // An engine and the graph through the API (the CLI has no engine command).
  const config = readGeoConfig(env);
  const database = await openDatabase<GeoDb>({ url: path.join(dataDir, 'geo.sqlite') });
  const { app } = await buildGeoApp({
    config,
    db: database.db,
    cache: createMemoryCache(),
    secrets: geoSecretBox(config),
  });
  const engine = await call(app, 'POST', '/api/v1/geo/engines', {
    key: boot.keys.write,
    body: {
      workspaceId: boot.workspaceId,
      name: 'e1',
      provider: 'chat_completions',
      baseUrl: double.baseUrl('e1'),
      model: 'double',
    },
  });
  assert.equal(engine.status, 201);
  await call(app, 'POST', '/api/v1/geo/target-graph', {
    key: boot.keys.write,
    headers: { 'idempotency-key': 'g' },
    body: {
      operation: 'import',
      workspaceId: boot.workspaceId,
      targets: [
        { key: 'acme', name: 'Acme', url: 'https://acme.com' },
        { key: 'globex', name: 'Globex', kind: 'competitor' },
      ],
      relations: [],
    },
  });
  await app.close();
  await database.close();

  const csv = path.join(dataDir, 'prompts.csv');
  fs.writeFileSync(csv, 'text,topic,locale\n"best crm, for startups",crm,en\ncheapest crm,crm,en-US\n');
  const imported = await keel('prompts', 'import', '--workspace', boot.workspaceId, '--file', csv);
  assert.equal(imported.stdout.trim(), '2 prompts created, 0 updated (2 in the file)');
  const again = JSON.parse(
    (await keel('prompts', 'import', '--workspace', boot.workspaceId, '--file', csv, '--json')).stdout,
  );
  assert.deepEqual([again.created, again.updated], [0, 2]);

  const ran = await keel('run', '--workspace', boot.workspaceId, '--samples', '2', '--seed', '3');
  assert.match(ran.stderr, /4\/4 answers/);
  assert.match(ran.stdout, /completed/);
  assert.match(ran.stdout, /mention_rate\s+0\.5000\s+\[0\.1500, 0\.8500\]\s+4/);
  assert.match(ran.stdout, /subjective_impression\s+skipped/);
  assert.match(ran.stdout, /4 answered, 0 failed/);

  assert.equal(imported.code, 0);
  assert.equal(ran.code, 0);
  const bad = await keel('run', '--workspace', 'nope');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--workspace must be a UUID/);
  const csvBad = path.join(dataDir, 'bad.csv');
  fs.writeFileSync(csvBad, 'topic\ncrm\n');
  const rejected = await keel('prompts', 'import', '--workspace', boot.workspaceId, '--file', csvBad);
  assert.notEqual(rejected.code, 0);
  assert.match(rejected.stderr, /text/);
});
