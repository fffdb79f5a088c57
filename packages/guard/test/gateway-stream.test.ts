import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { chunk, postChat, readSse, startChatUpstream, startGateway, streamOf } from './gateway-fixtures.ts';

const CARD = '4539 1488 0343 6467';
const SPLIT_EMAIL = ['Hi ', 'jo', 'hn@exa', 'mple.com', ' bye'];
const ASK = { model: 'm', messages: [{ role: 'user' as const, content: 'hello' }] };

/** Every content delta of choice `index`, in order, from parsed SSE payloads. */
function contents(events: any[], index = 0): string[] {
  return events
    .filter((e) => typeof e === 'object' && Array.isArray(e.choices))
    .flatMap((e) => e.choices.filter((c: any) => c.index === index))
    .map((c: any) => c.delta?.content)
    .filter((c: unknown): c is string => typeof c === 'string');
}

function tempFile(t: { after: (fn: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-gw-events-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'events.jsonl');
}

async function readEvents(file: string, count: number): Promise<any[]> {
  for (let i = 0; i < 200; i++) {
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length >= count) return lines.map((l) => JSON.parse(l));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('security event not written');
}

describe('gateway: streaming', () => {
  test('final-only (default) proxies the stream byte for byte; the openai client reads it unchanged', async (t) => {
    const events = streamOf(SPLIT_EMAIL, { usage: true });
    const upstream = await startChatUpstream(t, () => ({ sse: events }));
    const { client, url } = await startGateway(t, upstream.url);
    const stream = await client.chat.completions.create({
      ...ASK,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const part of stream) {
      text += part.choices[0]?.delta?.content ?? '';
      if (part.usage) usage = part.usage;
    }
    assert.equal(text, 'Hi john@example.com bye');
    assert.deepEqual(usage, { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
    assert.equal(upstream.calls[0]!.body.stream, true);
    assert.deepEqual(upstream.calls[0]!.body.stream_options, { include_usage: true });

    for (const onFail of ['filter', 'halt']) {
      const response = await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-OnFail': onFail });
      assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const expected = `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
      assert.equal(await response.text(), expected);
    }
  });

  test('streaming requests still get input guardrails: a blocked input is a 400 before any stream starts', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(['never']) }));
    const { client } = await startGateway(t, upstream.url);
    const error = await client.chat.completions
      .create({ model: 'm', stream: true, messages: [{ role: 'user', content: `card ${CARD}` }] })
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.equal(error.code, 'gw_content_blocked');
    assert.equal(upstream.calls.length, 0);
  });

  test('stream-sync filter: an entity split across chunks never reaches the client in part', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(SPLIT_EMAIL, { usage: true }) }));
    const { url } = await startGateway(t, upstream.url);
    const response = await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': 'stream-sync' });
    const events = await readSse(response);
    const pieces = contents(events);
    for (const piece of pieces) {
      for (const fragment of ['jo', 'hn@', 'exa', 'mple', '.com']) assert.equal(piece.includes(fragment), false, piece);
    }
    assert.match(pieces.join(''), /^Hi \[LLM-GW-\d+_EMAIL_1\] bye$/);
    // The wire keeps its shape: role first, every upstream chunk, finish_reason, the usage chunk, [DONE].
    const chunks = events.filter((e) => typeof e === 'object');
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.ok(
      chunks.every(
        (c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-stream' && Array.isArray(c.choices),
      ),
    );
    assert.ok(
      chunks.every((c) => c.system_fingerprint === 'fp_test' && c.model === 'up-model' && c.created === 1_763_000_000),
    );
    assert.ok(chunks.length >= 8, 'every upstream chunk is sent on');
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.deepEqual(
      finish.map((c) => c.choices[0].finish_reason),
      ['stop'],
    );
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.total_tokens, 12);
    assert.equal(events.at(-1), '[DONE]');
  });

  test('stream-sync filter redacts a blocking entity and keeps streaming; the openai client assembles the text', async (t) => {
    const upstream = await startChatUpstream(t, () => ({
      sse: streamOf(['Your card ', '4539 1488', ' 0343 64', '67 is on file.', ' Done.']),
    }));
    const { client } = await startGateway(t, upstream.url, {}, { headers: { 'X-GW-Guardrails-Mode': 'stream-sync' } });
    const stream = await client.chat.completions.create({ ...ASK, stream: true });
    const deltas: string[] = [];
    for await (const part of stream) deltas.push(part.choices[0]?.delta?.content ?? '');
    const text = deltas.join('');
    assert.match(text, /^Your card \[LLM-GW-\d+_CREDIT_CARD_1\] is on file\. Done\.$/);
    for (const delta of deltas) assert.equal(/\d{2}/.test(delta.replace(/\[[^\]]+\]/g, '')), false, delta);
  });

  test('stream-sync halt: an error event then [DONE]; the openai client raises an APIError; the upstream is aborted', async (t) => {
    const upstream = await startChatUpstream(t, () => ({
      sse: streamOf(['Sure: ', '4539 1488', ' 0343 6467', ' and more', ' text']),
      gapMs: 20,
    }));
    const headers = { 'X-GW-Guardrails-Mode': 'stream-sync', 'X-GW-Guardrails-OnFail': 'halt' };
    const { client, url } = await startGateway(t, upstream.url, {}, { headers });
    const stream = await client.chat.completions.create({ ...ASK, stream: true });
    let text = '';
    const error = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.deepEqual(error.error, {
      message: 'Blocked due to high confidence detection: CREDIT_CARD',
      type: 'invalid_request_error',
      param: null,
      code: 'gw_content_blocked',
    });
    assert.equal(text, 'Sure: ');

    const response = await postChat(url, { ...ASK, stream: true }, headers);
    const events = await readSse(response);
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(events.at(-2).error.code, 'gw_content_blocked');
    assert.equal(JSON.stringify(events).includes('4539'), false);
    await upstream.calls[1]!.aborted;
  });

  test('stream-sync checks several choices (n > 1) independently, each with its own held-back tail', async (t) => {
    const sse = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'Mail a' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { content: 'Write b' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'lice@exam' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { content: 'ob@example' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'ple.com now' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { content: '.net' }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      chunk([{ index: 1, delta: {}, finish_reason: 'length' }]),
    ];
    const upstream = await startChatUpstream(t, () => ({ sse }));
    const { client } = await startGateway(t, upstream.url, {}, { headers: { 'X-GW-Guardrails-Mode': 'stream-sync' } });
    const stream = await client.chat.completions.create({ ...ASK, n: 2, stream: true });
    const texts = ['', ''];
    const finish: (string | null)[] = [null, null];
    const raw: string[] = [];
    for await (const part of stream) {
      for (const choice of part.choices) {
        texts[choice.index] += choice.delta.content ?? '';
        raw.push(choice.delta.content ?? '');
        if (choice.finish_reason) finish[choice.index] = choice.finish_reason;
      }
    }
    assert.match(texts[0]!, /^Mail \[LLM-GW-\d+_EMAIL_1\] now$/);
    assert.match(texts[1]!, /^Write \[LLM-GW-\d+_EMAIL_2\]$/);
    assert.deepEqual(finish, ['stop', 'length']);
    assert.equal(
      raw.some((r) => /alice|bob|example/.test(r)),
      false,
    );
  });

  test('stream-sync checks tool-call arguments on the reassembled string', async (t) => {
    const call = (args: string, first = false) =>
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [
              first
                ? { index: 0, id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: args } }
                : { index: 0, function: { arguments: args } },
            ],
          },
          finish_reason: null,
        },
      ]);
    const sse = [
      chunk([{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }]),
      call('', true),
      call('{"to": "ca'),
      call('rol@exam'),
      call('ple.org", "body": "hi"}'),
      chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
    ];
    const upstream = await startChatUpstream(t, () => ({ sse }));
    const { client, url } = await startGateway(
      t,
      upstream.url,
      {},
      { headers: { 'X-GW-Guardrails-Mode': 'stream-sync' } },
    );
    const stream = await client.chat.completions.create({
      ...ASK,
      stream: true,
      tools: [{ type: 'function', function: { name: 'send_mail', parameters: { type: 'object' } } }],
    });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const part of stream) {
      const delta = part.choices[0]?.delta;
      for (const tc of delta?.tool_calls ?? []) {
        args += tc.function?.arguments ?? '';
        name += tc.function?.name ?? '';
      }
      finish = part.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(name, 'send_mail');
    assert.equal(finish, 'tool_calls');
    const parsed = JSON.parse(args);
    assert.match(parsed.to, /^\[LLM-GW-\d+_EMAIL_1\]$/);
    assert.equal(parsed.body, 'hi');
    assert.ok(Array.isArray(upstream.calls[0]!.body.tools));

    const raw = await (await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': 'stream-sync' })).text();
    assert.equal(/carol|exam/.test(raw), false);
  });

  test('stream-sync holds a PEM block until its END line and redacts it whole', async (t) => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const lines = pem.trim().split('\n');
    const pieces = ['Here is the key:\n', ...lines.map((line) => `${line}\n`), 'Keep it safe.'];
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(pieces) }));
    const { url } = await startGateway(t, upstream.url);
    const response = await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': 'stream-sync' });
    const text = contents(await readSse(response)).join('');
    assert.match(text, /^Here is the key:\n\[LLM-GW-\d+_PRIVATE_KEY_1\]\nKeep it safe\.$/);
    for (const line of lines.slice(1, -1)) assert.equal(text.includes(line.slice(0, 20)), false);
  });

  test('past GATEWAY_STREAM_HOLDBACK_MAX_CHARS an unbroken span is withheld (filter) or halts (halt), never sent', async (t) => {
    const token = 'Q'.repeat(300) + 'z'.repeat(300);
    const pieces = ['Blob: ', ...token.match(/.{1,50}/g)!, ' after the blob.'];
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(pieces) }));
    const { url } = await startGateway(t, upstream.url, { GATEWAY_STREAM_HOLDBACK_MAX_CHARS: '256' });
    const filtered = contents(
      await readSse(await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': 'stream-sync' })),
    ).join('');
    assert.match(filtered, /^Blob: \[LLM-GW-\d+_WITHHELD_1\] after the blob\.$/);

    const halted = await readSse(
      await postChat(
        url,
        { ...ASK, stream: true },
        { 'X-GW-Guardrails-Mode': 'stream-sync', 'X-GW-Guardrails-OnFail': 'halt' },
      ),
    );
    assert.equal(halted.at(-1), '[DONE]');
    assert.equal(halted.at(-2).error.code, 'gw_content_blocked');
    assert.equal(JSON.stringify(halted).includes('QQQ'), false);
  });

  test('stream-async forwards the raw stream and sends a security event with the same rid (filter and halt)', async (t) => {
    const file = tempFile(t);
    const events = streamOf(['Reach me at ', 'john@exa', 'mple.com', ' or call'], { usage: true });
    const upstream = await startChatUpstream(t, () => ({ sse: events }));
    const { url } = await startGateway(t, upstream.url, { GATEWAY_SECURITY_EVENTS: `file:${file}` });
    const expected = `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
    let n = 0;
    for (const onFail of ['filter', 'halt']) {
      const rid = `async-${onFail}`;
      const response = await postChat(
        url,
        { ...ASK, stream: true },
        { 'X-GW-Guardrails-Mode': 'stream-async', 'X-GW-Guardrails-OnFail': onFail, 'X-GW-RID': rid },
      );
      assert.equal(await response.text(), expected, 'raw stream forwarded');
      const [event] = (await readEvents(file, ++n)).slice(-1);
      assert.equal(event.rid, rid);
      assert.equal(event.type, 'gateway.stream_async.output_check');
      assert.equal(event.outcome, 'flagged');
      assert.equal(event.stream_status, 'completed');
      assert.equal(event.choices[0].breakdown.EMAIL, 1);
      assert.equal(event.choices[0].detections[0].type, 'EMAIL');
      assert.equal(JSON.stringify(event).includes('john@example.com'), false, 'the event never holds the value');
    }
  });

  test('stream-async delivers security events to an HTTP endpoint', async (t) => {
    const received: any[] = [];
    const sink = await startChatUpstream(t, (call) => {
      received.push(call.body);
      return { json: {} };
    });
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf([`card ${CARD} ok`]) }));
    const { url } = await startGateway(t, upstream.url, {
      GATEWAY_SECURITY_EVENTS: `${sink.url}/events`,
      KEEL_ALLOW_PRIVATE_URLS: 'true',
    });
    const response = await postChat(
      url,
      { ...ASK, stream: true },
      { 'X-GW-Guardrails-Mode': 'stream-async', 'X-GW-RID': 'siem-1' },
    );
    assert.ok((await response.text()).includes('4539'), 'stream-async forwards the raw stream');
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(received[0].rid, 'siem-1');
    assert.equal(received[0].outcome, 'blocked');
    assert.equal(JSON.stringify(received[0]).includes('4539'), false);
  });

  test('X-GW-Restore puts user values back in a stream even when a placeholder is split across chunks', async (t) => {
    const upstream = await startChatUpstream(t, (call) => {
      const placeholder = /\[[^\]]+\]/.exec(call.body.messages[0].content)![0];
      const cut = Math.floor(placeholder.length / 2);
      return { sse: streamOf(['Dear ', placeholder.slice(0, cut), placeholder.slice(cut), ', hello']) };
    });
    const { url } = await startGateway(t, upstream.url);
    for (const mode of ['final-only', 'stream-sync', 'stream-async']) {
      const response = await postChat(
        url,
        { model: 'm', stream: true, messages: [{ role: 'user', content: 'I am jane.doe@example.org' }] },
        { 'X-GW-Restore': 'true', 'X-GW-Guardrails-Mode': mode },
      );
      assert.equal(contents(await readSse(response)).join(''), 'Dear jane.doe@example.org, hello', mode);
    }
  });

  test('a client that disconnects mid-stream aborts the upstream request', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(['one ', 'two ']), holdOpen: true }));
    const { client } = await startGateway(t, upstream.url, {}, { headers: { 'X-GW-Guardrails-Mode': 'stream-sync' } });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...ASK, stream: true }, { signal: controller.signal });
    let received = '';
    for await (const part of stream) {
      received += part.choices[0]?.delta?.content ?? '';
      if (received) controller.abort(); // the openai client ends the iteration quietly on a user abort
    }
    assert.ok(received.startsWith('one '));
    await upstream.calls[0]!.aborted;
    assert.equal(upstream.calls[0]!.wasAborted, true);
  });

  test('a stream that outlives GATEWAY_TIMEOUT_MS ends with a gateway_timeout error event and [DONE]', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(['still ', 'thinking ']), holdOpen: true }));
    const { url } = await startGateway(t, upstream.url, { GATEWAY_TIMEOUT_MS: '300' });
    for (const mode of ['final-only', 'stream-sync']) {
      const started = performance.now();
      const events = await readSse(await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': mode }));
      assert.ok(performance.now() - started < 2000);
      assert.equal(events.at(-1), '[DONE]');
      assert.equal(events.at(-2).error.code, 'gateway_timeout', mode);
    }
    await upstream.calls[0]!.aborted;
  });

  test('stream-sync fails closed: if detection errors mid-stream, the stream stops with an error event', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ sse: streamOf(['safe ', 'text ', 'here']) }));
    const { url, ctx } = await startGateway(t, upstream.url);
    const real = await ctx.activeConfig.get();
    let scans = 0;
    ctx.activeConfig.get = async () => ({
      ...real,
      detector: {
        ...real.detector,
        scan: (text, options) => {
          if (++scans > 1) throw new Error('engine broke');
          return real.detector.scan(text, options);
        },
      },
    });
    const events = await readSse(
      await postChat(url, { ...ASK, stream: true }, { 'X-GW-Guardrails-Mode': 'stream-sync' }),
    );
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(events.at(-2).error.code, 'gw_detection_failed');
    assert.equal(contents(events).join('').includes('here'), false);
  });

  test('an upstream error on a streaming request passes through as JSON with its status', async (t) => {
    const upstream = await startChatUpstream(t, () => ({
      status: 400,
      json: {
        error: { message: 'bad stream_options', type: 'invalid_request_error', param: 'stream_options', code: null },
      },
    }));
    const { client } = await startGateway(t, upstream.url, {}, { headers: { 'X-GW-Guardrails-Mode': 'stream-sync' } });
    const error = await client.chat.completions.create({ ...ASK, stream: true }).catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.equal(error.param, 'stream_options');
  });
});
