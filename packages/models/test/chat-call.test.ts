import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import {
  callChat,
  createBedrockProvider,
  createChatCompletionsProvider,
  estimateTokens,
  ModelCallError,
  retryWithBackoff,
} from '../src/index.ts';
import { converseAnswer, startFakeBedrock, useFakeAwsCredentials } from '../src/testing.ts';

type Answer = { status?: number; body?: string; delayMs?: number };

/** A chat-completions upstream double on 127.0.0.1 that answers each call with `answer(body)`. */
async function startUpstream(t: TestContext, answer: (body: any) => Answer) {
  const calls: any[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const body = JSON.parse(raw);
      calls.push(body);
      const reply = answer(body);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(reply.body ?? '');
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const provider = createChatCompletionsProvider({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey: 'sk-test',
    defaultModel: 'default-model',
  });
  t.after(() => provider.close());
  return { provider, calls };
}

const completion = (content: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'served-model', choices: [{ message: { role: 'assistant', content } }], ...extra });

const call = { model: 'asked-model', messages: [{ role: 'user' as const, content: 'Hello there, how are you?' }] };
const quick = () => ({ timeoutMs: 2000, signal: new AbortController().signal });

async function failure(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => assert.fail('the call should fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ModelCallError, String(error));
  return error;
}

describe('callChat: one chat call with a deadline and usage accounting', () => {
  test("the upstream's usage is taken as sent; sampling settings pass through", async (t) => {
    const { provider, calls } = await startUpstream(t, () => ({
      body: completion('Fine.', { usage: { prompt_tokens: 12, completion_tokens: 3 } }),
    }));
    const result = await callChat(provider, { ...call, temperature: 0.2, maxTokens: 50, topP: 0.9 }, quick());
    assert.deepEqual(result, { content: 'Fine.', inputTokens: 12, outputTokens: 3, model: 'served-model' });
    assert.equal(calls[0].model, 'asked-model');
    assert.equal(calls[0].temperature, 0.2);
    assert.equal(calls[0].max_tokens, 50);
    assert.equal(calls[0].top_p, 0.9);
    assert.equal(calls[0].stream, undefined);
  });

  test('without usage (or with nonsense counts) the tokens are estimated; the asked model stands in', async (t) => {
    const { provider } = await startUpstream(t, () => ({
      body: JSON.stringify({ choices: [{ message: { content: 'Twelve chars' } }], usage: { prompt_tokens: -1 } }),
    }));
    const result = await callChat(provider, call, quick());
    assert.equal(result.inputTokens, estimateTokens('Hello there, how are you?'));
    assert.equal(result.outputTokens, 3);
    assert.equal(result.model, 'asked-model');
  });

  test('failures say whether another attempt may help, and never carry the body', async (t) => {
    let reply: Answer = {};
    const { provider } = await startUpstream(t, () => reply);
    const cases: [Answer, boolean, RegExp][] = [
      [{ status: 429, body: '{"secret":"s3"}' }, true, /HTTP 429/],
      [{ status: 503 }, true, /HTTP 503/],
      [{ status: 400, body: '{"secret":"s3"}' }, false, /HTTP 400/],
      [{ body: 'not json' }, true, /not JSON/],
      [{ body: completion(42) }, true, /no message content/],
    ];
    for (const [answer, retryable, message] of cases) {
      reply = answer;
      const error = await failure(callChat(provider, call, quick()));
      assert.equal(error.retryable, retryable, error.message);
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /s3/);
    }
    reply = { body: completion('x'.repeat(5000)) };
    const big = await failure(callChat(provider, call, { ...quick(), maxAnswerBytes: 1000 }));
    assert.equal(big.retryable, false);
    assert.match(big.message, /exceeds 1000 bytes/);
  });

  test('a slow upstream times out (retryable); a cancel by the caller is not retried', async (t) => {
    const { provider } = await startUpstream(t, () => ({ body: completion('late'), delayMs: 1000 }));
    const slow = await failure(callChat(provider, call, { timeoutMs: 100, signal: new AbortController().signal }));
    assert.equal(slow.timedOut, true);
    assert.equal(slow.retryable, true);
    assert.match(slow.message, /no answer within 100 ms/);
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 50);
    const cancelled = await failure(callChat(provider, call, { timeoutMs: 5000, signal: cancel.signal }));
    assert.equal(cancelled.retryable, false);
    assert.match(cancelled.message, /cancelled/);
  });

  describe('through the managed-model client', () => {
    useFakeAwsCredentials();
    test('the Bedrock provider answers callChat with its usage', async (t) => {
      const bedrock = await startFakeBedrock(t, () => ({ body: converseAnswer('From Bedrock') }));
      const provider = createBedrockProvider({
        region: 'us-east-1',
        modelId: 'amazon.nova-lite-v1:0',
        endpointOverride: bedrock.url,
      });
      t.after(() => provider.close());
      const result = await callChat(provider, call, quick());
      assert.equal(result.content, 'From Bedrock');
      assert.ok(result.inputTokens > 0 && result.outputTokens > 0);
    });
  });
});

