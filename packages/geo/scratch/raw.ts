import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

for (const variant of ['3idx', '2idx-partial', 'noidx']) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r-'));
  const db = new DatabaseSync(path.join(dir, 'x.sqlite'));
  db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;');
  db.exec(
    `create table ev (id integer primary key autoincrement, workspace_id text not null, kind text not null, name text, path text, referrer_host text, ai_engine text, crawler text, consent integer not null, visitor_id text, subject_hash text, properties text, occurred_at text not null, received_at text not null)`,
  );
  if (variant !== 'noidx') db.exec('create index ev_page on ev(workspace_id, id)');
  if (variant === '3idx') db.exec('create index ev_subj on ev(workspace_id, subject_hash)');
  if (variant === '2idx-partial')
    db.exec('create index ev_subj on ev(workspace_id, subject_hash) where subject_hash is not null');
  const cols = 13;
  const n = 100;
  const stmt = db.prepare(
    `insert into ev (workspace_id, kind, name, path, referrer_host, ai_engine, crawler, consent, visitor_id, subject_hash, properties, occurred_at, received_at) values ${Array.from({ length: n }, () => `(${Array(cols).fill('?').join(',')})`).join(',')}`,
  );
  const now = new Date().toISOString();
  const params: any[] = [];
  for (let i = 0; i < n; i++)
    params.push(
      '01a1ff06-db51-7031-a96e-61a1c6c473ec',
      'pageview',
      i % 5 ? null : 'add',
      `/products/${i}`,
      'www.google.com',
      null,
      null,
      1,
      'abcdef0123456789abcdef0123456789',
      null,
      i % 5 ? null : '{"sku":"S1","qty":1}',
      now,
      now,
    );
  const N = 2000;
  const t0 = performance.now();
  for (let b = 0; b < N; b++) {
    db.exec('BEGIN');
    stmt.run(...params);
    db.exec('COMMIT');
  }
  const ms = performance.now() - t0;
  console.log(variant, (ms / N).toFixed(3), 'ms/batch', Math.round((N * n) / (ms / 1000)), 'rows/s');
  // grouped: 4 batches per txn
  const t1 = performance.now();
  for (let b = 0; b < N / 4; b++) {
    db.exec('BEGIN');
    for (let k = 0; k < 4; k++) stmt.run(...params);
    db.exec('COMMIT');
  }
  const ms2 = performance.now() - t1;
  console.log(variant, 'grouped x4', (ms2 / N).toFixed(3), 'ms/batch');
}
