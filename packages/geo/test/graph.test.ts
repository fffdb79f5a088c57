import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findCycle } from '../src/graph/cycle.ts';
import { call, testDatabaseTargets } from './helper.ts';
import { sharedGeo } from './measure-suite.ts';

test('findCycle finds a cycle and reports it closed, and accepts a DAG', () => {
  assert.equal(findCycle(3, [[1], [2], []]), undefined);
  assert.deepEqual(findCycle(3, [[1], [2], [0]]), [0, 1, 2, 0]);
  assert.deepEqual(findCycle(1, [[0]]), [0, 0]);
  const n = 100_000;
  const chain = Array.from({ length: n }, (_, i) => (i + 1 < n ? [i + 1] : []));
  assert.equal(findCycle(n, chain), undefined, 'deep graphs need no recursion');
});

for (const target of testDatabaseTargets()) {
  describe(`target graph (${target.dialect})`, () => {
    // One app for the suite; each test works with two new tenants of its own.
    const freshGeo = sharedGeo(target);
    const post = (app: any, key: string, idem: string, body: unknown) =>
      call(app, 'POST', '/api/v1/geo/target-graph', { key, body, headers: { 'idempotency-key': idem } });

    test('import, read back, replay with the same key, 409 with a different body', async () => {
      const { app, a } = await freshGeo();
      const body = {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [
          { key: 'brand', name: 'Acme', kind: 'brand' },
          { key: 'shoes', name: 'Shoes', kind: 'category', attributes: { tier: 1 } },
          { key: 'boots', name: 'Boots' },
        ],
        relations: [
          { from: 'brand', to: 'shoes', kind: 'parent_of' },
          { from: 'shoes', to: 'boots', kind: 'parent_of' },
        ],
      };
      const first = await post(app, a.keys.write, 'imp-1', body);
      assert.equal(first.status, 200);
      assert.equal(first.body.targetsCreated, 3);
      assert.equal(first.body.relationsCreated, 2);
      assert.equal(first.body.graphVersion, 1);
      const replay = await post(app, a.keys.write, 'imp-1', body);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, first.body);
      const conflict = await post(app, a.keys.write, 'imp-1', {
        ...body,
        targets: body.targets.slice(0, 2),
        relations: [],
      });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error.code, 'IDEMPOTENCY_KEY_REUSED');

      const graph = await call(app, 'GET', `/api/v1/geo/target-graph?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(graph.status, 200);
      assert.equal(graph.body.targets.length, 3);
      assert.deepEqual(graph.body.relations.map((r: any) => `${r.from}>${r.to}`).sort(), [
        'brand>shoes',
        'shoes>boots',
      ]);
      assert.equal(graph.body.history, undefined);
      const withHistory = await call(
        app,
        'GET',
        `/api/v1/geo/target-graph?workspaceId=${a.workspaceId}&includeHistory=true`,
        { key: a.keys.read },
      );
      assert.equal(withHistory.body.history.length, 1, 'the replay did not add a mutation');
      assert.equal(withHistory.body.history[0].operation, 'import');

      const missingKey = await call(app, 'POST', '/api/v1/geo/target-graph', { key: a.keys.write, body });
      assert.equal(missingKey.status, 400);
      const readOnly = await post(app, a.keys.read, 'imp-2', body);
      assert.equal(readOnly.status, 403);
      const otherTenant = await post(app, a.keys.write, 'imp-3', { ...body, workspaceId: a.workspaceIds[1] });
      assert.equal(otherTenant.status, 200, 'the second workspace of the same tenant is fine');
    });

    test('a cyclic graph is a 422 naming the cycle, and nothing is written', async () => {
      const { app, a } = await freshGeo();
      const cyclic = await post(app, a.keys.write, 'cyc-1', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [
          { key: 'a', name: 'A' },
          { key: 'b', name: 'B' },
          { key: 'c', name: 'C' },
        ],
        relations: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'a' },
        ],
      });
      assert.equal(cyclic.status, 422);
      assert.equal(cyclic.body.error.code, 'GEO_GRAPH_CYCLE');
      assert.match(cyclic.body.error.message, /a → b → c → a|b → c → a → b|c → a → b → c/);
      assert.match(cyclic.body.error.details[0].message, /→/);
      const graph = await call(app, 'GET', `/api/v1/geo/target-graph?workspaceId=${a.workspaceId}`, {
        key: a.keys.read,
      });
      assert.equal(graph.body.targets.length, 0, 'nothing partial was written');
      const replay = await post(app, a.keys.write, 'cyc-1', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [
          { key: 'a', name: 'A' },
          { key: 'b', name: 'B' },
          { key: 'c', name: 'C' },
        ],
        relations: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'a' },
        ],
      });
      assert.equal(replay.status, 422, 'the stored 422 is replayed');

      const unknown = await post(app, a.keys.write, 'bad-1', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [{ key: 'x', name: 'X' }],
        relations: [{ from: 'x', to: 'nowhere' }],
      });
      assert.equal(unknown.status, 422);
      assert.equal(unknown.body.error.code, 'GEO_GRAPH_INVALID');
      assert.match(unknown.body.error.message, /nowhere/);
      const selfLoop = await post(app, a.keys.write, 'bad-2', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [{ key: 'x', name: 'X' }],
        relations: [{ from: 'x', to: 'x' }],
      });
      assert.equal(selfLoop.status, 422);
    });

    test('merge folds duplicates into the canonical target, re-points relations, keeps aliases; a merge that closes a cycle is a 422', async () => {
      const { app, a } = await freshGeo();
      await post(app, a.keys.write, 'm-0', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [
          { key: 'acme', name: 'Acme' },
          { key: 'acme-inc', name: 'Acme Inc.', aliases: ['acme.com'] },
          { key: 'shoes', name: 'Shoes' },
          { key: 'boots', name: 'Boots' },
        ],
        relations: [
          { from: 'acme', to: 'shoes' },
          { from: 'acme-inc', to: 'shoes' },
          { from: 'acme-inc', to: 'boots' },
        ],
      });
      const merged = await post(app, a.keys.write, 'm-1', {
        operation: 'merge',
        workspaceId: a.workspaceId,
        canonicalKey: 'acme',
        duplicateKeys: ['acme-inc'],
      });
      assert.equal(merged.status, 200);
      assert.deepEqual(merged.body.merged, ['acme-inc']);
      assert.equal(merged.body.graphVersion, 2);
      const graph = await call(
        app,
        'GET',
        `/api/v1/geo/target-graph?workspaceId=${a.workspaceId}&includeHistory=true`,
        { key: a.keys.read },
      );
      assert.deepEqual(graph.body.targets.map((x: any) => x.key).sort(), ['acme', 'boots', 'shoes']);
      const acme = graph.body.targets.find((x: any) => x.key === 'acme');
      assert.deepEqual(acme.aliases.sort(), ['acme-inc', 'acme.com']);
      assert.deepEqual(
        graph.body.relations.map((r: any) => `${r.from}>${r.to}`).sort(),
        ['acme>boots', 'acme>shoes'],
        'folded and deduplicated',
      );
      assert.deepEqual(
        graph.body.history.map((h: any) => h.operation),
        ['import', 'merge'],
      );

      // An alias resolves to its canonical target in later imports.
      const viaAlias = await post(app, a.keys.write, 'm-2', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [],
        relations: [{ from: 'acme-inc', to: 'boots', kind: 'sells' }],
      });
      assert.equal(viaAlias.status, 200);
      assert.equal(viaAlias.body.relationsCreated, 1);

      const closing = await post(app, a.keys.write, 'm-3', {
        operation: 'merge',
        workspaceId: a.workspaceId,
        canonicalKey: 'boots',
        duplicateKeys: ['acme'],
      });
      assert.equal(closing.status, 200, 'acme→boots becomes a self-loop and is dropped, not a cycle');
      await post(app, a.keys.write, 'm-4', {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [
          { key: 'p', name: 'P' },
          { key: 'q', name: 'Q' },
          { key: 'r', name: 'R' },
        ],
        relations: [
          { from: 'p', to: 'q' },
          { from: 'q', to: 'r' },
        ],
      });
      const cycle = await post(app, a.keys.write, 'm-5', {
        operation: 'merge',
        workspaceId: a.workspaceId,
        canonicalKey: 'p',
        duplicateKeys: ['r'],
      });
      assert.equal(cycle.status, 422);
      assert.equal(cycle.body.error.code, 'GEO_GRAPH_CYCLE');
    });

    test('two concurrent first uses of one Idempotency-Key apply one mutation', async () => {
      const { app, a } = await freshGeo();
      const body = {
        operation: 'import',
        workspaceId: a.workspaceId,
        targets: [{ key: 'k', name: 'K' }],
        relations: [],
      };
      const results = await Promise.all([
        post(app, a.keys.write, 'race', body),
        post(app, a.keys.write, 'race', body),
        post(app, a.keys.write, 'race', body),
      ]);
      for (const r of results)
        assert.ok(
          r.status === 200 || (r.status === 409 && r.body.error.code === 'IDEMPOTENCY_KEY_IN_FLIGHT'),
          `status ${r.status}`,
        );
      assert.ok(results.some((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined));
      const graph = await call(
        app,
        'GET',
        `/api/v1/geo/target-graph?workspaceId=${a.workspaceId}&includeHistory=true`,
        { key: a.keys.read },
      );
      assert.equal(graph.body.history.length, 1);
    });

    test("another tenant's workspace is denied like a missing one, on read and write", async () => {
      const { app, a, b } = await freshGeo();
      const read = await call(app, 'GET', `/api/v1/geo/target-graph?workspaceId=${b.workspaceId}`, {
        key: a.keys.admin,
      });
      assert.equal(read.status, 403);
      assert.equal(read.body.error.code, 'GEO_WORKSPACE_DENIED');
      const write = await post(app, a.keys.admin, 'x-1', {
        operation: 'import',
        workspaceId: b.workspaceId,
        targets: [],
        relations: [],
      });
      assert.equal(write.status, 403);
      assert.equal(write.body.error.code, 'GEO_WORKSPACE_DENIED');
    });
  });
}
