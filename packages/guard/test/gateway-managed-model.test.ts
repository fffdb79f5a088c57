import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { converseAnswer, startFakeBedrock, useFakeAwsCredentials } from '@keel/models/testing';
import OpenAI from 'openai';
import { postChat, startGateway } from './gateway-fixtures.ts';

describe('MANAGED_MODEL: Amazon Bedrock through the AWS SDK (Converse API)', () => {
  useFakeAwsCredentials();

  test('the gateway redacts input, calls Converse (signed, with the request model) and answers a chat completion', async (t) => {
    const bedrock = await startFakeBedrock(t, () => ({ body: converseAnswer('Mail sent to ops@corp-mail.example.') }));
    const env = {
      AI_PROVIDER: 'MANAGED_MODEL',
      MANAGED_MODEL_REGION: 'eu-west-1',
      MANAGED_MODEL_ID: 'anthropic.claude-test-v1',
      MANAGED_MODEL_ENDPOINT_OVERRIDE: bedrock.url,
    };
    const { client, ctx } = await startGateway(t, undefined, env);
    assert.equal(ctx.provider?.kind, 'MANAGED_MODEL');
    const response = await client.chat.completions.create({
      model: 'anthropic.claude-3-haiku',
      max_tokens: 100,
      temperature: 0.2,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Mail jane.doe@example.org' },
      ],
    });
    // Guard's AI scoring also asks the managed model (with MANAGED_MODEL_ID); the gateway forwards the request's model.
    const call = bedrock.calls.find((c) => c.path === '/model/anthropic.claude-3-haiku/converse')!;
    assert.ok(call);
    assert.ok(
      bedrock.calls.filter((c) => c !== call).every((c) => c.path === '/model/anthropic.claude-test-v1/converse'),
    );
    assert.match(
      String(call.headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=AKIDLOCALTESTONLY000\/\d{8}\/eu-west-1\/bedrock\/aws4_request/,
    );
    assert.deepEqual(call.body.system, [{ text: 'Be brief.' }]);
    assert.match(call.body.messages[0].content[0].text, /^Mail \[LLM-GW-\d+_EMAIL_1\]$/);
    assert.deepEqual(call.body.inferenceConfig, { maxTokens: 100, temperature: 0.2, stopSequences: ['END'] });
    assert.equal(response.object, 'chat.completion');
    assert.equal(response.model, 'anthropic.claude-3-haiku');
    assert.equal(response.choices[0]!.finish_reason, 'stop');
    assert.match(response.choices[0]!.message.content!, /^Mail sent to \[LLM-GW-\d+_EMAIL_2\]\.$/);
    assert.deepEqual(response.usage, { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    assert.equal((response as any).gw_meta.output[0].breakdown.EMAIL, 1);
  });

  test('stream: true is a 400 streaming_not_supported and nothing is sent to Bedrock', async (t) => {
    const bedrock = await startFakeBedrock(t, () => ({ body: converseAnswer('never') }));
    const { client, url } = await startGateway(t, undefined, {
      AI_PROVIDER: 'MANAGED_MODEL',
      MANAGED_MODEL_REGION: 'us-east-1',
      MANAGED_MODEL_ENDPOINT_OVERRIDE: bedrock.url,
    });
    const error = await client.chat.completions
      .create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError, String(error));
    assert.deepEqual(error.error, {
      message: 'Streaming is not supported by the configured upstream (MANAGED_MODEL)',
      type: 'invalid_request_error',
      param: null,
      code: 'streaming_not_supported',
    });
    const raw = await postChat(url, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(raw.status, 400);
    assert.ok((await raw.json()).gw_meta.rid);
    assert.equal(bedrock.calls.length, 0);
  });

  test('a Bedrock error passes through with its status as an OpenAI-style error naming only its type', async (t) => {
    const bedrock = await startFakeBedrock(t, () => ({
      status: 400,
      errorType: 'ValidationException',
      body: { message: 'The provided model identifier is invalid: secret-looking detail' },
    }));
    const { client } = await startGateway(t, undefined, {
      AI_PROVIDER: 'MANAGED_MODEL',
      MANAGED_MODEL_REGION: 'us-east-1',
      MANAGED_MODEL_ENDPOINT_OVERRIDE: bedrock.url,
    });
    const error = await client.chat.completions
      .create({ model: 'bad', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError, String(error));
    assert.equal(error.code, 'ValidationException');
    assert.equal(error.message.includes('secret-looking'), false);
  });
});
