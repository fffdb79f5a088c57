import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { completionOf, postChat, startChatUpstream, startGateway } from './gateway-fixtures.ts';

const EMAIL = 'jane.doe@example.org';
const CARD = '4539 1488 0343 6467';
const PLACEHOLDER = /^\[LLM-GW-\d+_EMAIL_1\]$/;

describe('gateway: non-streaming chat completions', () => {
  test('user messages are redacted before forwarding; model, other roles and every other field pass unchanged', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('Noted.') }));
    const { client } = await startGateway(t, upstream.url);
    const response = await client.chat.completions.create({
      model: 'some-provider/model-x',
      temperature: 0.3,
      max_tokens: 55,
      user: 'end-user-7',
      response_format: { type: 'text' },
      messages: [
        { role: 'system', content: `System knows ${EMAIL}` },
        { role: 'user', content: `Write to ${EMAIL} and again ${EMAIL}.`, name: 'alice' },
        { role: 'assistant', content: `Earlier I saw ${EMAIL}` },
        { role: 'user', content: 'Nothing personal here.' },
      ],
    });
    assert.equal(response.choices[0]!.message.content, 'Noted.');
    assert.equal(upstream.calls.length, 1);
    const sent = upstream.calls[0]!.body;
    assert.equal(upstream.calls[0]!.url, '/v1/chat/completions');
    assert.equal(sent.model, 'some-provider/model-x');
    assert.equal(sent.temperature, 0.3);
    assert.equal(sent.max_tokens, 55);
    assert.equal(sent.user, 'end-user-7');
    assert.deepEqual(sent.response_format, { type: 'text' });
    assert.equal(sent.messages[0].content, `System knows ${EMAIL}`, 'system unchanged');
    assert.equal(sent.messages[2].content, `Earlier I saw ${EMAIL}`, 'assistant unchanged');
    assert.equal(sent.messages[1].name, 'alice');
    assert.equal(sent.messages[3].content, 'Nothing personal here.');
    const match = /^Write to (\[[^\]]+\]) and again (\[[^\]]+\])\.$/.exec(sent.messages[1].content);
    assert.ok(match, sent.messages[1].content);
    assert.match(match[1]!, PLACEHOLDER);
    assert.equal(match[1], match[2], 'the same value gets the same placeholder');

    const meta = (response as unknown as { gw_meta: any }).gw_meta;
    assert.match(meta.rid, /^LLM-GW-\d+$/);
    assert.deepEqual(meta.guardrails, []);
    assert.equal(meta.input.length, 2, 'one DetectResponse per user message');
    assert.equal(meta.output.length, 1);
    assert.equal(meta.input[0].detections.length, 2);
    assert.equal(meta.input[1].detections.length, 0);
    assert.ok(meta.input[0].redacted_text.includes(match[1]));
    assert.equal(JSON.stringify(meta).includes(EMAIL), false, 'gw_meta never repeats a detected value');
    assert.equal(meta.input[0].detections[0].value, meta.input[0].detections[0].placeholder);
  });

  test('the text parts of multimodal user content are redacted; image parts pass unchanged', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('A cat.') }));
    const { client } = await startGateway(t, upstream.url);
    const image = {
      type: 'image_url' as const,
      image_url: { url: 'https://example.com/cat.png', detail: 'low' as const },
    };
    const response = await client.chat.completions.create({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: `From ${EMAIL}:` },
            image,
            { type: 'text', text: `what is this? reply to ${EMAIL}` },
          ],
        },
      ],
    });
    const parts = upstream.calls[0]!.body.messages[0].content;
    assert.equal(parts.length, 3);
    assert.deepEqual(parts[1], image);
    assert.match(parts[0].text, /^From \[LLM-GW-\d+_EMAIL_1\]:$/);
    assert.match(parts[2].text, /^what is this\? reply to \[LLM-GW-\d+_EMAIL_1\]$/);
    const meta = (response as any).gw_meta;
    assert.equal(meta.input.length, 1);
    assert.equal(meta.input[0].breakdown.EMAIL, 2);
  });

  test('a blocked input is a 400 gw_content_blocked BadRequestError and nothing reaches the upstream', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('never') }));
    const { client } = await startGateway(t, upstream.url, {}, { headers: { 'X-GW-RID': 'rid-block-1' } });
    const error = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: `Charge card ${CARD} please` }] })
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError, String(error));
    assert.equal(error.status, 400);
    assert.deepEqual(error.error, {
      message: 'Blocked due to high confidence detection: CREDIT_CARD',
      type: 'invalid_request_error',
      param: null,
      code: 'gw_content_blocked',
    });
    assert.equal(error.code, 'gw_content_blocked');
    assert.equal(upstream.calls.length, 0, 'the upstream received nothing');

    const raw = await postChat(
      `${(client.baseURL as string).replace(/\/v1$/, '')}`,
      { model: 'm', messages: [{ role: 'user', content: `card ${CARD}` }] },
      { 'x-gw-rid': 'rid-block-2' },
    );
    const body = await raw.json();
    assert.equal(raw.status, 400);
    assert.equal(body.gw_meta.rid, 'rid-block-2');
    assert.equal(raw.headers.get('x-gw-rid'), 'rid-block-2');
    assert.equal(body.gw_meta.input[0].blocked, true);
    assert.deepEqual(body.gw_meta.output, []);
    assert.equal(JSON.stringify(body).includes('4539'), false);
    assert.equal(upstream.calls.length, 0);
  });

  test('a blocked output is a 400 and the raw answer is never sent', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf(`Sure, the card is ${CARD}.`) }));
    const { url } = await startGateway(t, upstream.url);
    const response = await postChat(url, { model: 'm', messages: [{ role: 'user', content: 'the card?' }] });
    const text = await response.text();
    assert.equal(response.status, 400);
    assert.equal(text.includes('4539'), false);
    const body = JSON.parse(text);
    assert.equal(body.error.code, 'gw_content_blocked');
    assert.equal(body.error.message, 'Blocked due to high confidence detection: CREDIT_CARD');
    assert.equal(body.gw_meta.output.length, 1);
    assert.equal(body.gw_meta.output[0].blocked, true);
    assert.equal(upstream.calls.length, 1);
  });

  test('assistant output is redacted per choice (n > 1), logprobs of a redacted choice are dropped', async (t) => {
    const answer = completionOf([`Write to ${EMAIL}`, 'Nothing to hide']);
    (answer.choices[0] as any).logprobs = {
      content: [{ token: 'jane', logprob: -0.1, bytes: null, top_logprobs: [] }],
    };
    (answer.choices[1] as any).logprobs = { content: [] };
    const upstream = await startChatUpstream(t, () => ({ json: answer }));
    const { client } = await startGateway(t, upstream.url);
    const response = await client.chat.completions.create({
      model: 'm',
      n: 2,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(upstream.calls[0]!.body.n, 2);
    assert.match(response.choices[0]!.message.content!, /^Write to \[LLM-GW-\d+_EMAIL_1\]$/);
    assert.equal(response.choices[0]!.logprobs, null);
    assert.equal(response.choices[1]!.message.content, 'Nothing to hide');
    assert.deepEqual(response.choices[1]!.logprobs, { content: [] });
    assert.equal(response.usage?.total_tokens, 15);
    assert.equal(response.system_fingerprint, 'fp_test');
    assert.equal((response as any).gw_meta.output.length, 2);
  });

  test('tool-call arguments are checked; X-GW-Restore puts the user values back in content and arguments', async (t) => {
    const upstream = await startChatUpstream(t, (call) => {
      const placeholder = /\[[^\]]+_EMAIL_1\]/.exec(call.body.messages[0].content)![0];
      return {
        json: {
          ...completionOf([null]),
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: `Mailing ${placeholder} now.`,
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: {
                      name: 'send_mail',
                      arguments: JSON.stringify({ to: placeholder, cc: 'ops@corp-mail.example' }),
                    },
                  },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
        },
      };
    });
    const { client } = await startGateway(t, upstream.url);
    const ask = { model: 'm', messages: [{ role: 'user' as const, content: `mail ${EMAIL}` }] };

    const plain = await client.chat.completions.create(ask);
    const plainArgs = JSON.parse((plain.choices[0]!.message.tool_calls![0] as any).function.arguments);
    assert.match(plainArgs.to, PLACEHOLDER);
    assert.match(plainArgs.cc, /^\[LLM-GW-\d+_EMAIL_2\]$/, 'a new value in the arguments is redacted');

    const restored = await client.chat.completions.create(ask, { headers: { 'X-GW-Restore': 'true' } });
    assert.equal(restored.choices[0]!.message.content, `Mailing ${EMAIL} now.`);
    const args = JSON.parse((restored.choices[0]!.message.tool_calls![0] as any).function.arguments);
    assert.equal(args.to, EMAIL, 'the user value is back');
    assert.match(args.cc, /^\[LLM-GW-\d+_EMAIL_2\]$/, 'values the model produced are never restored');
    assert.equal(JSON.stringify(upstream.calls.map((c) => c.body)).includes(EMAIL), false, 'the upstream never saw it');
  });

  test('GATEWAY_BLOCK_MODE=MASK forwards masked input and answers 200 with blocked flags', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf(`Card on file: ${CARD}`) }));
    const { client } = await startGateway(t, upstream.url, { GATEWAY_BLOCK_MODE: 'MASK' });
    const { data, response } = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: `pay with ${CARD}` }] })
      .withResponse();
    assert.equal(response.status, 200);
    assert.match(upstream.calls[0]!.body.messages[0].content, /^pay with \[LLM-GW-\d+_CREDIT_CARD_1\]$/);
    assert.match(data.choices[0]!.message.content!, /^Card on file: \[LLM-GW-\d+_CREDIT_CARD_1\]$/);
    const meta = (data as any).gw_meta;
    assert.equal(meta.input[0].blocked, true);
    assert.equal(meta.output[0].blocked, true);
    assert.equal(response.headers.get('x-gw-warning'), null);
  });

  test('GATEWAY_BLOCK_MODE=MASK: a blocklist hit inside a longer secret masks the whole secret, upstream and for the AI scorer', async (t) => {
    const key = 'sk-proj-Rk7TqW2mZp9Lx4Vb8Nc3q8w9e0r1t2y3u4i5o6pA';
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { client, app } = await startGateway(t, upstream.url, { GATEWAY_BLOCK_MODE: 'MASK' });
    const listed = await app.inject({ method: 'POST', url: '/blacklist', payload: { value: 'q8w9' } });
    assert.equal(listed.statusCode, 201);
    const { data } = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: `key ${key} for ${EMAIL}` }] })
      .withResponse();
    const sent = upstream.calls.map((c) => JSON.stringify(c.body)).join('\n');
    for (const part of [key.slice(0, 12), key.slice(12, 27), key.slice(31)]) {
      assert.equal(sent.includes(part), false, `no part of the key goes upstream (${part.length} chars)`);
    }
    assert.match(
      upstream.calls.at(-1)!.body.messages[0].content,
      /^key \[LLM-GW-\d+_BLOCKLIST_1\] for \[LLM-GW-\d+_EMAIL_1\]$/,
    );
    assert.equal((data as any).gw_meta.input[0].blocked, true);
  });

  test('GATEWAY_BLOCK_MODE=WARN behaves like MASK and adds X-GW-Warning', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { client } = await startGateway(t, upstream.url, { GATEWAY_BLOCK_MODE: 'WARN' });
    const { data, response } = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: `pay with ${CARD}` }] })
      .withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-gw-warning'), 'blocked content masked: CREDIT_CARD');
    assert.equal((data as any).gw_meta.input[0].blocked, true);
    assert.equal(upstream.calls.length, 1);
  });

  test('X-GW-Guardrails runs validators on input and output; a failed one blocks; an unknown one is a 400', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('not json at all') }));
    const { client, url } = await startGateway(t, upstream.url);
    const error = await client.chat.completions
      .create(
        { model: 'm', messages: [{ role: 'user', content: '{"q": 1}' }] },
        { headers: { 'X-GW-Guardrails': 'json' } },
      )
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.equal(error.code, 'gw_content_blocked');
    assert.equal(error.message.includes('json'), true);
    const response = await postChat(
      url,
      { model: 'm', messages: [{ role: 'user', content: '{}' }] },
      { 'X-GW-Guardrails': 'json' },
    );
    const body = await response.json();
    assert.deepEqual(body.gw_meta.guardrails, ['json']);
    assert.equal(body.gw_meta.input[0].validator_results[0].passed, true);
    assert.equal(body.gw_meta.output[0].validator_results[0].passed, false);

    const calls = upstream.calls.length;
    const unknown = await postChat(
      url,
      { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      { 'X-GW-Guardrails': 'no-such-validator' },
    );
    assert.equal(unknown.status, 400);
    const unknownBody = await unknown.json();
    assert.equal(unknownBody.error.code, 'unknown_guardrail');
    assert.equal(unknownBody.error.type, 'invalid_request_error');
    assert.equal(upstream.calls.length, calls);
  });

  test('invalid X-GW-* headers are a 400 invalid_header in the gateway shape', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { url } = await startGateway(t, upstream.url);
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    for (const [name, value] of [
      ['X-GW-RID', 'has spaces in it'],
      ['X-GW-RID', 'x'.repeat(129)],
      ['X-GW-Guardrails-Mode', 'sometimes'],
      ['X-GW-Guardrails-OnFail', 'explode'],
      ['X-GW-Restore', 'yes please'],
      ['X-GW-Guardrails', 'json,,email'],
    ] as const) {
      const response = await postChat(url, body, { [name]: value });
      assert.equal(response.status, 400, `${name}: ${value}`);
      const json = await response.json();
      assert.equal(json.error.code, 'invalid_header');
      assert.equal(json.error.type, 'invalid_request_error');
      assert.equal(json.error.param, null);
      assert.ok(json.error.message.includes(name), json.error.message);
      assert.match(json.gw_meta.rid, /^LLM-GW-\d+$/);
    }
    assert.equal(upstream.calls.length, 0);
  });

  test('schema, JSON, size and media-type errors use the gateway error shape', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { url } = await startGateway(t, upstream.url, { MAX_REQUEST_SIZE_BYTES: '4096' });
    const cases: [RequestInit, number, string][] = [
      [{ body: JSON.stringify({ model: 'm' }) }, 400, 'invalid_request_body'],
      [
        { body: JSON.stringify({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }) },
        400,
        'invalid_request_body',
      ],
      [
        { body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: { nested: true } }] }) },
        400,
        'invalid_request_body',
      ],
      [
        { body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }) },
        400,
        'invalid_request_body',
      ],
      [{ body: JSON.stringify({ model: 'm', messages: [{ role: 'user' }] }) }, 400, 'invalid_request_body'],
      [{ body: '{"model": "m", "messages": [' }, 400, 'invalid_json'],
      [
        { body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }) },
        413,
        'request_too_large',
      ],
      [{ body: 'hello', headers: { 'content-type': 'text/plain' } }, 415, 'unsupported_media_type'],
    ];
    for (const [init, status, code] of cases) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
        body: init.body,
      });
      const json = await response.json();
      assert.equal(response.status, status, `${code}: ${JSON.stringify(json)}`);
      assert.equal(json.error.code, code);
      assert.equal(json.error.type, 'invalid_request_error');
      assert.equal(json.error.param, null);
      assert.ok(json.gw_meta.rid);
    }
    assert.equal(upstream.calls.length, 0);
  });

  test('auth failures are OpenAI-shaped: AuthenticationError (401) and PermissionDeniedError (403)', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const env = { AUTH_ENABLED: 'true', AUTH_TOKEN_PERMISSIONS: 'gw-token=gateway:use,detect-token=detect:read' };
    const { url } = await startGateway(t, upstream.url, env);
    const clientWith = (apiKey: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
    const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

    const unknown = await clientWith('wrong-token')
      .chat.completions.create(ask)
      .catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.AuthenticationError, String(unknown));
    assert.equal(unknown.error && (unknown.error as any).type, 'invalid_request_error');
    assert.equal(unknown.code, 'invalid_api_key');

    const forbidden = await clientWith('detect-token')
      .chat.completions.create(ask)
      .catch((e: unknown) => e);
    assert.ok(forbidden instanceof OpenAI.PermissionDeniedError, String(forbidden));
    assert.equal(forbidden.code, 'insufficient_permissions');
    assert.equal(upstream.calls.length, 0);

    const ok = await clientWith('gw-token').chat.completions.create(ask);
    assert.equal(ok.choices[0]!.message.content, 'ok');
    assert.equal(upstream.calls[0]!.headers.authorization, undefined, 'the client token is not forwarded');
  });

  test("guard's own rate limit answers 429 in the OpenAI shape (RateLimitError)", async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { client } = await startGateway(t, upstream.url, { RATE_LIMIT_MAX: '1' });
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const limited = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
    assert.equal(limited.code, 'rate_limit_exceeded');
    assert.equal((limited.error as any).type, 'invalid_request_error');
    assert.ok(limited.headers.get('retry-after'));
    assert.equal(upstream.calls.length, 1);
  });

  test('upstream errors pass through with their status and OpenAI-style body', async (t) => {
    const upstreamError = {
      error: { message: 'Rate limit reached for model', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    };
    let mode = 'openai';
    const upstream = await startChatUpstream(t, () =>
      mode === 'openai'
        ? { status: 429, json: upstreamError, headers: { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0' } }
        : mode === 'html'
          ? { raw: '<html>bad gateway</html>', status: 502, contentType: 'text/html' }
          : {
              status: 404,
              json: {
                error: {
                  message: 'The model `nope` does not exist',
                  type: 'invalid_request_error',
                  code: 'model_not_found',
                },
              },
            },
    );
    const { client, url } = await startGateway(t, upstream.url, { AI_API_KEY: 'sk-upstream-secret' });
    const limited = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
    assert.deepEqual(limited.error, upstreamError.error);
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.equal(limited.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(upstream.calls[0]!.headers.authorization, 'Bearer sk-upstream-secret');

    mode = 'missing';
    const missing = await client.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.NotFoundError);
    assert.equal(missing.code, 'model_not_found');

    mode = 'html';
    const response = await postChat(url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 502);
    const body = await response.json();
    assert.equal(body.error.code, 'upstream_error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.ok(body.gw_meta);
  });

  test('an unreachable upstream is a 502, a missing one a 503, a 2xx that is not a completion a 502', async (t) => {
    const closed = await startGateway(t, 'http://127.0.0.1:9/v1');
    const unreachable = await postChat(closed.url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(unreachable.status, 502);
    assert.equal((await unreachable.json()).error.code, 'upstream_unreachable');

    const none = await startGateway(t, undefined);
    const missing = await postChat(none.url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(missing.status, 503);
    assert.equal((await missing.json()).error.code, 'upstream_not_configured');

    const upstream = await startChatUpstream(t, () => ({ raw: 'plain words', status: 200 }));
    const odd = await startGateway(t, upstream.url);
    const invalid = await postChat(odd.url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(invalid.status, 502);
    assert.equal((await invalid.json()).error.code, 'upstream_invalid_response');
  });

  test('the whole call is bounded by GATEWAY_TIMEOUT_MS: 504, and the upstream request is aborted', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('late'), delayMs: 5000 }));
    const { url } = await startGateway(t, upstream.url, { GATEWAY_TIMEOUT_MS: '300' });
    const started = performance.now();
    const response = await postChat(url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(performance.now() - started < 2000);
    assert.equal(response.status, 504);
    assert.equal((await response.json()).error.code, 'gateway_timeout');
    await upstream.calls[0]!.aborted;
  });

  test('a client that disconnects aborts the upstream request', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('late'), delayMs: 5000 }));
    const { client } = await startGateway(t, upstream.url);
    const controller = new AbortController();
    const pending = client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { signal: controller.signal })
      .catch((e: unknown) => e);
    while (upstream.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    assert.ok((await pending) instanceof OpenAI.APIUserAbortError);
    await upstream.calls[0]!.aborted;
    assert.equal(upstream.calls[0]!.wasAborted, true);
  });

  test('fail closed: when detection itself fails, the request is a 503 and nothing is forwarded', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { url, ctx } = await startGateway(t, upstream.url);
    const real = await ctx.activeConfig.get();
    ctx.activeConfig.get = async () => ({
      ...real,
      detector: {
        ...real.detector,
        scan: () => {
          throw new Error('engine broke');
        },
      },
    });
    const response = await postChat(url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 503);
    const body = await response.json();
    assert.equal(body.error.code, 'gw_detection_failed');
    assert.equal(body.error.message.includes('engine broke'), false);
    assert.equal(upstream.calls.length, 0);
  });

  test('each gateway call leaves an audit entry with the rid and counts, never values', async (t) => {
    const upstream = await startChatUpstream(t, () => ({ json: completionOf('ok') }));
    const { client, ctx, db } = await startGateway(t, upstream.url);
    await client.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: `to ${EMAIL}` }] },
      { headers: { 'X-GW-RID': 'audit-rid-1' } },
    );
    await ctx.audit.flush();
    const rows = await db.selectFrom('detect_audit').selectAll().where('rid', '=', 'audit-rid-1').execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.total, 1);
    assert.equal(JSON.stringify(rows).includes(EMAIL), false);
  });
});
