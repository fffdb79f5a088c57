import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { describeDatabase, describeServiceDatabase } from '../src/index.ts';

test('a store is described by its SQLite file or PostgreSQL host/database, never by its credentials', () => {
  assert.equal(
    describeDatabase('postgres://keel:s3cret-pass@db.internal:5432/commerce?sslmode=require', 'engine'),
    'PostgreSQL db.internal:5432/commerce (schema engine)',
  );
  assert.doesNotMatch(describeDatabase('postgresql://u:p@h/d', 'geo'), /u:|:p@|\bp\b@/);
  assert.equal(describeDatabase('sqlite:data/x.sqlite', 'geo'), `SQLite ${path.resolve('data/x.sqlite')}`);
  assert.equal(describeDatabase(':memory:', 'geo'), 'SQLite in memory');
  assert.equal(
    describeServiceDatabase({ databaseUrl: undefined, dataDir: '/srv/keel' }, 'guard'),
    'SQLite /srv/keel/guard.sqlite',
  );
});
