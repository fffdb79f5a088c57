import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  type ExampleOperation,
  exampleOperations,
  exampleProblems,
  httpSender,
  replayExamples,
} from '@keel/core/testing';
import { EXAMPLE_CONFIG } from '../src/flows/flow-api-schemas.ts';
import { EXAMPLE_IDS as E } from '../src/openapi-examples.ts';
import { buildEngine, startReceiver, testDatabaseTargets } from './helper.ts';
import { defaultTools, startMcpServer } from './mcp-servers.ts';
import { startUpstream } from './runtime-helper.ts';

const LISTENERS = ['rest', 'mcp', 'webhook'] as const;
const FLOWS = '/api/v1/runtime/flows';

/** A flow config: `nodes`, then the reply `done`. */
const replyFlow = (nodes: Record<string, unknown>[]) => ({
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: { allowed_actions: ['RESPOND'] },
  nodes: [...nodes, { id: 'done', type: 'output', action: 'RESPOND', content: 'Done' }],
});
const DRAFT_FIXTURE = {
  name: 'finds tents',
  input: { query: 'tent' },
  mocks: { tools: { catalog_search: { products: [{ catalogId: '4820175531', name: 'Trailhead 2 tent' }] } } },
  expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
};
/** Flows the executions examples need in a given state (waiting for an approval or an event, failed retryably). */
const SCENARIOS = {
  approval: {
    config: replyFlow([
      { id: 'check', type: 'approval', message: 'Refund 249 USD for order 4821?', next: 'done', on_deny: 'denied' },
      { id: 'denied', type: 'output', action: 'RESPOND', content: 'No refund' },
    ]),
    mocks: { approvals: { check: true } },
  },
  event: {
    config: replyFlow([{ id: 'payment', type: 'event_wait', event: 'payment.confirmed', next: 'done' }]),
    mocks: { events: { payment: { reference: 'pi_test' } } },
  },
  model: {
    config: replyFlow([
      { id: 'answer', type: 'ai', instructions: 'Answer the shopper in one sentence.', next: 'done' },
    ]),
    mocks: { generate: { answer: 'Yes.' } },
  },
} as const;

