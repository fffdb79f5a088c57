import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { compactOpenApi } from '@keel/core';
import { openTestDatabase } from '@keel/core/testing';
import { prepareEngineDatabase, REST_OPENAPI_PARTS } from '../src/app.ts';
import type { EngineDb } from '../src/db/schema.ts';
import { bootstrapRealm, ensureFirstRealm } from '../src/identity/identity-service.ts';
import { runKeel } from './helper.ts';
import { setupAgent, sharedRuntime, startUpstream, testDatabaseTargets } from './runtime-helper.ts';

const KEEL = path.join(import.meta.dirname, '../../cli/src/keel.ts');

describe('OpenAPI compaction (pure)', () => {
  test('repeated responses, parameters and bodies are shared by reference; unique ones stay inline', () => {
    const error = {
      description: 'Default Response',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/def-0' } } },
    };
    const param = { in: 'path', name: 'id', required: true, schema: { type: 'string', format: 'uuid' } };
    const body = {
      required: true,
      content: { 'application/json': { schema: { type: 'object', properties: { a: { type: 'string' } } } } },
    };
    const doc = compactOpenApi({
      openapi: '3.1.0',
      paths: {
        '/a/{id}': {
          get: {
            parameters: [param],
            responses: { 200: { description: 'only here, long enough to matter for sharing' }, '4XX': error },
          },
        },
        '/b/{id}': {
          put: { parameters: [param], requestBody: body, responses: { '4XX': error } },
          patch: { requestBody: body, responses: { '4XX': error } },
        },
      },
      components: { schemas: {} },
    }) as any;
    assert.deepEqual(doc.paths['/a/{id}'].get.responses['4XX'], { $ref: '#/components/responses/R0' });
    assert.deepEqual(doc.paths['/a/{id}'].get.responses[200], {
      description: 'only here, long enough to matter for sharing',
    });
    assert.deepEqual(doc.components.responses.R0, error);
    assert.deepEqual(doc.paths['/b/{id}'].put.parameters, [{ $ref: '#/components/parameters/P0' }]);
    assert.deepEqual(doc.paths['/b/{id}'].patch.requestBody, { $ref: '#/components/requestBodies/B0' });
    assert.deepEqual(doc.components.requestBodies.B0, body);
  });
});

