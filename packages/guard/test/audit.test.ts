import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { fromJsonColumn } from '@keel/core';
import { buildGuard, detect, testDatabaseTargets } from './helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`audit (${target.dialect})`, () => {
    test('every /detect writes an audit entry, stored and logged, with no detected value', async (t) => {
      const stream = new PassThrough();
      const lines: string[] = [];
      stream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
      const { app, db, ctx } = await buildGuard(t, target, { LOG_LEVEL: 'info' }, { logStream: stream });
      await detect(app, { text: 'mail jane.doe@example.org and card 4539 1488 0343 6467', rid: 'req-42' });
      await detect(app, { text: 'nothing' });
      await ctx.audit.flush();
      const rows = await db.selectFrom('detect_audit').selectAll().orderBy('id').execute();
      assert.equal(rows.length, 2);
      assert.equal(rows[0]!.rid, 'req-42');
      assert.equal(rows[0]!.total, 2);
      assert.deepEqual(fromJsonColumn(rows[0]!.breakdown), { EMAIL: 1, CREDIT_CARD: 1 });
      assert.ok(Number(rows[0]!.duration_ms) >= 0);
      assert.ok(new Date(rows[0]!.created_at as string).getTime() > Date.now() - 60_000);
      assert.equal(rows[1]!.rid, 'NO-RID');
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'detect audit');
      assert.equal(logged.length, 2);
      assert.equal(logged[0].audit.rid, 'req-42');
      assert.deepEqual(logged[0].audit.breakdown, { EMAIL: 1, CREDIT_CARD: 1 });
      const everything = lines.join('\n') + JSON.stringify(rows);
      assert.doesNotMatch(everything, /jane\.doe|4539|example\.org/);
    });
  });
}
