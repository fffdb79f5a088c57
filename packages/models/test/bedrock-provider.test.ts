import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBedrockProvider, fromConverseOutput, toConverseRequest } from '../src/bedrock-provider.ts';
import { createModelProvider } from '../src/create-provider.ts';
import { converseAnswer, startFakeBedrock, useFakeAwsCredentials } from '../src/testing.ts';

describe('MANAGED_MODEL: Amazon Bedrock through the AWS SDK (Converse API)', () => {
  useFakeAwsCredentials();

  test('complete() serves AI scoring and validators with MANAGED_MODEL_ID', async (t) => {
    const bedrock = await startFakeBedrock(t, () => ({ body: converseAnswer('{"answer": "YES", "confidence": 0.9}') }));
    const provider = createModelProvider({
      provider: 'MANAGED_MODEL',
      modelUrl: undefined,
      apiKey: undefined,
      model: 'gpt-4o-mini',
      managedModel: { region: 'us-east-1', modelId: 'amazon.nova-lite-v1:0', endpointOverride: bedrock.url },
    })!;
    t.after(() => provider.close());
    assert.equal(provider.supportsStreaming, false);
    const text = await provider.complete(
      {
        messages: [
          { role: 'system', content: 'Judge.' },
          { role: 'user', content: 'text' },
        ],
        temperature: 0,
        maxTokens: 20,
      },
      { timeoutMs: 2000 },
    );
    assert.equal(text, '{"answer": "YES", "confidence": 0.9}');
    assert.equal(bedrock.calls[0]!.path, '/model/amazon.nova-lite-v1:0/converse');
    assert.deepEqual(bedrock.calls[0]!.body.inferenceConfig, { maxTokens: 20, temperature: 0 });
  });

  test('complete() rejects with an UpstreamError on a Bedrock error or a timeout', async (t) => {
    const bedrock = await startFakeBedrock(t, () => ({
      status: 403,
      errorType: 'AccessDeniedException',
      body: { message: 'no' },
    }));
    const provider = createBedrockProvider({ region: 'us-east-1', modelId: 'x', endpointOverride: bedrock.url });
    t.after(() => provider.close());
    await assert.rejects(provider.complete({ messages: [{ role: 'user', content: 'hi' }] }, { timeoutMs: 2000 }), {
      name: 'UpstreamError',
      status: 403,
    });
    const dead = createBedrockProvider({ region: 'us-east-1', modelId: 'x', endpointOverride: 'http://127.0.0.1:9' });
    t.after(() => dead.close());
    await assert.rejects(dead.complete({ messages: [{ role: 'user', content: 'hi' }] }, { timeoutMs: 2000 }), {
      name: 'UpstreamError',
    });
  });

  test('the Converse mapping: roles, tools, tool results and tool calls', () => {
    const request = toConverseRequest(
      {
        model: 'm',
        max_completion_tokens: 50,
        top_p: 0.5,
        tools: [
          {
            type: 'function',
            function: { name: 'lookup', description: 'Find', parameters: { type: 'object', properties: {} } },
          },
        ],
        messages: [
          { role: 'developer', content: 'Rules.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Find order' },
              { type: 'image_url', image_url: { url: 'x' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{"id":7}' } }],
          },
          { role: 'tool', tool_call_id: 't1', content: 'shipped' },
          { role: 'user', content: 'thanks' },
        ],
      },
      'model-id',
    );
    assert.deepEqual(request.system, [{ text: 'Rules.' }]);
    assert.deepEqual(request.inferenceConfig, { maxTokens: 50, topP: 0.5 });
    assert.equal(request.toolConfig?.tools?.[0]?.toolSpec?.name, 'lookup');
    assert.deepEqual(
      request.messages!.map((m) => m.role),
      ['user', 'assistant', 'user'],
      'consecutive turns of one role are merged (tool result + user text)',
    );
    assert.deepEqual(request.messages![1]!.content![0], {
      toolUse: { toolUseId: 't1', name: 'lookup', input: { id: 7 } },
    });
    assert.equal(request.messages![2]!.content!.length, 2);

    const answer = fromConverseOutput(
      {
        output: {
          message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't2', name: 'lookup', input: { id: 8 } } }] },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
        metrics: { latencyMs: 1 },
        $metadata: {},
      },
      'model-id',
    );
    assert.equal(answer.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(answer.choices[0]!.message.content, null);
    assert.deepEqual(answer.choices[0]!.message.tool_calls, [
      { id: 't2', type: 'function', function: { name: 'lookup', arguments: '{"id":8}' } },
    ]);
  });
});
