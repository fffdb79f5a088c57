// The runtime's lists page with core's keyset cursor: every row once across pages, and a cursor that was edited,
// made up or taken from another list is a 400 (never an empty page, never another list's rows).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { allPages, tamperCursor } from './cursor-pages.ts';
import { type RuntimeUnderTest, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

/** The list refuses `cursor` with a 400 that names the cursor. */
async function expectBadCursor(engine: RuntimeUnderTest, token: string, path: string, cursor: string) {
  const separator = path.includes('?') ? '&' : '?';
  const reply = await engine.call('GET', `${path}${separator}cursor=${encodeURIComponent(cursor)}`, { token });
  assert.equal(reply.status, 400, `${path} with cursor ${cursor}: ${JSON.stringify(reply.body)}`);
  assert.equal(reply.body.error.code, 'RUNTIME_INVALID_REQUEST');
  assert.match(reply.body.error.message, /cursor/);
}

for (const target of testDatabaseTargets()) {
  describe(`runtime lists and cursors (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('providers, prompts, sessions, members and knowledge page every row once; edited cursors are a 400', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const token = engine.a.token;
      const providerIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const provider = await engine.call('POST', '/api/v1/runtime/providers', {
          token,
          body: { type: 'openai_compatible', name: `p${i}`, base_url: upstream.url, text_model: 'm' },
        });
        assert.equal(provider.status, 201, JSON.stringify(provider.body));
        providerIds.push(provider.body.id);
      }
      const promptIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const prompt = await engine.call('POST', '/api/v1/runtime/prompts', {
          token,
          body: { name: `n${i}`, key: 'k', content: `Version ${i}`, is_active: i === 0 },
        });
        assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
        promptIds.push(prompt.body.id);
      }
      const agent = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token,
        body: { username: 'lister' },
      });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      const agentId = agent.body.identity.id as string;
      const second = await engine.call('POST', `/api/v1/realms/${engine.a.realmId}/agents`, {
        token,
        body: { username: 'lister-2' },
      });
      assert.equal(second.status, 201, JSON.stringify(second.body));
      const config = await engine.call('PUT', `/api/v1/runtime/agents/${agentId}/config`, {
        token,
        body: { system_prompt_id: promptIds[0], ai_provider_id: providerIds[0] },
      });
      assert.equal(config.status, 200, JSON.stringify(config.body));
      const sessionIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const session = await engine.call('POST', '/api/v1/runtime/sessions', { token, body: { agent_id: agentId } });
        assert.equal(session.status, 201, JSON.stringify(session.body));
        sessionIds.push(session.body.session_id);
      }
      const knowledgeIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const item = await engine.call('POST', '/api/v1/runtime/knowledge', {
          token,
          body: { content: `Returns are free within ${30 + i} days.`, source: { type: 'manual' } },
        });
        assert.equal(item.status, 201, JSON.stringify(item.body));
        knowledgeIds.push(item.body.id);
      }
      const members = `/api/v1/realms/${engine.a.realmId}/members`;
      const lists: [string, (row: any) => string, string[]][] = [
        ['/api/v1/runtime/providers', (row) => row.id, providerIds],
        ['/api/v1/runtime/prompts?key=k', (row) => row.id, promptIds],
        [`/api/v1/runtime/sessions?agent_id=${agentId}`, (row) => row.session_id, sessionIds],
        ['/api/v1/runtime/knowledge', (row) => row.id, knowledgeIds],
        [members, (row) => row.id, [engine.a.identityId, agentId, second.body.identity.id]],
      ];
      const cursorOf = new Map<string, string>();
      for (const [path, id, created] of lists) {
        const { seen, cursors } = await allPages((url) => engine.call('GET', url, { token }), path, 'next_cursor', id);
        assert.deepEqual([...seen].sort(), [...created].sort(), `${path} shows every row once`);
        if (created.length > 2) {
          assert.ok(cursors.length > 0, `${path} has a next page`);
          cursorOf.set(path, cursors[0]!);
        }
      }
      for (const [path, cursor] of cursorOf) {
        assert.doesNotMatch(cursor, /^[0-9a-f-]{36}$/, 'a cursor is no bare id');
        await expectBadCursor(engine, token, path, tamperCursor(cursor));
        await expectBadCursor(engine, token, path, `${cursor.slice(0, -2)}AA`);
        // A row id is no cursor, and neither is a cursor of another list.
        await expectBadCursor(engine, token, path, sessionIds[0]!);
        const other = [...cursorOf].find(([otherPath]) => otherPath !== path)![1];
        await expectBadCursor(engine, token, path, other);
      }
      // Realm B reading with realm A's cursor sees only its own rows.
      const foreign = await engine.call(
        'GET',
        `/api/v1/runtime/providers?cursor=${encodeURIComponent(cursorOf.get('/api/v1/runtime/providers')!)}`,
        { token: engine.b.token },
      );
      assert.equal(foreign.status, 200);
      assert.deepEqual(foreign.body.data, []);
    });
  });
}
