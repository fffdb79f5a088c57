import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildRuntime,
  type RuntimeUnderTest,
  setupAgent,
  sharedRuntime,
  startUpstream,
  testDatabaseTargets,
} from './runtime-helper.ts';

async function session(engine: RuntimeUnderTest, agentId: string, body: Record<string, unknown> = {}) {
  const reply = await engine.call('POST', '/api/v1/runtime/sessions', {
    token: engine.a.token,
    body: { agent_id: agentId, ...body },
  });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  return reply.body as { session_id: string; resume_token: string; expires_at: string; session: Record<string, any> };
}

for (const target of testDatabaseTargets()) {
  describe(`runtime sessions (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('create: subject types, generated anonymous subject, TTL, transcript retention, metadata rules', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const anon = await session(engine, ids.agentId, { channel: 'web', ttl_seconds: 600, label: 'Shoes' });
      assert.match(anon.resume_token, /^srt_[A-Za-z0-9]{32}$/);
      assert.equal(anon.session.subject_type, 'anonymous');
      assert.match(anon.session.subject_id, /^anon_[0-9a-f]{32}$/);
      assert.equal(anon.session.status, 'active');
      assert.equal(anon.session.transcript_retention, false);
      assert.equal(Date.parse(anon.expires_at) - Date.parse(anon.session.created_at), 600_000);
      const defaults = await session(engine, ids.agentId);
      assert.equal(Date.parse(defaults.expires_at) - Date.parse(defaults.session.created_at), 86_400_000);
      const external = await session(engine, ids.agentId, { subject_type: 'external', subject_id: 'crm:42' });
      assert.equal(external.session.subject_id, 'crm:42');
      const stored = await engine.runtime.db
        .selectFrom('runtime_session')
        .select('resume_token_hash')
        .where('id', '=', anon.session_id)
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.resume_token_hash, anon.resume_token);
      assert.match(stored.resume_token_hash, /^[0-9a-f]{64}$/);
      for (const [body, status] of [
        [{ subject_type: 'external' }, 400],
        [{ subject_type: 'anonymous', subject_id: 'me' }, 400],
        [{ subject_type: 'user', subject_id: engine.b.identityId }, 404],
        [{ ttl_seconds: 59 }, 400],
        [{ ttl_seconds: 2_592_001 }, 400],
        [{ metadata: { note: 'my password is hunter22' } }, 400],
        [{ metadata: { cardNumber: '4111111111111111' } }, 400],
        [{ flow_id: ids.promptId }, 404],
      ] as [Record<string, unknown>, number][]) {
        const reply = await engine.call('POST', '/api/v1/runtime/sessions', {
          token: engine.a.token,
          body: { agent_id: ids.agentId, ...body },
        });
        assert.equal(reply.status, status, JSON.stringify(body));
      }
      const otherAgent = await engine.call('POST', '/api/v1/runtime/sessions', {
        token: engine.b.token,
        body: { agent_id: ids.agentId },
      });
      assert.equal(otherAgent.status, 404);
      const list = await engine.call('GET', `/api/v1/runtime/sessions?agent_id=${ids.agentId}&limit=2`, {
        token: engine.a.token,
      });
      assert.equal(list.body.data.length, 2);
      assert.ok(list.body.next_cursor);
      assert.ok(!JSON.stringify(list.body).includes('srt_'), 'no resume tokens in lists');
      const next = await engine.call(
        'GET',
        `/api/v1/runtime/sessions?agent_id=${ids.agentId}&limit=2&cursor=${list.body.next_cursor}`,
        { token: engine.a.token },
      );
      assert.equal(next.body.data.length, 1);
      const listB = await engine.call('GET', '/api/v1/runtime/sessions', { token: engine.b.token });
      assert.equal(listB.body.data.length, 0);
    });

    test('a session id alone authorizes nothing: the resume token (or the subject user) is needed; status needs no token', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const s = await session(engine, ids.agentId);
      const base = `/api/v1/runtime/sessions/${s.session_id}`;
      const guarded: [string, string, unknown?][] = [
        ['GET', base],
        ['PATCH', base, { label: 'x' }],
        ['PUT', base, { label: 'x' }],
        ['GET', `${base}/messages`],
        ['POST', `${base}/messages`, { role: 'user', content: 'hi' }],
        ['GET', `${base}/state`],
        ['PUT', `${base}/state`, { state: { size: 42 } }],
        ['DELETE', `${base}/state/size`],
        ['POST', `${base}/summarize`, {}],
        ['POST', `${base}/reset`],
        ['POST', `${base}/complete`],
        ['POST', `${base}/cancel`],
        ['DELETE', base],
      ];
      // An operator (not an admin: DELETE of a whole session lets realm admins through for erasure).
      const operator = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/services`, {
        token: engine.a.token,
        body: { username: 'frontend', role: 'operator' },
      });
      const operatorToken = (
        await engine.exchange(operator.body.credentials.access_key, operator.body.credentials.secret_key)
      ).body.access_token;
      for (const [method, path, body] of guarded) {
        for (const headers of [{}, { 'x-resume-token': 'srt_wrong' }] as Record<string, string>[]) {
          const reply = await engine.call(method, path, { token: operatorToken, headers, ...(body ? { body } : {}) });
          assert.equal(reply.status, 403, `${method} ${path} ${JSON.stringify(headers)}`);
          assert.equal(reply.body.error.code, 'RUNTIME_RESUME_TOKEN_INVALID');
        }
      }
      const turn = await engine.call('POST', '/api/v1/runtime/execute', {
        token: operatorToken,
        body: { session_id: s.session_id, input: { message: 'hi' } },
      });
      assert.equal(turn.status, 403);
      const status = await engine.call('GET', `${base}/status`, { token: engine.a.token });
      assert.equal(status.status, 200);
      assert.deepEqual(Object.keys(status.body).sort(), [
        'ended_at',
        'expires_at',
        'has_pinned_flow',
        'session_id',
        'status',
      ]);
      const withToken = await engine.call('GET', base, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
      });
      assert.equal(withToken.status, 200);
      // Every session route of another realm: unknown, even with the right resume token.
      for (const [method, path, body] of [
        ...guarded,
        ['GET', `${base}/status`],
        ['POST', `${base}/resume-token/refresh`, { resume_token: s.resume_token }],
        ['POST', `${base}/resume-token/recover`],
      ] as [string, string, unknown?][]) {
        const reply = await engine.call(method, path, {
          token: engine.b.token,
          headers: { 'x-resume-token': s.resume_token },
          ...(body ? { body } : {}),
        });
        assert.equal(reply.status, 404, `${method} ${path}`);
      }
    });

    test('a user subject acts on its own session with its own token; others need the resume token', async (t) => {
      const engine = await buildRuntime(t, target, { env: { ENGINE_REGISTRATION_ENABLED: 'true' } });
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const registered = await engine.call('POST', '/api/v1/auth/register', { body: { username: 'shopper' } });
      const user = registered.body.user.id as string;
      await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/members`, {
        token: engine.a.token,
        body: { username: 'shopper', role: 'operator' },
      });
      const userToken = (
        await engine.exchange(registered.body.credentials.access_key, registered.body.credentials.secret_key)
      ).body.access_token;
      const inRealm = await engine.call('POST', '/api/v1/auth/keys', {
        token: userToken,
        body: { realm_id: engine.a.realmId },
      });
      const realmToken = (await engine.exchange(inRealm.body.access_key, inRealm.body.secret_key)).body.access_token;
      const s = await session(engine, ids.agentId, { subject_type: 'user', subject_id: user });
      const own = await engine.call('POST', '/api/v1/runtime/ai/chat', {
        token: realmToken,
        body: { agent_id: ids.agentId, session_id: s.session_id, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      const service = await engine.call('POST', '/api/v1/runtime/ai/chat', {
        token: engine.a.token,
        body: { agent_id: ids.agentId, session_id: s.session_id, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(service.status, 403);
      const complete = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/complete`, {
        token: realmToken,
      });
      assert.equal(complete.status, 200);
      assert.equal(complete.body.status, 'completed');
    });

    test('resume tokens rotate (the old one stops working); services recover active or expired sessions; ended sessions stay ended', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const s = await session(engine, ids.agentId, { ttl_seconds: 60 });
      const base = `/api/v1/runtime/sessions/${s.session_id}`;
      const wrong = await engine.call('POST', `${base}/resume-token/refresh`, {
        token: engine.a.token,
        body: { resume_token: 'srt_nope' },
      });
      assert.equal(wrong.status, 403);
      const refreshed = await engine.call('POST', `${base}/resume-token/refresh`, {
        token: engine.a.token,
        body: { resume_token: s.resume_token, label: 'Renamed', metadata: { locale: 'de' } },
      });
      assert.equal(refreshed.status, 200);
      assert.equal(refreshed.headers['cache-control'], 'no-store');
      assert.notEqual(refreshed.body.resume_token, s.resume_token);
      const old = await engine.call('GET', base, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
      });
      assert.equal(old.status, 403);
      const current = await engine.call('GET', base, {
        token: engine.a.token,
        headers: { 'x-resume-token': refreshed.body.resume_token },
      });
      assert.equal(current.body.label, 'Renamed');
      assert.deepEqual(current.body.metadata, { locale: 'de' });

      engine.advance(61_000);
      const token = (await engine.exchange(engine.a.accessKey, engine.a.secretKey)).body.access_token;
      const expired = await engine.call('GET', `${base}/status`, { token });
      assert.equal(expired.body.status, 'expired');
      const turn = await engine.call('POST', '/api/v1/runtime/execute', {
        token,
        body: { session_id: s.session_id, resume_token: refreshed.body.resume_token, input: { message: 'hi' } },
      });
      assert.equal(turn.status, 409);
      assert.equal(turn.body.error.code, 'RUNTIME_SESSION_NOT_ACTIVE');
      const refreshExpired = await engine.call('POST', `${base}/resume-token/refresh`, {
        token,
        body: { resume_token: refreshed.body.resume_token },
      });
      assert.equal(refreshExpired.status, 409);

      // Recovery is for service identities: an agent identity (operator) may not.
      const agentCreds = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token,
        body: { username: 'rescuer', issue_credentials: true },
      });
      const agentToken = (
        await engine.exchange(agentCreds.body.credentials.access_key, agentCreds.body.credentials.secret_key)
      ).body.access_token;
      const byAgent = await engine.call('POST', `${base}/resume-token/recover`, { token: agentToken });
      assert.equal(byAgent.status, 403);
      const recovered = await engine.call('POST', `${base}/resume-token/recover`, { token });
      assert.equal(recovered.status, 200);
      assert.ok(Date.parse(recovered.body.expires_at) > Date.now() + 60_000 - 5_000);
      const active = await engine.call('GET', `${base}/status`, { token });
      assert.equal(active.body.status, 'active');
      const resumed = await engine.call('POST', '/api/v1/runtime/execute', {
        token,
        body: { session_id: s.session_id, resume_token: recovered.body.resume_token, input: { message: 'hi again' } },
      });
      assert.equal(resumed.status, 200);
      const cancelled = await engine.call('POST', `${base}/cancel`, {
        token,
        headers: { 'x-resume-token': recovered.body.resume_token },
      });
      assert.equal(cancelled.body.status, 'cancelled');
      const again = await engine.call('POST', `${base}/complete`, {
        token,
        headers: { 'x-resume-token': recovered.body.resume_token },
      });
      assert.equal(again.status, 409);
      const noRecovery = await engine.call('POST', `${base}/resume-token/recover`, { token });
      assert.equal(noRecovery.status, 409);
    });

    test('transcripts: deleted when an unretained session ends, kept with transcript_retention; manual messages; deletion', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      for (const retention of [false, true]) {
        const s = await session(engine, ids.agentId, { transcript_retention: retention });
        const headers = { 'x-resume-token': s.resume_token };
        const base = `/api/v1/runtime/sessions/${s.session_id}`;
        const appended = await engine.call('POST', `${base}/messages`, {
          token: engine.a.token,
          headers,
          body: { role: 'assistant', content: 'A human agent here.' },
        });
        assert.equal(appended.status, 201);
        assert.equal(appended.body.seq, 1);
        const sensitive = await engine.call('POST', `${base}/messages`, {
          token: engine.a.token,
          headers,
          body: { role: 'user', content: 'cvv 123' },
        });
        assert.equal(sensitive.status, 400);
        await engine.call('POST', '/api/v1/runtime/execute', {
          token: engine.a.token,
          body: { session_id: s.session_id, resume_token: s.resume_token, input: { message: 'hi' } },
        });
        const page = await engine.call('GET', `${base}/messages?limit=2`, { token: engine.a.token, headers });
        assert.equal(page.body.data.length, 2);
        assert.equal(page.body.next_cursor, '2');
        const rest = await engine.call('GET', `${base}/messages?cursor=2`, { token: engine.a.token, headers });
        assert.deepEqual(
          rest.body.data.map((m: { seq: number }) => m.seq),
          [3],
        );
        const done = await engine.call('POST', `${base}/complete`, { token: engine.a.token, headers });
        assert.equal(done.body.status, 'completed');
        const after = await engine.call('GET', `${base}/messages`, { token: engine.a.token, headers });
        assert.equal(after.body.data.length, retention ? 3 : 0, `retention ${retention}`);
        const appendEnded = await engine.call('POST', `${base}/messages`, {
          token: engine.a.token,
          headers,
          body: { role: 'user', content: 'x' },
        });
        assert.equal(appendEnded.status, 409);
      }
      const s = await session(engine, ids.agentId);
      const patch = await engine.call('PATCH', `/api/v1/runtime/sessions/${s.session_id}`, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
        body: { label: 'New', ttl_seconds: 120 },
      });
      assert.equal(patch.body.label, 'New');
      assert.equal(patch.body.ttl_seconds, 120);
      const put = await engine.call('PUT', `/api/v1/runtime/sessions/${s.session_id}`, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
        body: { metadata: { topic: 'shoes' } },
      });
      assert.equal(put.body.label, null, 'PUT replaces');
      assert.equal(put.body.ttl_seconds, 86_400);
      const removed = await engine.call('DELETE', `/api/v1/runtime/sessions/${s.session_id}`, {
        token: engine.a.token,
        headers: { 'x-resume-token': s.resume_token },
      });
      assert.equal(removed.status, 204);
      const gone = await engine.call('GET', `/api/v1/runtime/sessions/${s.session_id}/status`, {
        token: engine.a.token,
      });
      assert.equal(gone.status, 404);
    });

    test('typed state: upsert keeps types, forgetting keeps the audit trail, bounds hold; user context', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const s = await session(engine, ids.agentId, { subject_type: 'external', subject_id: 'cust-7' });
      const headers = { 'x-resume-token': s.resume_token };
      const path = `/api/v1/runtime/sessions/${s.session_id}/state`;
      const put = await engine.call('PUT', path, {
        token: engine.a.token,
        headers,
        body: { state: { size: 42, color: 'red', filters: { brand: ['acme'] } } },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.state.size.type, 'number');
      assert.equal(put.body.state.size.version, 1);
      assert.deepEqual(put.body.state.filters.value, { brand: ['acme'] });
      const update = await engine.call('PUT', path, { token: engine.a.token, headers, body: { state: { size: 43 } } });
      assert.equal(update.body.state.size.version, 2);
      assert.equal(update.body.state.color.value, 'red', 'other keys stay');
      const mismatch = await engine.call('PUT', path, {
        token: engine.a.token,
        headers,
        body: { state: { size: 'large' } },
      });
      assert.equal(mismatch.status, 409);
      assert.equal(mismatch.body.error.code, 'RUNTIME_STATE_TYPE_MISMATCH');
      for (const bad of [
        { state: { size: null } },
        { state: { 'bad key!': 1 } },
        { state: {} },
        { state: { card: 'cvv 123' } },
      ]) {
        const reply = await engine.call('PUT', path, { token: engine.a.token, headers, body: bad });
        assert.equal(reply.status, 400, JSON.stringify(bad));
      }
      const forget = await engine.call('DELETE', `${path}/size`, { token: engine.a.token, headers });
      assert.equal(forget.status, 204);
      const again = await engine.call('DELETE', `${path}/size`, { token: engine.a.token, headers });
      assert.equal(again.status, 404);
      const retyped = await engine.call('PUT', path, {
        token: engine.a.token,
        headers,
        body: { state: { size: 'large' } },
      });
      assert.equal(retyped.status, 200, 'a forgotten key may take a new type');
      const audit = await engine.runtime.db
        .selectFrom('session_state_audit')
        .select(['key', 'action', 'version', 'value_sha256'])
        .where('session_id', '=', s.session_id)
        .where('key', '=', 'size')
        .orderBy('created_at')
        .orderBy('version')
        .execute();
      assert.deepEqual(
        audit.map((a) => [a.action, a.version]),
        [
          ['set', 1],
          ['set', 2],
          ['forget', 3],
          ['set', 1],
        ],
      );
      assert.ok(audit.every((a) => a.value_sha256 === null || /^[0-9a-f]{64}$/.test(a.value_sha256)));
      const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
      assert.equal(
        (await engine.call('PUT', path, { token: engine.a.token, headers, body: { state: many } })).status,
        200,
      );
      const more = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}`, i]));
      const limit = await engine.call('PUT', path, { token: engine.a.token, headers, body: { state: more } });
      assert.equal(limit.status, 409, 'at most 100 keys');
      const big = await engine.call('PUT', path, {
        token: engine.a.token,
        headers,
        body: { state: { blob: 'x'.repeat(20_000) } },
      });
      assert.equal(big.status, 400);

      const ctxPath = '/api/v1/runtime/users/cust-7/context';
      const empty = await engine.call('GET', ctxPath, { token: engine.a.token });
      assert.deepEqual(empty.body, { user_id: 'cust-7', context: {}, version: 0, updated_at: null });
      const saved = await engine.call('PUT', ctxPath, {
        token: engine.a.token,
        body: { context: { shoe_size: 42, shop: 'Acme' } },
      });
      assert.equal(saved.body.version, 1);
      const saved2 = await engine.call('PUT', ctxPath, {
        token: engine.a.token,
        body: { context: { shoe_size: 43, shop: 'Acme' } },
      });
      assert.equal(saved2.body.version, 2);
      const otherRealm = await engine.call('GET', ctxPath, { token: engine.b.token });
      assert.deepEqual(otherRealm.body.context, {}, "another realm's context is invisible");
      const secret = await engine.call('PUT', ctxPath, {
        token: engine.a.token,
        body: { context: { note: 'my password is hunter22' } },
      });
      assert.equal(secret.status, 400);
      const badId = await engine.call('GET', '/api/v1/runtime/users/has%20space/context', { token: engine.a.token });
      assert.equal(badId.status, 400);
      // Prompt variables come from the session state and then the user context.
      const turn = await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: { session_id: s.session_id, resume_token: s.resume_token, input: { message: 'hi' } },
      });
      assert.equal(turn.status, 200);
      assert.match(upstream.calls.at(-1)!.body.messages[0].content, /^You are the assistant of Acme\./);
    });

    test('summaries are bounded: by the model when it can, extractive otherwise', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t, (call) => ({
        content: call.body.messages[0].content.startsWith('Summarize')
          ? 'User wants red trail shoes, size 42.'
          : 'Noted.',
      }));
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const s = await session(engine, ids.agentId);
      const headers = { 'x-resume-token': s.resume_token };
      for (const message of ['I need trail shoes', 'red, size 42'])
        await engine.call('POST', '/api/v1/runtime/execute', {
          token: engine.a.token,
          body: { session_id: s.session_id, resume_token: s.resume_token, input: { message } },
        });
      const summary = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/summarize`, {
        token: engine.a.token,
        headers,
        body: { max_length: 200 },
      });
      assert.equal(summary.status, 200);
      assert.equal(summary.body.method, 'model');
      assert.equal(summary.body.summary, 'User wants red trail shoes, size 42.');
      assert.equal(summary.body.message_count, 4);
      await engine.call('PATCH', `/api/v1/runtime/providers/${ids.providerId}/toggle`, {
        token: engine.a.token,
        body: { is_active: false },
      });
      const extractive = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/summarize`, {
        token: engine.a.token,
        headers,
        body: { max_length: 100 },
      });
      assert.equal(extractive.body.method, 'extractive');
      assert.ok(extractive.body.summary.length <= 100);
      assert.match(extractive.body.summary, /^User: I need trail shoes/);
      const tooLong = await engine.call('POST', `/api/v1/runtime/sessions/${s.session_id}/summarize`, {
        token: engine.a.token,
        headers,
        body: { max_length: 5000 },
      });
      assert.equal(tooLong.status, 400);
    });

    test('knowledge: provenance, scopes, search of allowed items, forgetting keeps evidence, realm isolation', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const other = await setupAgent(engine, engine.a, upstream.url);
      const s = await session(engine, ids.agentId);
      const create = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
        engine.call('POST', '/api/v1/runtime/knowledge', {
          token: engine.a.token,
          headers,
          body: { source: { type: 'manual' }, ...body },
        });
      const realmItem = await create({
        title: 'Shipping',
        content: 'We ship trail shoes to the EU within 3 days.',
        tags: ['shipping'],
        source: { type: 'url', uri: 'https://shop.example.com/shipping', name: 'Shipping page' },
        confidence: 0.9,
      });
      assert.equal(realmItem.status, 201);
      assert.equal(realmItem.body.provenance.source.uri, 'https://shop.example.com/shipping');
      assert.equal(realmItem.body.provenance.created_by, engine.a.identityId);
      assert.match(realmItem.body.provenance.content_sha256, /^[0-9a-f]{64}$/);
      const agentItem = await create({
        title: 'Agent note',
        content: 'Trail shoes run small.',
        scope: 'agent',
        agent_id: other.agentId,
      });
      assert.equal(agentItem.status, 201);
      const noToken = await create({
        content: 'Session note about trail shoes',
        scope: 'session',
        session_id: s.session_id,
      });
      assert.equal(noToken.status, 403);
      const sessionItem = await create(
        { content: 'Session note about trail shoes', scope: 'session', session_id: s.session_id },
        { 'x-resume-token': s.resume_token },
      );
      assert.equal(sessionItem.status, 201);
      const userItem = await create({ content: 'Prefers trail shoes in red', scope: 'user', user_id: 'cust-9' });
      assert.equal(userItem.status, 201);
      for (const [body, status] of [
        [{ content: 'x', scope: 'agent' }, 400],
        [{ content: 'x', scope: 'agent', agent_id: engine.b.identityId }, 404],
        [{ content: 'the cvv is 123' }, 400],
        [{ content: 'x', expires_at: '2000-01-01T00:00:00Z' }, 400],
      ] as [Record<string, unknown>, number][]) {
        const reply = await create(body);
        assert.equal(reply.status, status, JSON.stringify(body));
      }
      const search = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
        engine.call('POST', '/api/v1/runtime/knowledge/search', { token: engine.a.token, headers, body });
      const realmOnly = await search({ query: 'trail shoes' });
      assert.deepEqual(
        realmOnly.body.data.map((k: { id: string }) => k.id),
        [realmItem.body.id],
      );
      assert.deepEqual(realmOnly.body.data[0].matched_terms, ['trail', 'shoes']);
      const withAgent = await search({ query: 'trail shoes', agent_id: other.agentId });
      assert.equal(withAgent.body.data.length, 2);
      const withSession = await search(
        { query: 'trail shoes', session_id: s.session_id },
        { 'x-resume-token': s.resume_token },
      );
      assert.ok(withSession.body.data.some((k: { id: string }) => k.id === sessionItem.body.id));
      const sessionNoToken = await search({ query: 'trail shoes', session_id: s.session_id });
      assert.equal(sessionNoToken.status, 403);
      const withUser = await search({ query: 'red trail', user_id: 'cust-9' });
      assert.equal(withUser.body.data[0].id, userItem.body.id);
      const tagged = await search({ query: 'trail', tags: ['shipping'] });
      assert.equal(tagged.body.data.length, 1);
      const list = await engine.call('GET', '/api/v1/runtime/knowledge', { token: engine.a.token });
      assert.equal(list.body.data.length, 3, 'session items are not listed');
      const scoped = await engine.call('GET', `/api/v1/runtime/knowledge?scope=agent&agent_id=${other.agentId}`, {
        token: engine.a.token,
      });
      assert.equal(scoped.body.data.length, 1);
      const otherRealm = await engine.call('POST', '/api/v1/runtime/knowledge/search', {
        token: engine.b.token,
        body: { query: 'trail shoes' },
      });
      assert.equal(otherRealm.body.data.length, 0);
      const forgetOther = await engine.call('DELETE', `/api/v1/runtime/knowledge/${realmItem.body.id}`, {
        token: engine.b.token,
      });
      assert.equal(forgetOther.status, 404);
      const forget = await engine.call('DELETE', `/api/v1/runtime/knowledge/${realmItem.body.id}`, {
        token: engine.a.token,
      });
      assert.equal(forget.status, 204);
      const after = await search({ query: 'trail shoes' });
      assert.equal(after.body.data.length, 0);
      const evidence = await engine.runtime.db
        .selectFrom('knowledge_item')
        .selectAll()
        .where('id', '=', realmItem.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(evidence.content, null);
      assert.ok(evidence.forgotten_at);
      assert.equal(evidence.forgotten_by, engine.a.identityId);
      assert.equal(evidence.content_sha256, realmItem.body.provenance.content_sha256);
      const twice = await engine.call('DELETE', `/api/v1/runtime/knowledge/${realmItem.body.id}`, {
        token: engine.a.token,
      });
      assert.equal(twice.status, 404);
    });
  });
}