for (const target of testDatabaseTargets()) {
  describe(`engine /docs examples (${target.dialect})`, () => {
    test('every operation of every listener has an example that validates against its schema', async (t) => {
      const engine = await buildEngine(t, target);
      for (const listener of LISTENERS) {
        const document = (await engine[listener].inject({ url: '/openapi.json' })).json();
        assert.deepEqual(exampleProblems(document), [], listener);
      }
    });

    test("every operation's example, sent as is to the running listeners, succeeds", async (t) => {
      // The model the example provider calls and the receiver the example destination names: doubles on 127.0.0.1.
      let modelDown = false;
      const upstream = await startUpstream(t, (call) => {
        if (modelDown) return { status: 503 };
        // The flow draft asks for one JSON object: a config and its fixtures.
        if (String(call.body?.messages?.[0]?.content).startsWith('You design flows'))
          return { content: JSON.stringify({ config: EXAMPLE_CONFIG, fixtures: [DRAFT_FIXTURE] }) };
        return { content: 'Yes: Trailhead 2 reaches Oslo in 3 to 5 days.' };
      });
      const receiver = await startReceiver(t);
      // The tool server the examples register: a real MCP server with a read tool and a write tool (needs review).
      const toolServer = await startMcpServer(t, {
        tools: [
          ...defaultTools(),
          {
            name: 'reserve_stock',
            description: 'Reserve units of a SKU for an order',
            inputSchema: {
              type: 'object',
              properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
              required: ['sku', 'quantity'],
            },
          },
        ],
      });
      const engine = await buildEngine(t, target, { env: { ENGINE_REGISTRATION_ENABLED: 'true' } });
      const bases: Record<string, string> = {};
      for (const listener of LISTENERS) {
        await engine[listener].listen({ port: 0, host: '127.0.0.1' });
        bases[listener] = `http://127.0.0.1:${(engine[listener].server.address() as AddressInfo).port}`;
      }
      const { boot } = engine;
      const ids = new Map<string, string>([
        [E.merchant, boot.merchantId],
        [E.store, boot.storeIds[0]!],
        [E.realm, boot.realmId],
        [E.accessKey, boot.accessKey],
        [E.secretKey, boot.secretKey],
        [E.providerBaseUrl, upstream.url],
        [E.destinationUrl, receiver.url],
        [E.runtimeWebhookUrl, receiver.url],
        [E.toolServerUrl, toolServer.url],
        [E.toolServerHost, '127.0.0.1'],
      ]);
      let token = '';
      const headers = (operation: ExampleOperation): Record<string, string> => {
        const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
        // The tool session context is read with the session's resume token (the header the route reads).
        if (operation.key === 'GET /api/v1/runtime/mcp/sessions/{sessionId}/context')
          return { authorization: `Bearer ${token}`, 'x-resume-token': ids.get(E.resumeToken)! };
        if (schemes.includes('runtimeToken')) return { authorization: `Bearer ${token}` };
        if (schemes.length > 0) return { authorization: `Bearer ${boot.keys.merchant}` };
        return {};
      };
      const rest = httpSender(bases.rest!);
      /** A direct call the replay needs for setup, asserted to succeed. */
      const call = async (method: string, url: string, body: unknown, runtime = false) => {
        const answer = await rest({
          method,
          url,
          headers: {
            authorization: `Bearer ${runtime ? token : boot.keys.merchant}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        });
        assert.ok(answer.status < 300, `${method} ${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
        return answer.body;
      };
      const newCart = async () =>
        call('POST', '/api/v1/catalog/carts', {
          storeId: boot.storeIds[0],
          items: [{ catalogId: ids.get(E.catalogId), quantity: 1 }],
        });
      const newSession = async (map: Map<string, string>) => {
        const created = await call('POST', '/api/v1/runtime/sessions', { agent_id: map.get(E.agent) }, true);
        map.set(E.session, created.session_id);
        map.set(E.resumeToken, created.resume_token);
      };

      /** A flow of `SCENARIOS`, tested over its fixture and activated. */
      const activeFlow = async (name: string, scenario: (typeof SCENARIOS)[keyof typeof SCENARIOS]) => {
        const created = await call('POST', FLOWS, { name, config: scenario.config }, true);
        await call(
          'POST',
          `${FLOWS}/${created.id}/fixtures`,
          { name: 'reaches done', mocks: scenario.mocks, expect: { state: 'succeeded', action_type: 'RESPOND' } },
          true,
        );
        const tested = await call('POST', `${FLOWS}/${created.id}/test`, {}, true);
        assert.equal(tested.passed, true, JSON.stringify(tested));
        await call('POST', `${FLOWS}/${created.id}/activate`, {}, true);
        return created.id as string;
      };
      /** Runs a flow of `SCENARIOS` at once; the execution as it stopped (waiting or failed). */
      const runScenario = async (kind: keyof typeof SCENARIOS, body: Record<string, unknown> = {}) => {
        const flowId = await activeFlow(`Example ${kind} ${Math.random().toString(36).slice(2, 8)}`, SCENARIOS[kind]);
        return call('POST', `${FLOWS}/${flowId}/execute`, { agent_id: ids.get(E.agent), ...body }, true);
      };
      /** An active flow with an event trigger. */
      const eventTrigger = async (map: Map<string, string>) => {
        const flowId = await activeFlow(`Fired ${Math.random().toString(36).slice(2, 8)}`, SCENARIOS.approval);
        const trigger = await call('POST', `${FLOWS}/${flowId}/triggers`, { kind: 'event', name: 'Order paid' }, true);
        map.set(E.flow, flowId);
        map.set(E.trigger, trigger.id);
      };
      const draftFlow = async (map: Map<string, string>) => {
        const created = await call(
          'POST',
          FLOWS,
          { name: `Retired ${Math.random().toString(36).slice(2, 8)}`, config: SCENARIOS.approval.config },
          true,
        );
        map.set(E.flow, created.id);
      };

      const restDocument = (await rest({ method: 'GET', url: '/openapi.json', headers: {} })).body;
      const results = await replayExamples({
        document: restDocument,
        ids,
        send: rest,
        headers,
        first: [
          'POST /api/v1/auth/token',
          'POST /api/v1/auth/register',
          'POST /api/v1/catalog/keys',
          'POST /api/v1/catalog/products',
          'POST /api/v1/catalog/product',
          'POST /api/v1/catalog/carts',
          'GET /api/v1/catalog/carts/{cartId}',
          'POST /api/v1/catalog/carts/items',
          'PATCH /api/v1/catalog/carts/items',
          'DELETE /api/v1/catalog/carts/items',
          'POST /api/v1/catalog/orders',
          'POST /api/v1/catalog/procurement/suppliers',
          'POST /api/v1/catalog/procurement/inventory-items',
          'POST /api/v1/catalog/procurement/orders',
          'POST /api/v1/realms/{id}/services',
          'POST /api/v1/realms/{id}/agents',
          'POST /api/v1/runtime/providers',
          'POST /api/v1/runtime/prompts',
          'PUT /api/v1/runtime/agents/{agentId}/config',
          'POST /api/v1/runtime/ai/usage',
          'POST /api/v1/integrations/clients',
          'POST /api/v1/runtime/webhooks',
          'POST /api/v1/runtime/sessions',
          'POST /api/v1/runtime/mcp/servers',
          'POST /api/v1/runtime/flows',
          'POST /api/v1/runtime/flows/{id}/fixtures',
          'POST /api/v1/runtime/flows/{id}/test',
          'POST /api/v1/runtime/flows/{id}/publish',
          'POST /api/v1/runtime/flows/{id}/activate',
          'POST /api/v1/runtime/executions',
          'POST /api/v1/runtime/mcp/routing/rules',
          'POST /api/v1/runtime/mcp/tools/execute',
          'POST /api/v1/governance/policies',
          'POST /api/v1/governance/evaluation-datasets',
          'POST /api/v1/governance/evaluation-runs',
        ],
        // After everything else: archiving leaves the flow read-only (on a flow of its own; its hook switches the
        // flow id the examples use), and the session ones each end a session (on sessions of their own).
        last: [
          // Activating the example policy (stock lookups only) after every tool and flow example.
          'POST /api/v1/governance/policies/{id}/activate',
          'POST /api/v1/runtime/flows/{id}/archive',
          'POST /api/v1/runtime/sessions/{sessionId}/complete',
          'POST /api/v1/runtime/sessions/{sessionId}/cancel',
          // Once the agent's attachment is gone (a DELETE, sent before these).
          'DELETE /api/v1/runtime/mcp/servers/{id}',
          'DELETE /api/v1/runtime/webhooks/{id}',
          // After its read and rotation examples.
          'DELETE /api/v1/integrations/clients/{id}',
        ],
        after: {
          'POST /api/v1/auth/token': (body) => {
            token = body.access_token;
          },
          'POST /api/v1/catalog/keys': (body, map) => void map.set(E.merchantKey, body.record.id),
          'POST /api/v1/catalog/products': (body, map) => {
            map.set(E.product, body.id);
            map.set(E.catalogId, body.catalogId);
          },
          'POST /api/v1/catalog/product': (body, map) => void map.set(E.otherCatalogId, body.catalogId),
          'POST /api/v1/catalog/carts': (body, map) => {
            map.set(E.cart, body.id);
            map.set(E.checkout, body.checkoutId);
          },
          'POST /api/v1/catalog/orders': (body, map) => void map.set(E.order, body.orderId),
          'POST /api/v1/catalog/webhooks/destinations': (body, map) => void map.set(E.destination, body.id),
          'POST /api/v1/catalog/procurement/suppliers': (body, map) => void map.set(E.supplier, body.id),
          'POST /api/v1/catalog/procurement/inventory-items': (body, map) => void map.set(E.inventoryItem, body.id),
          'POST /api/v1/catalog/procurement/orders': (body, map) => void map.set(E.procurementOrder, body.id),
          'POST /api/v1/auth/keys': (body, map) => void map.set(E.keyPair, body.key_id),
          'POST /api/v1/realms/{id}/services': (body, map) => void map.set(E.serviceIdentity, body.identity.id),
          'POST /api/v1/realms/{id}/agents': (body, map) => void map.set(E.agent, body.identity.id),
          'POST /api/v1/runtime/providers': (body, map) => void map.set(E.provider, body.id),
          'POST /api/v1/runtime/prompts': (body, map) => void map.set(E.prompt, body.id),
          'POST /api/v1/runtime/sessions': (body, map) => {
            map.set(E.session, body.session_id);
            map.set(E.resumeToken, body.resume_token);
          },
          'POST /api/v1/runtime/sessions/{sessionId}/resume-token/refresh': (body, map) =>
            void map.set(E.resumeToken, body.resume_token),
          'POST /api/v1/runtime/sessions/{sessionId}/resume-token/recover': (body, map) =>
            void map.set(E.resumeToken, body.resume_token),
          'POST /api/v1/runtime/knowledge': (body, map) => void map.set(E.knowledge, body.id),
          'POST /api/v1/runtime/flows': (body, map) => void map.set(E.flow, body.id),
          'POST /api/v1/runtime/executions': (body, map) => void map.set(E.execution, body.id),
          'POST /api/v1/runtime/mcp/servers': async (body, map) => {
            map.set(E.toolServer, body.id);
            const tools = await call('GET', `/api/v1/runtime/mcp/servers/${body.id}/tools`, undefined, true);
            map.set(E.tool, tools.data.find((tool: { name: string }) => tool.name === 'reserve_stock').id);
          },
          'POST /api/v1/runtime/mcp/routing/rules': (body, map) => void map.set(E.routingRule, body.id),
          'POST /api/v1/integrations/clients': (body, map) => void map.set(E.integrationClient, body.id),
          'POST /api/v1/runtime/webhooks': (body, map) => void map.set(E.runtimeWebhook, body.id),
          'POST /api/v1/runtime/mcp/tools/execute': (body, map) => void map.set(E.trace, body.trace_id),
          'POST /api/v1/runtime/mcp/tool-proposals/generate': (body, map) => void map.set(E.proposal, body.data[0].id),
          'POST /api/v1/governance/policies': (body, map) => void map.set(E.policy, body.id),
          'POST /api/v1/governance/evaluation-datasets': (body, map) => void map.set(E.dataset, body.id),
          'POST /api/v1/governance/evaluation-runs': (body, map) => void map.set(E.evaluationRun, body.id),
        },
        before: {
          // A trace of the replay realm: the newest event's (every runtime call before this one left events).
          'GET /api/v1/observability/traces/{trace_id}': async (map) => {
            const logs = await call('GET', '/api/v1/observability/logs?limit=1', undefined, true);
            map.set(E.observedTrace, logs.data[0].trace_id);
          },
          // A second key for the bulk operations, so the single-key ones keep theirs.
          'POST /api/v1/catalog/keys/bulk-revoke': async (map) => {
            const key = await call('POST', '/api/v1/catalog/keys', { name: 'Old importer', scope: 'merchant' });
            map.set(E.otherMerchantKey, key.record.id);
          },
          // Only a cart without a checkout can be cleared: one opened by the MCP reference tool cart_create.
          'POST /api/v1/catalog/carts/clear': async (map) => {
            const answer = await httpSender(bases.mcp!)({
              method: 'POST',
              url: '/mcp',
              headers: { authorization: `Bearer ${boot.keys.merchant}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'tools/call',
                params: {
                  name: 'cart_create',
                  arguments: { storeId: boot.storeIds[0], items: [{ catalogId: map.get(E.catalogId), quantity: 1 }] },
                },
              }),
            });
            assert.equal(answer.status, 200, JSON.stringify(answer.body));
            map.set(E.cart, answer.body.result.structuredContent.cart.id);
          },
          'POST /api/v1/catalog/carts/archive': async (map) => void map.set(E.cart, (await newCart()).id),
          'POST /api/v1/catalog/orders/complete': async (map) => void map.set(E.checkout, (await newCart()).checkoutId),
          'POST /catalog/orders/complete': async (map) => void map.set(E.checkout, (await newCart()).checkoutId),
          // A provider and a prompt version no agent uses can be deleted.
          'DELETE /api/v1/runtime/providers/{id}': async (map) => {
            const spare = await call(
              'POST',
              '/api/v1/runtime/providers',
              { type: 'openai_compatible', name: 'Spare', base_url: upstream.url, text_model: 'gpt-4o-mini' },
              true,
            );
            map.set(E.provider, spare.id);
          },
          'DELETE /api/v1/runtime/prompts/{id}': async (map) => {
            const draft = await call(
              'POST',
              '/api/v1/runtime/prompts',
              { key: 'returns-assistant', name: 'Returns assistant', content: 'Help with returns.' },
              true,
            );
            map.set(E.prompt, draft.id);
          },
          // A second published version to roll back from.
          'POST /api/v1/runtime/flows/{id}/rollback': async (map) => {
            await call('POST', `${FLOWS}/${map.get(E.flow)}/test`, {}, true);
            await call('POST', `${FLOWS}/${map.get(E.flow)}/activate`, {}, true);
          },
          'POST /api/v1/runtime/flows/{id}/archive': draftFlow,
          'DELETE /api/v1/runtime/flows/{id}': draftFlow,
          'POST /api/v1/runtime/executions/{id}/approvals/{approvalId}/approve': async (map) => {
            const waiting = await runScenario('approval');
            map.set(E.execution, waiting.id);
            map.set(E.approval, waiting.wait.approval_id);
          },
          'POST /api/v1/runtime/executions/{id}/approvals/{approvalId}/deny': async (map) => {
            const waiting = await runScenario('approval');
            map.set(E.execution, waiting.id);
            map.set(E.approval, waiting.wait.approval_id);
          },
          'POST /api/v1/runtime/executions/{id}/resume': async (map) =>
            void map.set(E.execution, (await runScenario('event')).id),
          'POST /api/v1/runtime/executions/{id}/cancel': async (map) =>
            void map.set(E.execution, (await runScenario('event')).id),
          // The model answers 503 once: the execution stops retryable.
          'POST /api/v1/runtime/executions/{id}/retry': async (map) => {
            modelDown = true;
            const failed = await runScenario('model', { max_retries: 3 }).finally(() => {
              modelDown = false;
            });
            map.set(E.execution, failed.id);
          },
          // Triggers on an active flow of their own (other examples switch or delete the example flow).
          'POST /api/v1/runtime/flows/{id}/triggers': async (map) =>
            void map.set(
              E.flow,
              await activeFlow(`Triggered ${Math.random().toString(36).slice(2, 8)}`, SCENARIOS.approval),
            ),
          'POST /api/v1/runtime/flows/{id}/triggers/{triggerId}/fire': eventTrigger,
          'DELETE /api/v1/runtime/flows/{id}/triggers/{triggerId}': eventTrigger,
          // Maker-checker: the request comes from another member (a developer service), the example decides it.
          'POST /api/v1/governance/allowlist/{id}/decision': async (map) => {
            const maker = await call(
              'POST',
              `/api/v1/realms/${boot.realmId}/services`,
              {
                username: `maker-${Math.random().toString(36).slice(2, 8)}`,
                role: 'developer',
                issue_credentials: true,
              },
              true,
            );
            const exchanged = await rest({
              method: 'POST',
              url: '/api/v1/auth/token',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                access_key: maker.credentials.access_key,
                secret_key: maker.credentials.secret_key,
              }),
            });
            const requested = await rest({
              method: 'POST',
              url: '/api/v1/governance/allowlist',
              headers: { authorization: `Bearer ${exchanged.body.access_token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ scope: 'tool', value: 'reserve_stock', reason: 'Checkout reserves stock' }),
            });
            assert.equal(requested.status, 201, JSON.stringify(requested.body));
            map.set(E.allowlistRequest, requested.body.id);
          },
          'POST /api/v1/runtime/sessions/{sessionId}/complete': newSession,
          'POST /api/v1/runtime/sessions/{sessionId}/cancel': newSession,
        },
      });
      assert.equal(results.length, exampleOperations(restDocument).length, 'no REST operation excluded');
      const answer = (key: string) => results.find((result) => result.key === key)!.body as any;
      // The state-changing examples did what they show, not merely a 2xx.
      assert.equal(answer('POST /api/v1/runtime/flows/{id}/rollback').active_version, 1);
      assert.equal(answer('POST /api/v1/runtime/executions/{id}/approvals/{approvalId}/approve').state, 'running');
      assert.equal(answer('POST /api/v1/runtime/executions/{id}/retry').state, 'queued');
      assert.equal(answer('POST /api/v1/runtime/executions/{id}/cancel').state, 'cancelled');
      assert.equal(answer('POST /api/v1/runtime/flows/draft').status, 'pending_approval');
      assert.equal(answer('POST /api/v1/runtime/flows/{id}/triggers/{triggerId}/fire').duplicate, false);
      assert.equal(answer('POST /api/v1/runtime/mcp/tools/execute').tool_name, 'lookup_stock');
      assert.equal(answer('GET /api/v1/runtime/mcp/routing/trace/{traceId}').decisions.length, 1);
      assert.equal(answer('POST /api/v1/runtime/mcp/servers/{id}/credentials/{version}/rollback').active_version, 1);
      assert.equal(answer('POST /api/v1/governance/policies/{id}/activate').status, 'active');
      assert.equal(answer('POST /api/v1/governance/allowlist/{id}/decision').status, 'approved');
      assert.equal(answer('POST /api/v1/governance/evaluation-runs').summary.passed, 2);
      const chat = results.find((result) => result.key === 'POST /api/v1/runtime/ai/chat')!.body as any;
      // The realm has active flows: the turn went through flow routing (its flow's catalog tool is not wired here,
      // so a routed turn may end failed with an ERROR action; either way the answer shows the routing decision).
      assert.equal(typeof chat.routing.flow_routing, 'object', JSON.stringify(chat.routing));
      assert.ok(chat.action.type === 'ERROR' ? chat.status === 'failed' : chat.status === 'succeeded');

      for (const listener of ['mcp', 'webhook'] as const) {
        const send = httpSender(bases[listener]!);
        const document = (await send({ method: 'GET', url: '/openapi.json', headers: {} })).body;
        const answers = await replayExamples({ document, ids, send, headers });
        assert.equal(answers.length, exampleOperations(document).length, `no ${listener} operation excluded`);
        if (listener === 'mcp') {
          const search = answers.find((answer) => answer.key === 'POST /mcp')!.body as any;
          assert.equal(search.result.isError, undefined, JSON.stringify(search));
          assert.ok(search.result.structuredContent, 'the tool call returns products');
        }
      }
    });
  });
}