for (const target of testDatabaseTargets()) {
  describe(`runtime status, capabilities, client contract (${target.dialect})`, () => {
    const shared = sharedRuntime(target);

    test('health and readiness need no token; status and capabilities need one', async (t) => {
      const engine = await shared.fresh();
      assert.deepEqual((await engine.call('GET', '/api/v1/health')).body, { status: 'ok' });
      assert.deepEqual((await engine.call('GET', '/api/v1/ready')).body, { status: 'ready' });
      for (const path of ['/api/v1/runtime/status', '/api/v1/runtime/capabilities']) {
        assert.equal((await engine.call('GET', path)).status, 401, path);
      }
      const empty = await engine.call('GET', '/api/v1/runtime/status', { token: engine.a.token });
      assert.equal(empty.status, 200);
      assert.equal(empty.body.realm_id, engine.a.realmId);
      assert.equal(empty.body.status, 'degraded');
      assert.ok(empty.body.issues.includes('no active provider'));
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url, { config: { is_default: true } });
      await engine.call('POST', '/api/v1/runtime/sessions', { token: engine.a.token, body: { agent_id: ids.agentId } });
      const ready = await engine.call('GET', '/api/v1/runtime/status', { token: engine.a.token });
      assert.equal(ready.body.status, 'ready', JSON.stringify(ready.body.issues));
      assert.deepEqual(ready.body.counts, {
        providers: 1,
        active_providers: 1,
        active_prompts: 1,
        agents: 1,
        configured_agents: 1,
        active_sessions: 1,
      });
      assert.equal(ready.body.default_agent_id, ids.agentId);
      const other = await engine.call('GET', '/api/v1/runtime/status', { token: engine.b.token });
      assert.equal(other.body.counts.agents, 0, "another realm's counts are its own");
      const capabilities = await engine.call('GET', '/api/v1/runtime/capabilities', { token: engine.a.token });
      assert.equal(capabilities.status, 200);
      assert.deepEqual(capabilities.body.contract_versions, ['2026-08-22']);
      assert.deepEqual(capabilities.body.modes, ['sync', 'async']);
      assert.deepEqual(capabilities.body.provider_types, ['openai_compatible', 'bedrock']);
      assert.equal(capabilities.body.normalized_actions.length, 14);
      assert.deepEqual(capabilities.body.agent_setting_bounds.max_tool_calls, { minimum: 0, maximum: 50, default: 8 });
      assert.equal(capabilities.body.features.flows, true);
      assert.equal(capabilities.body.features.async_executions, true);
    });

    test('GET /api/v1/sdk/config: the versioned client contract with endpoint templates, transports, actions and bounded schemas', async () => {
      const engine = await shared.fresh();
      const reply = await engine.call('GET', '/api/v1/sdk/config');
      assert.equal(reply.status, 200);
      const config = reply.body;
      assert.equal(config.contract_version, '2026-08-22');
      assert.deepEqual(config.auth.token_endpoint, { method: 'POST', path: '/api/v1/auth/token' });
      assert.deepEqual(config.endpoints.execute, { method: 'POST', path: '/api/v1/runtime/execute' });
      assert.deepEqual(config.endpoints.session_get, { method: 'GET', path: '/api/v1/runtime/sessions/{session_id}' });
      assert.deepEqual(
        config.transports.map((t: { type: string }) => t.type),
        ['rest', 'mcp', 'sse'],
      );
      assert.deepEqual(config.endpoints.execution_events, {
        method: 'GET',
        path: '/api/v1/runtime/executions/{execution_id}/events',
      });
      assert.equal(config.versioning.configuration_format, 'keel.engine.config/v1');
      // Every endpoint template names a route of the OpenAPI document.
      const doc = JSON.parse((await engine.rest.inject({ method: 'GET', url: '/openapi.json' })).body);
      for (const [name, { method, path }] of Object.entries<{ method: string; path: string }>(config.endpoints)) {
        const openapiPath = path.replace(/\{[a-z_]+\}/g, '{}');
        const match = Object.keys(doc.paths).find((p) => p.replace(/\{[A-Za-z_]+\}/g, '{}') === openapiPath);
        assert.ok(match && doc.paths[match][method.toLowerCase()], `${name}: ${method} ${path} is a route`);
      }
      // Request schemas are bounded: every string, array and open object of them has a limit.
      const unbounded: string[] = [];
      const walk = (schema: any, at: string): void => {
        if (!schema || typeof schema !== 'object') return;
        if (
          schema.type === 'string' &&
          schema.maxLength === undefined &&
          !schema.enum &&
          !schema.format &&
          schema.const === undefined
        )
          unbounded.push(at);
        if (schema.type === 'array' && schema.maxItems === undefined) unbounded.push(at);
        if (schema.type === 'object' && schema.additionalProperties === true && schema.maxProperties === undefined)
          unbounded.push(at);
        for (const [key, value] of Object.entries(schema.properties ?? {})) walk(value, `${at}.${key}`);
        for (const [i, value] of (schema.anyOf ?? []).entries()) walk(value, `${at}|${i}`);
        if (schema.items) walk(schema.items, `${at}[]`);
      };
      for (const name of ['execute_request', 'chat_request', 'session_create_request', 'execution_create_request'])
        walk(config.schemas[name], name);
      assert.deepEqual(unbounded, []);
      assert.deepEqual(
        config.schemas.action.properties.type.enum,
        config.normalized_actions.map((a: any) => a.type),
      );
      const actions = Object.fromEntries(
        config.normalized_actions.map((a: { type: string; fallback: string | null }) => [a.type, a.fallback]),
      );
      assert.equal(actions.OFFER_PRODUCT_ALTERNATIVES, 'RESPOND');
      assert.equal(actions.RENDER_PRODUCT_DETAILS, 'DATA_RESULT');
      assert.equal(actions.RESPOND, null);
      assert.equal(config.schemas.execute_request.properties.input.properties.message.maxLength, 16_000);
      assert.equal(config.schemas.chat_request.properties.messages.maxItems, 50);
      assert.ok(!JSON.stringify(config).includes(engine.a.secretKey));
    });

    test('the OpenAPI document keeps the two auth schemes apart; each area document stays under the fuzzer limit', async () => {
      const engine = await shared.fresh();
      const reply = await engine.rest.inject({ method: 'GET', url: '/openapi.json' });
      const doc = JSON.parse(reply.body);
      // The fuzzer reads at most 256 KiB of `<base>/openapi.json`: every area's document fits, and together they hold
      // every operation of the whole document but the two root probes, each once, under its own path.
      const seen: string[] = [];
      for (const part of REST_OPENAPI_PARTS) {
        const partReply = await engine.rest.inject({ method: 'GET', url: `${part.prefix}/openapi.json` });
        assert.equal(partReply.statusCode, 200, part.prefix);
        assert.ok(Buffer.byteLength(partReply.body) < 256 * 1024, `${part.prefix}: ${partReply.body.length} bytes`);
        const partDoc = JSON.parse(partReply.body);
        assert.deepEqual(partDoc.servers, [{ url: part.prefix }]);
        for (const [route, item] of Object.entries(partDoc.paths)) {
          seen.push(`${part.prefix}${route}`);
          assert.deepEqual(item, doc.paths[`${part.prefix}${route}`], `${part.prefix}${route}`);
        }
        for (const ref of JSON.stringify(partDoc).match(/#\/components\/[^"]+/g) ?? []) {
          const [kind, name] = ref.split('/').slice(2);
          assert.ok(partDoc.components[kind]?.[name], `${part.prefix}: ${ref} resolves`);
        }
      }
      assert.deepEqual(
        seen.sort(),
        Object.keys(doc.paths)
          .filter((route) => route !== '/healthz' && route !== '/ready')
          .sort(),
      );
      assert.equal(doc.components.securitySchemes.runtimeToken.bearerFormat, 'JWT');
      assert.match(doc.components.securitySchemes.bearerAuth.description, /Merchant key/);
      assert.deepEqual(doc.paths['/api/v1/runtime/ai/chat'].post.security, [{ runtimeToken: [] }]);
      assert.deepEqual(doc.paths['/api/v1/auth/token'].post.security, []);
      assert.deepEqual(doc.paths['/api/v1/catalog/products'].get.security, [
        { bearerAuth: [] },
        { apiKey: [] },
        { catalogApiKey: [] },
      ]);
      for (const route of [
        '/api/v1/runtime/sessions/{sessionId}/resume-token/recover',
        '/api/v1/runtime/agents/{agentId}/config',
        '/api/v1/realms/{id}/identities/services',
        '/api/v1/runtime/knowledge/search',
      ])
        assert.ok(doc.paths[route], route);
    });

    test('no secret or resume token reaches the log', async (t) => {
      const engine = await shared.fresh();
      const upstream = await startUpstream(t);
      const ids = await setupAgent(engine, engine.a, upstream.url);
      const keys = await engine.call('POST', '/api/v1/auth/keys', { token: engine.a.token, body: {} });
      const session = await engine.call('POST', '/api/v1/runtime/sessions', {
        token: engine.a.token,
        body: { agent_id: ids.agentId },
      });
      await engine.call('POST', '/api/v1/runtime/execute', {
        token: engine.a.token,
        body: {
          session_id: session.body.session_id,
          resume_token: session.body.resume_token,
          input: { message: 'hello' },
        },
      });
      await engine.call('POST', `/api/v1/runtime/sessions/${session.body.session_id}/resume-token/recover`, {
        token: engine.a.token,
      });
      const logs = engine.logs();
      assert.ok(logs.includes('request completed'), 'the log is captured');
      for (const secret of [
        keys.body.secret_key,
        session.body.resume_token,
        engine.a.secretKey,
        engine.a.token,
        'sk-test-upstream-key',
      ])
        assert.ok(!logs.includes(secret), secret.slice(0, 8));
      assert.ok(!logs.includes('hello'), 'no chat text in the log');
    });

    test('the first start of an empty database creates one realm exactly once', async () => {
      const database = await openTestDatabase<EngineDb>(target, 'engine');
      try {
        await prepareEngineDatabase(database.db);
        const [first, second] = await Promise.all(
          [ensureFirstRealm(database.db), ensureFirstRealm(database.db)].map((p) => p.catch((e) => e)),
        );
        const created = [first, second].filter((r) => r && typeof r === 'object' && 'realmId' in r);
        assert.equal(created.length, 1);
        assert.equal(await ensureFirstRealm(database.db), undefined);
      } finally {
        await database.close();
      }
      const other = await openTestDatabase<EngineDb>(target, 'engine');
      try {
        await prepareEngineDatabase(other.db);
        await bootstrapRealm(other.db, { realmName: 'pre', username: 'svc' });
        assert.equal(await ensureFirstRealm(other.db), undefined, 'a database with a realm gets none');
      } finally {
        await other.close();
      }
    });
  });
}