describe('retryWithBackoff', () => {
  test('retries what the policy calls retryable, doubling the wait, up to maxRetries', async () => {
    const at: number[] = [];
    const started = Date.now();
    await assert.rejects(
      retryWithBackoff(
        async () => {
          at.push(Date.now() - started);
          throw new ModelCallError('HTTP 503', true);
        },
        { maxRetries: 2, baseDelayMs: 40, retryable: (e) => e instanceof ModelCallError && e.retryable },
      ),
      /HTTP 503/,
    );
    assert.equal(at.length, 3);
    assert.ok(at[1]! - at[0]! >= 35, `first wait ${at[1]! - at[0]!}`);
    assert.ok(at[2]! - at[1]! >= 75, `second wait ${at[2]! - at[1]!}`);
    let attempts = 0;
    const value = await retryWithBackoff(
      async (attempt) => {
        attempts++;
        if (attempt < 1) throw new ModelCallError('reset', true);
        return 'ok';
      },
      { maxRetries: 3, baseDelayMs: 1, retryable: () => true },
    );
    assert.equal(value, 'ok');
    assert.equal(attempts, 2);
  });

  test("a failure's own wait (Retry-After) replaces the back-off", async () => {
    const at: number[] = [];
    const started = Date.now();
    const value = await retryWithBackoff(
      async (attempt) => {
        at.push(Date.now() - started);
        if (attempt === 0) throw Object.assign(new Error('HTTP 429'), { waitMs: 120 });
        return 'ok';
      },
      {
        maxRetries: 1,
        baseDelayMs: 1,
        retryable: () => true,
        retryAfterMs: (error) => (error as { waitMs?: number }).waitMs,
      },
    );
    assert.equal(value, 'ok');
    assert.ok(at[1]! - at[0]! >= 110, `waited ${at[1]! - at[0]!} ms`);
  });

  test('stops at once on what is not retryable, at the deadline, or when beforeAttempt throws', async () => {
    let attempts = 0;
    const node = async () => {
      attempts++;
      throw new ModelCallError('HTTP 400', false);
    };
    await assert.rejects(retryWithBackoff(node, { maxRetries: 5, baseDelayMs: 1, retryable: () => false }));
    assert.equal(attempts, 1);
    attempts = 0;
    await assert.rejects(
      retryWithBackoff(node, { maxRetries: 5, baseDelayMs: 100, retryable: () => true, remainingMs: () => 50 }),
    );
    assert.equal(attempts, 1, 'a wait that would pass the deadline is not made');
    attempts = 0;
    let counted = 0;
    await assert.rejects(
      retryWithBackoff(node, {
        maxRetries: 5,
        baseDelayMs: 1,
        retryable: () => true,
        beforeAttempt: () => {
          if (++counted > 2) throw new Error('budget spent');
        },
      }),
      /budget spent/,
    );
    assert.equal(attempts, 2);
  });
});
