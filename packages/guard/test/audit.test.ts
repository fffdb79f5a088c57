import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { fromJsonColumn, idForLog } from '@keel/core';
import { completionOf, postChat, startChatUpstream } from './gateway-fixtures.ts';
import { buildGuard, detect, testDatabaseTargets } from './helper.ts';

function captureLogs() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
  return { stream, lines };
}

const SECRET_RID = 'sk-live-RIDSECRET7731q8w9e0r1t2';

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
      assert.equal(logged[0].audit.rid, idForLog('req-42'), 'the log carries a hash of the client-chosen rid');
      assert.deepEqual(logged[0].audit.breakdown, { EMAIL: 1, CREDIT_CARD: 1 });
      const everything = lines.join('\n') + JSON.stringify(rows);
      assert.doesNotMatch(everything, /jane\.doe|4539|example\.org/);
    });

    test('a secret placed in rid reaches neither the audit log line nor any other log line', async (t) => {
      const { stream, lines } = captureLogs();
      const { app, ctx } = await buildGuard(t, target, { LOG_LEVEL: 'info' }, { logStream: stream });
      assert.equal((await detect(app, { text: 'hello', rid: SECRET_RID })).status, 200);
      await ctx.audit.flush();
      assert.ok(lines.some((l) => l.includes('detect audit')));
      assert.ok(!lines.join('\n').includes('RIDSECRET'), 'the rid is logged only as its hash');
    });

    test('a secret placed in X-GW-RID never reaches the gateway log lines', async (t) => {
      const upstream = await startChatUpstream(t, () => ({ json: completionOf('Noted.') }));
      const { stream, lines } = captureLogs();
      const { app, ctx } = await buildGuard(
        t,
        target,
        { LOG_LEVEL: 'info', AI_MODEL_URL: upstream.url, GATEWAY_SECURITY_EVENTS: 'file:/dev/null' },
        { logStream: stream },
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const response = await postChat(
        `http://127.0.0.1:${port}`,
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { 'X-GW-RID': SECRET_RID },
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-gw-rid'), SECRET_RID, 'the caller still gets its rid back');
      await ctx.audit.flush();
      const gatewayLine = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'gateway call');
      assert.equal(gatewayLine.gateway.rid, idForLog(SECRET_RID));
      assert.ok(!lines.join('\n').includes('RIDSECRET'), 'X-GW-RID is logged only as its hash');
    });
  });
}
