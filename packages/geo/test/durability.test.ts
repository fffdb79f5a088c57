import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '@keel/core';
import pg from 'pg';
import { keelInProcess } from '../../cli/test/in-process.ts';
import type { GeoDb } from '../src/db/schema.ts';
import { testDatabaseTargets } from './helper.ts';

const KEEL = path.join(import.meta.dirname, '..', '..', 'cli', 'src', 'keel.ts');

for (const target of testDatabaseTargets()) {
  test(`a batch answered 202 is in the store after the process is killed right after (${target.dialect})`, async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-kill-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      KEEL_DATA_DIR: dataDir,
      GEO_PORT: '0',
      LOG_LEVEL: 'warn',
      GEO_WORKER_ENABLED: 'false',
    };
    delete env.DATABASE_URL;
    let databaseUrl = target.url;
    if (target.dialect === 'postgres') {
      // A database of its own: the service always uses the schema "geo", which this test must not share.
      const name = `geo_kill_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: target.url });
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      const url = new URL(target.url);
      url.pathname = `/${name}`;
      databaseUrl = url.toString();
      env.DATABASE_URL = databaseUrl;
      t.after(async () => {
        const cleanup = new pg.Client({ connectionString: target.url });
        await cleanup.connect();
        await cleanup.query(`drop database if exists ${name} with (force)`);
        await cleanup.end();
      });
    }
    // Credentials from `keel geo bootstrap` (in this process); the service under test runs in a child it kills.
    const bootstrap = await keelInProcess(['geo', 'bootstrap', '--json'], { ...env, DATABASE_URL: env.DATABASE_URL });
    assert.equal(bootstrap.code, 0, bootstrap.stderr);
    const boot = JSON.parse(bootstrap.stdout);
    const child = spawn(process.execPath, [KEEL, 'start', 'geo'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stdout.on('data', (chunk) => {
        seen += chunk;
        const match = seen.match(/geo listening on (\S+)/);
        if (match) resolve(match[1]!);
      });
      child.on('exit', (code) => reject(new Error(`geo exited with ${code}`)));
    });
    const marker = `kill-${Date.now()}`;
    const batches = 20;
    const responses = await Promise.all(
      Array.from({ length: batches }, (_, b) =>
        fetch(`${url}/api/v2/geo/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-site-token': boot.siteToken },
          body: JSON.stringify({
            events: Array.from({ length: 100 }, (_, i) => ({ type: 'event', name: marker, url: `/b${b}/e${i}` })),
          }),
        }),
      ),
    );
    // Killed the moment the last 202 arrived: no graceful shutdown, nothing flushed afterwards.
    child.kill('SIGKILL');
    for (const response of responses) assert.equal(response.status, 202);
    await new Promise((resolve) => child.once('exit', resolve));

    const database = await openDatabase<GeoDb>(
      target.dialect === 'postgres' ? { url: databaseUrl, schema: 'geo' } : { url: path.join(dataDir, 'geo.sqlite') },
    );
    try {
      const row = await database.db
        .selectFrom('tracking_event')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', boot.workspaceId)
        .where('name', '=', marker)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.n), batches * 100, 'every accepted event survived the kill');
    } finally {
      await database.close();
    }
  });
}
