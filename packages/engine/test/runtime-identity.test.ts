import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registeredErrors } from '@keel/core';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { bootstrapMerchant } from '../src/cli/bootstrap.ts';
import { RuntimeErrors } from '../src/runtime/runtime-errors.ts';
import { buildRuntime, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

for (const target of testDatabaseTargets()) {
  describe(`runtime identity and realms (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('a key pair is exchanged for a short-lived signed bearer token carrying the realm and identity', async () => {
      const engine = await shared.fresh();
      const reply = await engine.exchange(engine.a.accessKey, engine.a.secretKey);
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.deepEqual(Object.keys(reply.body).sort(), [
        'access_token',
        'expires_in',
        'realm_id',
        'token_type',
        'user_id',
        'user_type',
      ]);
      assert.equal(reply.body.expires_in, 900);
      assert.equal(reply.body.token_type, 'Bearer');
      assert.equal(reply.body.realm_id, engine.a.realmId);
      assert.equal(reply.body.user_id, engine.a.identityId);
      assert.equal(reply.body.user_type, 'service');
      const claims = decodeJwt(reply.body.access_token);
      assert.equal(claims.sub, engine.a.identityId);
      assert.equal(claims.rlm, engine.a.realmId);
      assert.equal((claims.exp as number) - (claims.iat as number), 900);
      assert.equal(decodeProtectedHeader(reply.body.access_token).alg, 'HS256');
      const me = await engine.call('GET', '/api/v1/auth/is-authenticated', { token: reply.body.access_token });
      assert.equal(me.status, 200);
      assert.equal(me.body.authenticated, true);
      assert.equal(me.body.realm_id, engine.a.realmId);
      assert.equal(me.body.role, 'owner');
      assert.equal(me.body.username, 'owner-service');

      for (const [accessKey, secretKey] of [
        [engine.a.accessKey, engine.b.secretKey],
        [engine.a.accessKey, `${engine.a.secretKey}x`],
        ['eak_unknown', engine.a.secretKey],
      ]) {
        const bad = await engine.exchange(accessKey!, secretKey!);
        assert.equal(bad.status, 401);
        assert.equal(bad.body.error.code, 'AUTH_INVALID_CREDENTIALS');
      }
    });

    test('tokens expire: a 401 with a Bearer challenge, and a new exchange works again', async () => {
      const engine = await shared.fresh();
      const before = await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token });
      assert.equal(before.status, 200);
      engine.advance(901_000);
      const expired = await engine.call('GET', '/api/v1/runtime/providers', { token: engine.a.token });
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error.code, 'AUTH_TOKEN_EXPIRED');
      assert.match(String(expired.headers['www-authenticate']), /^Bearer realm="keel-runtime", error="invalid_token"/);
      const renewed = await engine.exchange(engine.a.accessKey, engine.a.secretKey);
      const after = await engine.call('GET', '/api/v1/runtime/providers', { token: renewed.body.access_token });
      assert.equal(after.status, 200);
    });

    test('forged, tampered, alg:none and merchant credentials are refused on runtime routes; runtime tokens on catalog routes', async () => {
      const engine = await shared.fresh();
      const [header, payload, signature] = engine.a.token.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, rlm: engine.b.realmId })).toString('base64url')}.${signature}`;
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      const boot = await bootstrapMerchant(engine.ctx.db, engine.ctx.principals);
      for (const token of [tampered, none, 'garbage', `${engine.a.token}x`, boot.keys.merchant, engine.a.secretKey]) {
        const reply = await engine.call('GET', '/api/v1/runtime/providers', { token });
        assert.equal(reply.status, 401, token.slice(0, 20));
      }
      const noHeader = await engine.call('GET', '/api/v1/runtime/providers');
      assert.equal(noHeader.status, 401);
      const catalog = await engine.call('GET', '/api/v1/catalog/stores', { token: engine.a.token });
      assert.equal(catalog.status, 401);
      const merchant = await engine.call('GET', '/api/v1/catalog/stores', { token: boot.keys.merchant });
      assert.equal(merchant.status, 200);
    });

    test('key pairs: created for the caller (secret once), listed without secrets, revocation ends their tokens at once', async () => {
      const engine = await shared.fresh();
      const created = await engine.call('POST', '/api/v1/auth/keys', { token: engine.a.token, body: { name: 'ci' } });
      assert.equal(created.status, 201);
      assert.match(created.body.access_key, /^eak_[A-Za-z0-9]{24}$/);
      assert.match(created.body.secret_key, /^esk_[A-Za-z0-9]{32}$/);
      assert.equal(created.body.realm_id, engine.a.realmId);
      const token = (await engine.exchange(created.body.access_key, created.body.secret_key)).body.access_token;
      const listed = await engine.call('GET', '/api/v1/auth/keys', { token });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 2);
      assert.ok(!JSON.stringify(listed.body).includes(created.body.secret_key));
      assert.ok(!JSON.stringify(listed.body).includes('secret'));
      const revoked = await engine.call('DELETE', `/api/v1/auth/keys/${created.body.key_id}`, {
        token: engine.a.token,
      });
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.status, 'revoked');
      const after = await engine.call('GET', '/api/v1/auth/keys', { token });
      assert.equal(after.status, 401, 'the token of a revoked pair stops working at once');
      const exchange = await engine.exchange(created.body.access_key, created.body.secret_key);
      assert.equal(exchange.status, 401);
      const otherRealm = await engine.call('DELETE', `/api/v1/auth/keys/${created.body.key_id}`, {
        token: engine.b.token,
      });
      assert.equal(otherRealm.status, 404);
      const expiring = await engine.call('POST', '/api/v1/auth/keys', {
        token: engine.a.token,
        body: { expires_at: new Date(Date.now() - 1000).toISOString() },
      });
      assert.equal(expiring.status, 400);
      const foreignRealm = await engine.call('POST', '/api/v1/auth/keys', {
        token: engine.a.token,
        body: { realm_id: engine.b.realmId },
      });
      assert.equal(foreignRealm.status, 404, 'a realm the caller is not a member of is unknown');
      // Secrets are stored only as SHA-256.
      const stored = await engine.ctx.db.selectFrom('access_key').select('secret_hash').execute();
      assert.ok(stored.every((row) => /^[0-9a-f]{64}$/.test(row.secret_hash)));
      assert.ok(!engine.logs().includes(created.body.secret_key));
    });

    test('realms: the creator owns a new realm and can mint a key pair for it; members and roles', async () => {
      const engine = await shared.fresh();
      const realm = await engine.call('POST', '/api/v1/realms', { token: engine.a.token, body: { name: 'Staging' } });
      assert.equal(realm.status, 201);
      assert.equal(realm.body.role, 'owner');
      const keys = await engine.call('POST', '/api/v1/auth/keys', {
        token: engine.a.token,
        body: { realm_id: realm.body.id },
      });
      assert.equal(keys.status, 201);
      const staging = (await engine.exchange(keys.body.access_key, keys.body.secret_key)).body;
      assert.equal(staging.realm_id, realm.body.id);

      // The token realm scopes member routes: another realm's id is unknown.
      const foreign = await engine.call('GET', `/api/v1/realms/${engine.b.realmId}/members`, { token: engine.a.token });
      assert.equal(foreign.status, 404);
      const members = await engine.call('GET', `/api/v1/realms/${engine.a.realmId}/members`, { token: engine.a.token });
      assert.equal(members.status, 200);
      assert.equal(members.body.data.length, 1);
      assert.equal(members.body.data[0].role, 'owner');

      const service = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/services`, {
        token: engine.a.token,
        body: { username: 'billing-backend', role: 'admin' },
      });
      assert.equal(service.status, 201);
      assert.equal(service.body.identity.user_type, 'service');
      assert.equal(service.body.identity.role, 'admin');
      assert.ok(service.body.credentials.secret_key);
      const admin = (await engine.exchange(service.body.credentials.access_key, service.body.credentials.secret_key))
        .body.access_token;
      const viewer = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/identities/services`, {
        token: admin,
        body: { username: 'dashboards', role: 'viewer' },
      });
      assert.equal(viewer.status, 201);
      const ownerByAdmin = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/members`, {
        token: admin,
        body: { identity_id: viewer.body.identity.id, role: 'owner' },
      });
      assert.equal(ownerByAdmin.status, 403, 'an admin cannot grant owner');
      const promoted = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/members`, {
        token: admin,
        body: { identity_id: viewer.body.identity.id, role: 'operator' },
      });
      assert.equal(promoted.status, 200);
      assert.equal(promoted.body.role, 'operator');
      const demoteOwner = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/members`, {
        token: engine.a.token,
        body: { identity_id: engine.a.identityId, role: 'admin' },
      });
      assert.equal(demoteOwner.status, 409, 'the last owner keeps its role');
      assert.equal(demoteOwner.body.error.code, 'RUNTIME_LAST_OWNER');
      const crossRealmIdentity = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/members`, {
        token: engine.a.token,
        body: { identity_id: engine.b.identityId, role: 'viewer' },
      });
      assert.equal(crossRealmIdentity.status, 404, "another realm's service identity is unknown");

      const viewerToken = (
        await engine.exchange(viewer.body.credentials.access_key, viewer.body.credentials.secret_key)
      ).body.access_token;
      // The role changed to operator: it may run but not configure.
      const write = await engine.call('POST', '/api/v1/runtime/prompts', {
        token: viewerToken,
        body: { name: 'p', key: 'p', content: 'x' },
      });
      assert.equal(write.status, 403);
      assert.equal(write.body.error.code, 'RUNTIME_FORBIDDEN');
      const agentNoCreds = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'concierge' },
      });
      assert.equal(agentNoCreds.status, 201);
      assert.equal(agentNoCreds.body.credentials, null);
      assert.equal(agentNoCreds.body.identity.user_type, 'agent');
      const duplicate = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'Concierge' },
      });
      assert.equal(duplicate.status, 409);
      const sameNameOtherRealm = await engine.call('POST', `/api/v1/realms/${engine.b.realmId}/agents`, {
        token: engine.b.token,
        body: { username: 'concierge' },
      });
      assert.equal(sameNameOtherRealm.status, 201, 'agent and service names are per realm');
      for (const path of ['agents', 'services', 'identities/services']) {
        const other = await engine.call('POST', `/api/v1/realms/${engine.b.realmId}/${path}`, {
          token: engine.a.token,
          body: { username: 'x-1' },
        });
        assert.equal(other.status, 404, path);
      }
    });

    test('users: read and update self or realm identities; other realms are unknown; deletion keeps an owner', async () => {
      const engine = await shared.fresh();
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token: engine.a.token,
        body: { username: 'helper', display_name: 'Helper', metadata: { team: 'cx' } },
      });
      const id = agent.body.identity.id;
      const read = await engine.call('GET', `/api/v1/users/${id}`, { token: engine.a.token });
      assert.equal(read.status, 200);
      assert.equal(read.body.display_name, 'Helper');
      assert.deepEqual(read.body.metadata, { team: 'cx' });
      const patched = await engine.call('PATCH', `/api/v1/users/${id}`, {
        token: engine.a.token,
        body: { display_name: 'Desk' },
      });
      assert.equal(patched.body.display_name, 'Desk');
      assert.deepEqual(patched.body.metadata, { team: 'cx' });
      const posted = await engine.call('POST', `/api/v1/users/${id}`, {
        token: engine.a.token,
        body: { metadata: { team: 'ops' } },
      });
      assert.equal(posted.body.display_name, 'Desk');
      assert.deepEqual(posted.body.metadata, { team: 'ops' });
      const replaced = await engine.call('PUT', `/api/v1/users/${id}`, {
        token: engine.a.token,
        body: { display_name: 'Only' },
      });
      assert.equal(replaced.body.metadata, null);
      for (const method of ['GET', 'PUT', 'PATCH', 'POST', 'DELETE']) {
        const other = await engine.call(method, `/api/v1/users/${id}`, {
          token: engine.b.token,
          ...(method === 'GET' || method === 'DELETE' ? {} : { body: { display_name: 'x' } }),
        });
        assert.equal(other.status, 404, method);
      }
      const selfStatus = await engine.call('PATCH', `/api/v1/users/${engine.a.identityId}`, {
        token: engine.a.token,
        body: { status: 'disabled' },
      });
      assert.equal(selfStatus.status, 403);
      const deleteLastOwner = await engine.call('DELETE', `/api/v1/users/${engine.a.identityId}`, {
        token: engine.a.token,
      });
      assert.equal(deleteLastOwner.status, 409);
      const removed = await engine.call('DELETE', `/api/v1/users/${id}`, { token: engine.a.token });
      assert.equal(removed.status, 204);
      const gone = await engine.call('GET', `/api/v1/users/${id}`, { token: engine.a.token });
      assert.equal(gone.status, 404);
    });

    test('theme: defaults, validated replacement, realm scoped', async () => {
      const engine = await shared.fresh();
      const path = `/api/v1/realms/${engine.a.realmId}/theme`;
      const initial = await engine.call('GET', path, { token: engine.a.token });
      assert.equal(initial.status, 200);
      assert.equal(initial.body.theme.primary_color, '#1F6FEB');
      assert.equal(initial.body.updated_at, null);
      const put = await engine.call('PUT', path, {
        token: engine.a.token,
        body: {
          brand_name: 'Acme',
          primary_color: '#112233',
          logo_url: 'https://cdn.example.com/logo.svg',
          mode: 'dark',
        },
      });
      assert.equal(put.status, 200);
      assert.equal(put.body.theme.brand_name, 'Acme');
      assert.equal(put.body.theme.primary_color, '#112233');
      assert.equal(put.body.theme.mode, 'dark');
      for (const bad of [
        { primary_color: 'red' },
        { logo_url: 'http://127.0.0.1/logo.png' },
        { logo_url: 'https://10.0.0.1/logo.png' },
        { border_radius_px: 99 },
        { font_family: 'x;}</style><script>' },
      ]) {
        const reply = await engine.call('PUT', path, { token: engine.a.token, body: bad });
        assert.equal(reply.status, 400, JSON.stringify(bad));
      }
      const other = await engine.call('GET', path, { token: engine.b.token });
      assert.equal(other.status, 404);
      const otherPut = await engine.call('PUT', path, { token: engine.b.token, body: { brand_name: 'x' } });
      assert.equal(otherPut.status, 404);
    });

    test('every runtime error code is registered once with its status', () => {
      const codes = Object.values(RuntimeErrors).map((factory) => [factory.code, factory.statusCode]);
      assert.deepEqual(codes, [
        ['AUTH_INVALID_CREDENTIALS', 401],
        ['AUTH_TOKEN_INVALID', 401],
        ['AUTH_TOKEN_EXPIRED', 401],
        ['AUTH_REGISTRATION_DISABLED', 403],
        ['AUTH_USERNAME_TAKEN', 409],
        ['RUNTIME_FORBIDDEN', 403],
        ['RUNTIME_NO_REALM', 403],
        ['RUNTIME_REALM_MISMATCH', 403],
        ['RUNTIME_INVALID_REQUEST', 400],
        ['RUNTIME_NOT_FOUND', 404],
        ['RUNTIME_NAME_TAKEN', 409],
        ['RUNTIME_IN_USE', 409],
        ['RUNTIME_CONFLICT', 409],
        ['RUNTIME_PROMPT_VERSION_IMMUTABLE', 409],
        ['RUNTIME_SESSION_NOT_ACTIVE', 409],
        ['RUNTIME_RESUME_TOKEN_INVALID', 403],
        ['RUNTIME_STATE_TYPE_MISMATCH', 409],
        ['RUNTIME_LIMIT_REACHED', 409],
        ['RUNTIME_SENSITIVE_DATA_REJECTED', 400],
        ['RUNTIME_UNSUPPORTED_VERSION', 400],
        ['RUNTIME_MODE_UNSUPPORTED', 400],
        ['RUNTIME_AGENT_NOT_RESOLVED', 409],
        ['RUNTIME_AGENT_NOT_READY', 409],
        ['RUNTIME_CONCURRENCY_LIMIT', 429],
        ['RUNTIME_PROVIDER_FAILED', 502],
        ['RUNTIME_LATENCY_BUDGET_EXCEEDED', 503],
        ['RUNTIME_LAST_OWNER', 409],
      ]);
      for (const [code] of codes) assert.ok(registeredErrors().has(code as string));
    });
  });

  describe(`runtime registration (${target.dialect})`, () => {
    test('registration is closed by default (403)', async (t) => {
      const engine = await buildRuntime(t, target);
      const reply = await engine.call('POST', '/api/v1/auth/register', {
        body: { username: 'ann', realm_name: 'Ann' },
      });
      assert.equal(reply.status, 403);
      assert.equal(reply.body.error.code, 'AUTH_REGISTRATION_DISABLED');
    });

    test('with registration enabled: an identity, an optional owned realm and a first key pair; a realm-less identity has no realm access', async (t) => {
      const engine = await buildRuntime(t, target, {
        env: { ENGINE_REGISTRATION_ENABLED: 'true', ENGINE_TOKEN_TTL_SECONDS: '120' },
      });
      const reply = await engine.call('POST', '/api/v1/auth/register', {
        body: { username: 'ann', realm_name: 'Ann shop' },
      });
      assert.equal(reply.status, 201);
      assert.equal(reply.body.user.user_type, 'user');
      assert.equal(reply.body.user.role, 'owner');
      assert.equal(reply.body.realm.name, 'Ann shop');
      const token = await engine.exchange(reply.body.credentials.access_key, reply.body.credentials.secret_key);
      assert.equal(token.body.expires_in, 120);
      assert.equal(token.body.realm_id, reply.body.realm.id);
      const taken = await engine.call('POST', '/api/v1/auth/register', { body: { username: 'ANN' } });
      assert.equal(taken.status, 409);
      const bob = await engine.call('POST', '/api/v1/auth/register', { body: { username: 'bob' } });
      assert.equal(bob.status, 201);
      assert.equal(bob.body.realm, null);
      const bobToken = (await engine.exchange(bob.body.credentials.access_key, bob.body.credentials.secret_key)).body;
      assert.equal(bobToken.realm_id, null);
      const noRealm = await engine.call('GET', '/api/v1/runtime/providers', { token: bobToken.access_token });
      assert.equal(noRealm.status, 403);
      assert.equal(noRealm.body.error.code, 'RUNTIME_NO_REALM');
      // Ann adds Bob by username; Bob mints a key pair for Ann's realm.
      const added = await engine.call('POST', `/api/v1/realms/${reply.body.realm.id}/members`, {
        token: token.body.access_token,
        body: { username: 'bob', role: 'developer' },
      });
      assert.equal(added.status, 200);
      const bobKeys = await engine.call('POST', '/api/v1/auth/keys', {
        token: bobToken.access_token,
        body: { realm_id: reply.body.realm.id },
      });
      assert.equal(bobKeys.status, 201);
      const inRealm = (await engine.exchange(bobKeys.body.access_key, bobKeys.body.secret_key)).body;
      const me = await engine.call('GET', '/api/v1/auth/is-authenticated', { token: inRealm.access_token });
      assert.equal(me.body.role, 'developer');
      // Removing Bob from the realm ends his realm tokens at once.
      const removed = await engine.call('DELETE', `/api/v1/users/${bob.body.user.id}`, {
        token: token.body.access_token,
      });
      assert.equal(removed.status, 204);
      const after = await engine.call('GET', '/api/v1/auth/is-authenticated', { token: inRealm.access_token });
      assert.equal(after.status, 401);
      const stillUser = await engine.call('GET', '/api/v1/auth/is-authenticated', { token: bobToken.access_token });
      assert.equal(stillUser.status, 200, 'his identity itself stays');
    });
  });
}
