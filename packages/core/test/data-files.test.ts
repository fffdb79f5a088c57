import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { loadSecretKey, openDatabase } from '../src/index.ts';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

function tempRoot(t: { after(fn: () => void): void }): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-files-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return root;
}

test('the data directory is created 0700 and the SQLite database, its -wal and -shm files 0600', async (t) => {
  const dataDir = path.join(tempRoot(t), 'data');
  const file = path.join(dataDir, 'guard.sqlite');
  const database = await openDatabase({ url: file });
  t.after(() => database.close());
  await sql`create table t (x integer)`.execute(database.db);
  await sql`insert into t values (1)`.execute(database.db);
  assert.equal(modeOf(dataDir), 0o700);
  for (const name of [file, `${file}-wal`, `${file}-shm`]) assert.equal(modeOf(name), 0o600, name);
});

test('a database file left world-readable by an earlier version is made owner-only when opened', async (t) => {
  const file = path.join(tempRoot(t), 'old.sqlite');
  fs.writeFileSync(file, '', { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  const database = await openDatabase({ url: file });
  t.after(() => database.close());
  assert.equal(modeOf(file), 0o600);
});

test('the generated secret key file is 0600 in a 0700 directory', (t) => {
  const dataDir = path.join(tempRoot(t), 'keys');
  const { generated } = loadSecretKey({ secretKey: undefined, dataDir });
  assert.equal(generated, true);
  assert.equal(modeOf(dataDir), 0o700);
  assert.equal(modeOf(path.join(dataDir, 'secret.key')), 0o600);
});
