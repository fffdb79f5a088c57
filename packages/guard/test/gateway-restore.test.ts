import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chunk, completionOf, postChat, readSse, startChatUpstream, startGateway } from './gateway-fixtures.ts';

// X-GW-Restore puts the user's own values back; a value the model produced itself stays redacted — on every
// shape of content (string, array of parts, tool-call arguments), streaming and not.

const USER_EMAIL = 'jane.doe@example.org';
const MODEL_EMAIL = 'bot.owner@model-mail.example';
const MODEL_PHONE = '+1 415 555 0199';
const RESTORE = { 'X-GW-Restore': 'true' };

const placeholderIn = (body: any) => /\[LLM-GW-[^\]\s"]+_EMAIL_1\]/.exec(JSON.stringify(body.messages))![0];

function assertNoModelValues(text: string, label: string) {
  assert.ok(!text.includes(MODEL_EMAIL), `${label}: the model's e-mail address is not restored`);
  assert.ok(!text.includes('555 0199'), `${label}: the model's phone number is not restored`);
}

const ask = (extra: Record<string, unknown> = {}) => ({
  model: 'm',
  messages: [{ role: 'user', content: `Write to ${USER_EMAIL}` }],
  ...extra,
});

describe('gateway: X-GW-Restore never restores what the model produced', () => {
  test('non-streaming string content', async (t) => {
    const upstream = await startChatUpstream(t, (call) => ({
      json: completionOf(`Wrote to ${placeholderIn(call.body)}. Reach me at ${MODEL_EMAIL} or ${MODEL_PHONE}.`),
    }));
    const { url } = await startGateway(t, upstream.url, { GATEWAY_BLOCK_MODE: 'MASK' });
    const body = await (await postChat(url, ask(), RESTORE)).json();
    const content = body.choices[0].message.content as string;
    assert.ok(content.startsWith(`Wrote to ${USER_EMAIL}.`), content);
    assertNoModelValues(content, 'string content');
    assert.match(content, /\[LLM-GW-\d+_EMAIL_2\]/);
    const masked = body.gw_meta.output[0].detections.map((d: { type: string }) => d.type).sort();
    assert.deepEqual(masked, ['EMAIL', 'PHONE_NUMBER']);
  });

  test('non-streaming array content and tool-call arguments', async (t) => {
    const upstream = await startChatUpstream(t, (call) => {
      const placeholder = placeholderIn(call.body);
      return {
        json: {
          ...completionOf([null]),
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: [
                  { type: 'text', text: `Dear ${placeholder},` },
                  { type: 'text', text: `mine is ${MODEL_EMAIL}, call ${MODEL_PHONE}` },
                ],
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: {
                      name: 'send_mail',
                      arguments: JSON.stringify({ to: placeholder, cc: MODEL_EMAIL, phone: MODEL_PHONE }),
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
    const { url } = await startGateway(t, upstream.url, { GATEWAY_BLOCK_MODE: 'MASK' });
    const body = await (await postChat(url, ask(), RESTORE)).json();
    const message = body.choices[0].message;
    assert.equal(message.content[0].text, `Dear ${USER_EMAIL},`);
    assertNoModelValues(message.content[1].text, 'array content');
    const args = JSON.parse(message.tool_calls[0].function.arguments);
    assert.equal(args.to, USER_EMAIL);
    assertNoModelValues(JSON.stringify(args), 'tool-call arguments');
  });

  test('stream-sync: content and tool-call arguments', async (t) => {
    const upstream = await startChatUpstream(t, (call) => {
      const placeholder = placeholderIn(call.body);
      const args = JSON.stringify({ to: placeholder, cc: MODEL_EMAIL, phone: MODEL_PHONE });
      return {
        sse: [
          chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: `Dear ${placeholder}, ` }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: `mine is ${MODEL_EMAIL} ` }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: `call ${MODEL_PHONE} ` }, finish_reason: null }]),
          chunk([
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: args.slice(0, 9) } },
                ],
              },
              finish_reason: null,
            },
          ]),
          chunk([
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(9) } }] },
              finish_reason: null,
            },
          ]),
          chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
        ],
      };
    });
    const { url } = await startGateway(t, upstream.url);
    const events = await readSse(
      await postChat(url, ask({ stream: true }), { ...RESTORE, 'X-GW-Guardrails-Mode': 'stream-sync' }),
    );
    const deltas = events
      .filter((e) => typeof e === 'object' && Array.isArray(e.choices))
      .map((e) => e.choices[0]?.delta);
    const content = deltas.map((d) => d?.content ?? '').join('');
    const args = deltas
      .flatMap((d) => d?.tool_calls ?? [])
      .map((c: any) => c.function?.arguments ?? '')
      .join('');
    assert.ok(content.startsWith(`Dear ${USER_EMAIL}, `), content);
    assertNoModelValues(content, 'streamed content');
    assert.equal(JSON.parse(args).to, USER_EMAIL);
    assertNoModelValues(args, 'streamed tool-call arguments');
  });

  test('final-only and stream-async: only placeholders of the input are replaced', async (t) => {
    const upstream = await startChatUpstream(t, (call) => {
      const placeholder = placeholderIn(call.body);
      const invented = placeholder.replace('_EMAIL_1]', '_EMAIL_7]');
      return {
        sse: [
          chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: `Dear ${placeholder} and ${invented}` }, finish_reason: null }]),
          chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
        ],
      };
    });
    const { url } = await startGateway(t, upstream.url);
    for (const mode of ['final-only', 'stream-async']) {
      const events = await readSse(
        await postChat(url, ask({ stream: true }), { ...RESTORE, 'X-GW-Guardrails-Mode': mode }),
      );
      const content = events
        .filter((e) => typeof e === 'object' && Array.isArray(e.choices))
        .map((e) => e.choices[0]?.delta?.content ?? '')
        .join('');
      assert.match(
        content,
        new RegExp(`^Dear ${USER_EMAIL.replace(/\./g, '\\.')} and \\[LLM-GW-\\d+_EMAIL_7\\]$`),
        mode,
      );
    }
  });
});
