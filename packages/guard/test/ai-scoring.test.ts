import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildGuard, completion, detect, startFakeUpstream, testDatabaseTargets } from './helper.ts';

const [target] = testDatabaseTargets();
const TEXT = 'Contact jane.doe@example.org or call +1 415 555 2671, card 4539 1488 0343 6467.';

function scoresFor(request: { body: { messages: { content: string }[] } }, value: number) {
  const lines = request.body.messages.at(-1)!.content.split('\n').filter(Boolean);
  return completion(JSON.stringify({ scores: lines.map(() => value) }));
}

describe('AI scoring through the configured upstream', () => {
  test('one upstream call per /detect, all candidates batched, bearer key and model sent, values never raw', async (t) => {
    const upstream = await startFakeUpstream(t, (request) => ({ body: scoresFor(request, 0.9) }));
    const { app } = await buildGuard(t, target!, {
      AI_MODEL_URL: upstream.url,
      AI_API_KEY: 'sk-upstream-test',
      AI_MODEL: 'scorer-1',
    });
    const { body } = await detect(app, { text: TEXT });
    assert.equal(upstream.requests.length, 1);
    const [request] = upstream.requests;
    assert.equal(request!.url, '/v1/chat/completions');
    assert.equal(request!.headers.authorization, 'Bearer sk-upstream-test');
    assert.equal(request!.body.model, 'scorer-1');
    assert.equal(request!.body.messages.at(-1).content.split('\n').length, body.detections.length);
    const sent = JSON.stringify(request!.body);
    for (const value of ['jane.doe@example.org', '415 555 2671', '4539 1488 0343 6467'])
      assert.equal(sent.includes(value), false, `${value} not sent`);
    for (const d of body.detections) {
      assert.equal(d.confidence_explanation.source, 'HYBRID');
      assert.equal(d.confidence_explanation.ai_score, '0.90');
    }
  });

  test('verdicts are cached by a hash of pattern and value: the same text asks nothing the second time', async (t) => {
    const upstream = await startFakeUpstream(t, (request) => ({ body: scoresFor(request, 0.8) }));
    const { app, cache } = await buildGuard(t, target!, { AI_MODEL_URL: upstream.url });
    await detect(app, { text: TEXT });
    const second = await detect(app, { text: `again: ${TEXT}` });
    assert.equal(upstream.requests.length, 1);
    assert.equal(second.body.detections[0].confidence_explanation.source, 'HYBRID');
    const { aiCacheKey } = await import('../src/ai/ai-scorer.ts');
    const key = aiCacheKey({ type: 'EMAIL', value: 'jane.doe@example.org' });
    assert.match(key, /^ai:[0-9a-f]{64}$/);
    assert.equal(await cache.get(key), 0.8);
  });

  test('concurrent requests for the same values share one upstream call, and all get its verdict', async (t) => {
    const upstream = await startFakeUpstream(t, async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 100)); // still in flight when the others arrive
      return { body: scoresFor(request, 0.7) };
    });
    const { app } = await buildGuard(t, target!, { AI_MODEL_URL: upstream.url });
    const answers = await Promise.all(Array.from({ length: 10 }, () => detect(app, { text: TEXT })));
    assert.equal(upstream.requests.length, 1, 'one call for ten identical texts');
    for (const { body } of answers) {
      assert.ok(body.detections.length > 0);
      for (const d of body.detections) {
        assert.equal(d.confidence_explanation.source, 'HYBRID');
        assert.equal(d.confidence_explanation.ai_score, '0.70');
      }
    }
    // A new value next to known ones asks only about the new one.
    await detect(app, { text: `${TEXT} Also mail john.roe@example.net.` });
    assert.equal(upstream.requests.length, 2);
    assert.equal(upstream.requests[1]!.body.messages.at(-1).content.split('\n').length, 1);
  });

  test('an upstream that fails, times out or answers nonsense falls back to the local scorer', async (t) => {
    for (const reply of [
      { status: 500, body: { error: 'boom' } },
      { delayMs: 1500, body: completion('{"scores":[1]}') },
      { body: completion('no idea') },
    ]) {
      const upstream = await startFakeUpstream(t, () => reply);
      const { app } = await buildGuard(t, target!, { AI_MODEL_URL: upstream.url, AI_TIMEOUT_MS: '300' });
      const started = performance.now();
      const { status, body } = await detect(app, { text: TEXT });
      assert.equal(status, 200);
      assert.ok(performance.now() - started < 1400, 'bounded by AI_TIMEOUT_MS');
      assert.ok(body.detections.length >= 2);
      for (const d of body.detections) assert.equal(d.confidence_explanation.source, 'LOCAL');
    }
  });

  test('the AI score moves the final score: a value the model doubts is not reported', async (t) => {
    const upstream = await startFakeUpstream(t, (request) => ({ body: scoresFor(request, 0) }));
    const { app } = await buildGuard(t, target!, { AI_MODEL_URL: upstream.url, CONFIDENCE_ALLOW_THRESHOLD: '0.5' });
    const { body } = await detect(app, { text: 'mail jane.doe@example.org' });
    assert.deepEqual(body.detections, []);
  });
});
