// Integration clients: a one-time secret stored hashed, authentication through the token exchange, rotation with a
// bounded overlap (old and new both work, then the old one stops), read and delete (revocation at once), roles,
// realm isolation.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { newId } from '../src/ids.ts';
import { allPages } from './cursor-pages.ts';
import { roleToken, sharedRuntime, testDatabaseTargets } from './runtime-helper.ts';

const CLIENTS = '/api/v1/integrations/clients';

for (const target of testDatabaseTargets()) {
  describe(`integration clients (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('a client gets its secret once, stored only as a hash, and authenticates through the token exchange', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const created = await engine.call('POST', CLIENTS, {
        token,
        body: { name: 'ERP sync', description: 'Nightly order export', role: 'viewer' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.match(created.body.client_id, /^eak_/);
      assert.match(created.body.client_secret, /^esk_/);
      assert.equal(created.body.role, 'viewer');
      assert.equal(created.body.status, 'active');
      assert.equal(created.body.previous_secret_expires_at, null);

      const list = await engine.call('GET', CLIENTS, { token });
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 1);
      assert.equal(list.body.data[0].client_id, created.body.client_id);
      assert.ok(!JSON.stringify(list.body).includes(created.body.client_secret));
      assert.equal(list.body.data[0].client_secret, undefined);

      // At rest: the SHA-256 only; no column of the client or its key holds the secret.
      const key = await engine.ctx.db
        .selectFrom('access_key')
        .selectAll()
        .where('access_key', '=', created.body.client_id)
        .executeTakeFirstOrThrow();
      assert.equal(key.secret_hash, createHash('sha256').update(created.body.client_secret).digest('hex'));
      const row = await engine.ctx.db
        .selectFrom('integration_client')
        .selectAll()
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify([key, row]).includes(created.body.client_secret));

      const exchanged = await engine.exchange(created.body.client_id, created.body.client_secret);
      assert.equal(exchanged.status, 200);
      assert.equal(exchanged.body.realm_id, engine.a.realmId);
      // The client acts with its role: a viewer reads usage, cannot record it.
      const client = exchanged.body.access_token;
      assert.equal((await engine.call('GET', '/api/v1/usages', { token: client })).status, 200);
      const write = await engine.call('POST', '/api/v1/usages', { token: client, body: { type: 'tool', name: 'x' } });
      assert.equal(write.status, 403);
      assert.equal(engine.logs().includes(created.body.client_secret), false);

      const taken = await engine.call('POST', CLIENTS, { token, body: { name: 'ERP sync' } });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.error.code, 'RUNTIME_NAME_TAKEN');
    });

    test('rotation: old and new secrets both work during the overlap, then only the new one', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const created = (await engine.call('POST', CLIENTS, { token, body: { name: 'Warehouse' } })).body;
      const clientId = created.client_id;
      const first = created.client_secret;
      const rotated = await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, {
        token,
        body: { overlap_seconds: 120 },
      });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      const second = rotated.body.client_secret;
      assert.notEqual(second, first);
      assert.equal(rotated.body.client_id, clientId);
      assert.equal(rotated.body.overlap_seconds, 120);
      assert.ok(rotated.body.previous_secret_expires_at);
      assert.ok(rotated.body.secret_rotated_at);

      assert.equal((await engine.exchange(clientId, first)).status, 200, 'the old secret works during the overlap');
      assert.equal((await engine.exchange(clientId, second)).status, 200);
      engine.advance(119_000);
      assert.equal((await engine.exchange(clientId, first)).status, 200);
      engine.advance(2_000);
      const expired = await engine.exchange(clientId, first);
      assert.equal(expired.status, 401, 'the old secret stops when the overlap ends');
      assert.equal(expired.body.error.code, 'AUTH_INVALID_CREDENTIALS');
      assert.equal((await engine.exchange(clientId, second)).status, 200);
      const after = await engine.call('GET', CLIENTS, {
        token: (await engine.exchange(clientId, second)).body.access_token,
      });
      assert.equal(after.status, 403, 'an operator client cannot manage clients');
      const listed = (await engine.call('GET', CLIENTS, { token })).body.data[0];
      assert.equal(listed.previous_secret_expires_at, null);

      // Rotating during an overlap ends the older secret at once: never more than two are valid.
      const third = (
        await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, { token, body: { overlap_seconds: 600 } })
      ).body.client_secret;
      const fourth = (
        await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, { token, body: { overlap_seconds: 600 } })
      ).body.client_secret;
      assert.equal((await engine.exchange(clientId, second)).status, 401);
      assert.equal((await engine.exchange(clientId, third)).status, 200);
      assert.equal((await engine.exchange(clientId, fourth)).status, 200);
      // overlap 0 (and the default body) ends the previous secret at once.
      const fifth = (
        await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, { token, body: { overlap_seconds: 0 } })
      ).body.client_secret;
      assert.equal((await engine.exchange(clientId, fourth)).status, 401);
      assert.equal((await engine.exchange(clientId, fifth)).status, 200);
      const byDefault = await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, { token, body: {} });
      assert.equal(byDefault.status, 200);
      assert.equal(byDefault.body.overlap_seconds, 3600);
      const tooLong = await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, {
        token,
        body: { overlap_seconds: 8 * 86_400 },
      });
      assert.equal(tooLong.status, 400);
    });

    test('deleting a client revokes it at once: both secrets and its live bearer token are refused', async () => {
      const engine = await shared.fresh();
      const token = engine.a.token;
      const created = (await engine.call('POST', CLIENTS, { token, body: { name: 'Feed export', role: 'viewer' } }))
        .body;
      const read = await engine.call('GET', `${CLIENTS}/${created.id}`, { token });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.client_id, created.client_id);
      assert.equal(read.body.status, 'active');
      assert.equal(read.body.client_secret, undefined);
      assert.ok(!JSON.stringify(read.body).includes(created.client_secret));
      // Two valid secrets (an overlap runs) and a bearer token whose key standing is cached by a first request.
      const rotated = (
        await engine.call('POST', `${CLIENTS}/${created.id}/rotate-secret`, { token, body: { overlap_seconds: 600 } })
      ).body.client_secret;
      const bearer = (await engine.exchange(created.client_id, rotated)).body.access_token;
      assert.equal((await engine.call('GET', '/api/v1/usages', { token: bearer })).status, 200);

      const deleted = await engine.call('DELETE', `${CLIENTS}/${created.id}`, { token });
      assert.equal(deleted.status, 204, JSON.stringify(deleted.body));
      for (const secret of [created.client_secret, rotated]) {
        const refused = await engine.exchange(created.client_id, secret);
        assert.equal(refused.status, 401);
        assert.equal(refused.body.error.code, 'AUTH_INVALID_CREDENTIALS');
      }
      const stale = await engine.call('GET', '/api/v1/usages', { token: bearer });
      assert.equal(stale.status, 401, 'a token issued before the delete stops at its next request');
      // Gone: read, rotate and a second delete are 404s; the list is empty and the name is free again.
      for (const [method, path] of [
        ['GET', `${CLIENTS}/${created.id}`],
        ['DELETE', `${CLIENTS}/${created.id}`],
        ['POST', `${CLIENTS}/${created.id}/rotate-secret`],
      ] as const) {
        const gone = await engine.call(method, path, { token, ...(method === 'POST' ? { body: {} } : {}) });
        assert.equal(gone.status, 404, `${method} ${path}`);
        assert.equal(gone.body.error.code, 'RUNTIME_NOT_FOUND');
      }
      assert.deepEqual((await engine.call('GET', CLIENTS, { token })).body.data, []);
      const identities = await engine.ctx.db
        .selectFrom('identity')
        .select('id')
        .where('id', '=', created.identity_id)
        .execute();
      assert.deepEqual(identities, []);
      assert.equal((await engine.call('POST', CLIENTS, { token, body: { name: 'Feed export' } })).status, 201);
    });

    test('only admins and owners manage clients; a role above the caller or owner is refused', async () => {
      const engine = await shared.fresh();
      const admin = await roleToken(engine, 'admin');
      const developer = await roleToken(engine, 'developer');
      const client = (await engine.call('POST', CLIENTS, { token: admin, body: { name: 'CRM', role: 'admin' } })).body;
      assert.equal(client.role, 'admin');
      for (const [method, path, body] of [
        ['GET', CLIENTS, undefined],
        ['POST', CLIENTS, { name: 'Other' }],
        ['POST', `${CLIENTS}/${client.id}/rotate-secret`, {}],
        ['GET', `${CLIENTS}/${client.id}`, undefined],
        ['DELETE', `${CLIENTS}/${client.id}`, undefined],
      ] as const) {
        const denied = await engine.call(method, path, { token: developer, ...(body ? { body } : {}) });
        assert.equal(denied.status, 403, path);
        assert.equal(denied.body.error.code, 'RUNTIME_FORBIDDEN');
        assert.equal((await engine.call(method, path, body ? { body } : {})).status, 401, path);
      }
      // The developer's denied delete changed nothing: the client still authenticates; the admin may delete it.
      assert.equal((await engine.exchange(client.client_id, client.client_secret)).status, 200);
      assert.equal((await engine.call('DELETE', `${CLIENTS}/${client.id}`, { token: admin })).status, 204);
      const owner = await engine.call('POST', CLIENTS, { token: admin, body: { name: 'Root', role: 'owner' } });
      assert.equal(owner.status, 400);
      assert.equal((await engine.call('POST', CLIENTS, { token: admin, body: { name: ' bad' } })).status, 400);
    });

    test("another realm's client is a 404 like an unknown one, and never listed", async () => {
      const engine = await shared.fresh();
      const created = (await engine.call('POST', CLIENTS, { token: engine.a.token, body: { name: 'Shop' } })).body;
      for (const id of [created.id, newId()]) {
        const answer = await engine.call('POST', `${CLIENTS}/${id}/rotate-secret`, { token: engine.b.token, body: {} });
        assert.equal(answer.status, 404);
        assert.equal(answer.body.error.code, 'RUNTIME_NOT_FOUND');
        for (const method of ['GET', 'DELETE'] as const) {
          const other = await engine.call(method, `${CLIENTS}/${id}`, { token: engine.b.token });
          assert.equal(other.status, 404, method);
          assert.equal(other.body.error.code, 'RUNTIME_NOT_FOUND');
        }
      }
      assert.equal((await engine.call('GET', `${CLIENTS}/not-a-uuid`, { token: engine.b.token })).status, 400);
      assert.equal(
        (await engine.call('POST', `${CLIENTS}/not-a-uuid/rotate-secret`, { token: engine.b.token, body: {} })).status,
        400,
      );
      const listed = await engine.call('GET', CLIENTS, { token: engine.b.token });
      assert.deepEqual(listed.body.data, []);
      // The old secret of A's client still works: B's attempts changed nothing.
      assert.equal((await engine.exchange(created.client_id, created.client_secret)).status, 200);
      // Pages walk every client once.
      for (const name of ['Two', 'Three', 'Four'])
        await engine.call('POST', CLIENTS, { token: engine.a.token, body: { name } });
      const pages = await allPages((url) => engine.call('GET', url, { token: engine.a.token }), CLIENTS, 'next_cursor');
      assert.equal(new Set(pages.seen).size, 4);
    });
  });
}