describe('runtime CLI and first start', () => {
  test('keel engine bootstrap --json adds realmId, accessKey and secretKey; npm start prints first-start credentials once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-runtime-'));
    const env = {
      ...process.env,
      KEEL_DATA_DIR: dataDir,
      ENGINE_PORT: '0',
      ENGINE_MCP_PORT: '0',
      ENGINE_WEBHOOK_PORT: '0',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      ENGINE_WEBHOOK_WORKER: 'false',
    };
    const start = () =>
      new Promise<{ out: string; base: string; stop: () => Promise<void> }>((resolve, reject) => {
        const child = spawn(process.execPath, [KEEL, 'start', 'engine'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          const match = out.match(/engine listening on (\S+)/);
          if (match && out.includes('ready'))
            resolve({
              out,
              base: match[1]!,
              stop: () =>
                new Promise((done) => {
                  child.once('exit', () => done());
                  child.kill('SIGTERM');
                }),
            });
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
    try {
      const first = await start();
      const match = first.out.match(/access_key (eak_\S+)\nkeel: {3}secret_key (esk_\S+)/);
      assert.ok(match, first.out);
      const reply = await fetch(`${first.base}/api/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ access_key: match[1], secret_key: match[2] }),
      });
      assert.equal(reply.status, 200);
      await first.stop();
      assert.ok(fs.existsSync(path.join(dataDir, 'engine-token.key')));
      const second = await start();
      assert.doesNotMatch(second.out, /secret_key/);
      await second.stop();
      const boot = await runKeel(['engine', 'bootstrap', '--json'], env);
      const result = JSON.parse(boot.stdout);
      assert.match(result.realmId, /^[0-9a-f-]{36}$/);
      assert.match(result.accessKey, /^eak_/);
      assert.match(result.secretKey, /^esk_/);
      assert.ok(result.merchantId && result.keys.merchant, 'the catalog part is still there');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
