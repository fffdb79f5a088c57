import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Compile } from 'typebox/compile';
import {
  ACTION_TYPES,
  compileFlow,
  FLOW_TOOL_NAME_MAX,
  FlowRejected,
  flowToolName,
  flowToolSchemas,
} from '../src/flows/index.ts';

const base = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: { allowed_actions: ['DATA_RESULT'] },
  nodes: [{ id: 'out', type: 'output', action: 'DATA_RESULT' }],
};

describe('published flows as tools', () => {
  test('the tool name is engine_flow_<normalized_flow_name>_v<version>, at most 64 characters', () => {
    assert.equal(flowToolName('Shopping Assistant', 3), 'engine_flow_shopping_assistant_v3');
    assert.equal(flowToolName('  Größe & Farbe -- Berater! ', 1), 'engine_flow_grosse_farbe_berater_v1');
    assert.equal(flowToolName('___', 2), 'engine_flow_flow_v2');
    assert.equal(flowToolName('返品', 2), 'engine_flow_flow_v2');
    const long = flowToolName('a'.repeat(40) + ' ' + 'b'.repeat(40), 12345);
    assert.equal(long.length, FLOW_TOOL_NAME_MAX);
    assert.match(long, /^engine_flow_a+_?b*_v12345$/);
    assert.ok(!flowToolName(`${'a'.repeat(47)} tail`, 1).includes('__'));
    for (const name of ['x', 'Checkout / Hand-off', 'ümlaut', 'a'.repeat(200)])
      assert.match(flowToolName(name, 7), /^[a-z0-9_]{1,64}$/);
  });

  test('input schema: the flow contract plus the agentId, sessionId and idempotencyKey controls; output: the action', () => {
    const plan = compileFlow({
      ...base,
      contract: {
        input: {
          type: 'object',
          properties: { query: { type: 'string', description: 'What to find' }, limit: { type: 'integer' } },
          required: ['query'],
        },
        output: { type: 'object', properties: { products: { type: 'array' } }, required: ['products'] },
      },
    });
    const { inputSchema, outputSchema } = flowToolSchemas(plan);
    assert.deepEqual(Object.keys(inputSchema.properties as object), [
      'query',
      'limit',
      'agentId',
      'sessionId',
      'idempotencyKey',
    ]);
    assert.deepEqual(inputSchema.required, ['query']);
    const checkInput = Compile(inputSchema as never);
    assert.equal(checkInput.Check({ query: 'shoes', limit: 3, idempotencyKey: 'k1', sessionId: 's' }), true);
    assert.equal(checkInput.Check({ limit: 3 }), false, 'a required contract field');
    assert.equal(checkInput.Check({ query: 'x', extra: 1 }), false, 'nothing beyond the contract and controls');
    assert.equal(checkInput.Check({ query: 1 }), false);
    const checkOutput = Compile(outputSchema as never);
    assert.equal(checkOutput.Check({ type: 'DATA_RESULT', content: null, data: { products: [] }, metadata: {} }), true);
    assert.equal(
      checkOutput.Check({ type: 'ERROR', content: null, data: { code: 'X', retryable: false }, metadata: {} }),
      true,
    );
    assert.equal(checkOutput.Check({ type: 'NOPE', content: null, data: null, metadata: {} }), false);
    assert.deepEqual((outputSchema.properties as { type: { enum: string[] } }).type.enum, [...ACTION_TYPES]);
  });

  test('without a contract a flow tool takes {message}', () => {
    const { inputSchema } = flowToolSchemas(compileFlow(base));
    assert.deepEqual(inputSchema.required, ['message']);
    assert.equal(Compile(inputSchema as never).Check({ message: 'hi', agentId: 'a' }), true);
  });

  test('a contract input field cannot take a control name', () => {
    for (const control of ['agentId', 'sessionId', 'idempotencyKey'])
      assert.throws(
        () =>
          compileFlow({
            ...base,
            contract: { input: { type: 'object', properties: { [control]: { type: 'string' } } } },
          }),
        (error: unknown) =>
          error instanceof FlowRejected &&
          error.problems[0]!.code === 'FLOW_CONTRACT_INVALID' &&
          error.problems[0]!.path === `/contract/input/properties/${control}`,
      );
  });
});
