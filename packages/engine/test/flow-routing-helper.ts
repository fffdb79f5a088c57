import assert from 'node:assert/strict';
import { EXAMPLE_CONFIG } from '../src/flows/flow-api-schemas.ts';
import type { Realm, RuntimeUnderTest } from './runtime-helper.ts';

export const FLOWS = '/api/v1/runtime/flows';

/** A flow config (search → show) whose routing manifest says when to use it. */
export function routedConfig(routing: Record<string, unknown> = {}) {
  return { ...EXAMPLE_CONFIG, routing: { ...EXAMPLE_CONFIG.routing, ...routing } };
}

const FIXTURE = {
  name: 'finds mugs',
  input: { query: 'mug' },
  mocks: { tools: { catalog_search: { products: [{ catalogId: '1234567890', name: 'Mug' }] } } },
  expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
};

/** Tests the latest version of a flow over its fixtures and answers the test result. */
export async function passTest(engine: RuntimeUnderTest, realm: Realm, flowId: string) {
  const tested = await engine.call('POST', `${FLOWS}/${flowId}/test`, { token: realm.token, body: {} });
  assert.equal(tested.status, 200, JSON.stringify(tested.body));
  assert.equal(tested.body.passed, true, JSON.stringify(tested.body));
}

/** A flow with one passing fixture, tested and activated at version 1. */
export async function activeFlow(
  engine: RuntimeUnderTest,
  realm: Realm,
  name: string,
  config: Record<string, unknown> = routedConfig(),
) {
  const created = await engine.call('POST', FLOWS, { token: realm.token, body: { name, config } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const fixture = await engine.call('POST', `${FLOWS}/${id}/fixtures`, { token: realm.token, body: FIXTURE });
  assert.equal(fixture.status, 201, JSON.stringify(fixture.body));
  await passTest(engine, realm, id);
  const activated = await engine.call('POST', `${FLOWS}/${id}/activate`, { token: realm.token, body: {} });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  return activated.body;
}

/** A viewer's bearer token in a realm. */
export async function viewerToken(engine: RuntimeUnderTest, realm: Realm, username: string): Promise<string> {
  const viewer = await engine.call('POST', `/api/v1/realms/${realm.realmId}/identities/services`, {
    token: realm.token,
    body: { username, role: 'viewer' },
  });
  assert.equal(viewer.status, 201, JSON.stringify(viewer.body));
  return (await engine.exchange(viewer.body.credentials.access_key, viewer.body.credentials.secret_key)).body
    .access_token;
}
