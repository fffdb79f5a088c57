import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase, sha256Hex } from '@keel/core';
import { keelInProcess } from '../../cli/test/in-process.ts';
import type { GeoDb } from '../src/db/schema.ts';

test('keel geo: bootstrap --json prints the documented object; tenants, workspaces, keys and site tokens from the CLI', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-geo-cli-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = { KEEL_DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: undefined };
  // `keel geo …` in this process: its output, or a rejection with its message when it exits non-zero.
  const keel = async (...args: string[]) => {
    const result = await keelInProcess(['geo', ...args], env);
    if (result.code !== 0) throw new Error(`keel geo exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };

  const first = JSON.parse(await keel('bootstrap', '--json'));
  const second = JSON.parse(await keel('bootstrap', '--json'));
  assert.deepEqual(Object.keys(first).sort(), ['keys', 'siteToken', 'tenantId', 'workspaceId', 'workspaceIds']);
  assert.deepEqual(Object.keys(first.keys).sort(), ['admin', 'read', 'signals', 'write']);
  assert.equal(first.workspaceIds.length, 2);
  assert.equal(first.workspaceIds[0], first.workspaceId);
  assert.notEqual(first.tenantId, second.tenantId, 'each run makes a new tenant');

  const tenant = JSON.parse(await keel('tenant', 'create', '--name', 'Acme', '--json'));
  const workspace = JSON.parse(
    await keel(
      'workspace',
      'create',
      '--tenant',
      tenant.tenantId,
      '--name',
      'Shop',
      '--timezone',
      'Europe/Berlin',
      '--json',
    ),
  );
  const key = JSON.parse(
    await keel(
      'key',
      'create',
      '--tenant',
      tenant.tenantId,
      '--name',
      'reader',
      '--permissions',
      'geo:read',
      '--workspace',
      workspace.workspaceId,
      '--expires-in-days',
      '30',
      '--json',
    ),
  );
  const site = JSON.parse(
    await keel('site-token', 'create', '--tenant', tenant.tenantId, '--workspace', workspace.workspaceId, '--json'),
  );
  assert.match(key.key, /^geo_/);
  assert.deepEqual(key.scope, { type: 'workspace', workspaceIds: [workspace.workspaceId] });
  assert.match(site.token, /^geosite_/);
  await assert.rejects(
    keel('key', 'create', '--tenant', tenant.tenantId, '--name', 'x', '--permissions', 'geo:everything'),
    /Unknown permission/,
  );
  await assert.rejects(
    keel('site-token', 'create', '--tenant', tenant.tenantId, '--workspace', first.workspaceId),
    /no access/,
    "another tenant's workspace",
  );

  const database = await openDatabase<GeoDb>({ url: path.join(dataDir, 'geo.sqlite') });
  try {
    const row = await database.db.selectFrom('api_key').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256Hex(key.key));
    const ws = await database.db
      .selectFrom('workspace')
      .selectAll()
      .where('id', '=', workspace.workspaceId)
      .executeTakeFirstOrThrow();
    assert.equal(ws.timezone, 'Europe/Berlin');
  } finally {
    await database.close();
  }
});
