import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateRid, parseGatewayHeaders } from '../src/gateway/gateway-headers.ts';
import { holdbackStart, placeholderHoldbackStart } from '../src/gateway/holdback.ts';
import { createRequestPlaceholders } from '../src/gateway/placeholders.ts';
import { createSseParser } from '../src/gateway/sse.ts';

const held = (text: string) => text.slice(holdbackStart(text));

describe('stream-sync hold-back', () => {
  test('the trailing run without whitespace is held: it may still grow into an entity', () => {
    assert.equal(held('Write to jo'), 'jo');
    assert.equal(held('Write to john@exa'), 'john@exa');
    assert.equal(held('Write to john@example.com '), '');
    assert.equal(held('token=eyJhbGciOi'), 'token=eyJhbGciOi');
    assert.equal(held('Hello, world.\n'), '');
  });

  test('spaced digit and capital groups are held together (cards, phones, IBANs)', () => {
    assert.equal(held('card 4539 1488 0343 '), '4539 1488 0343 ');
    assert.equal(held('call +1 415 555'), '+1 415 555');
    assert.equal(held('call (415) 555-'), '(415) 555-');
    assert.equal(held('iban: DE89 3704 0044 05'), 'DE89 3704 0044 05');
    assert.equal(
      held('IBAN DE89 37'),
      'IBAN DE89 37',
      'a short capital word joins too (harmless: held a moment longer)',
    );
    assert.equal(held('words then 12 apples'), 'apples', 'a lowercase run does not join groups');
  });

  test('an unterminated PEM block is held from its BEGIN line; a terminated one is not', () => {
    const begin = 'Key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nabc ';
    assert.equal(held(begin), begin.slice(5));
    assert.equal(held(`${begin}\n-----END PRIVATE KEY-----\nok `), '');
  });

  test('restore-only streams hold a trailing unclosed "[" up to the longest placeholder', () => {
    assert.equal(placeholderHoldbackStart('Dear [LLM-GW-1_EM', 30), 5);
    assert.equal(placeholderHoldbackStart('Dear [LLM-GW-1_EMAIL_1] ok', 30), 26);
    assert.equal(placeholderHoldbackStart(`a [${'x'.repeat(40)}`, 30), 43, 'longer than any placeholder: released');
  });
});

describe('SSE parsing', () => {
  test('events split anywhere are reassembled; CRLF and multi-line data follow the standard', () => {
    const parser = createSseParser(1000);
    const text = 'data: {"a":1}\n\n: keep-alive\n\ndata: line1\r\ndata: line2\r\n\r\ndata: [DONE]\n\n';
    const events = [...text].flatMap((c) => parser.push(c));
    assert.deepEqual(
      events.map((e) => e.data),
      ['{"a":1}', undefined, 'line1\nline2', '[DONE]'],
    );
    assert.equal(events[1]!.raw, ': keep-alive');
    assert.deepEqual(parser.end(), []);
  });

  test('an event larger than the bound is an error (fail closed), a trailing unterminated event is returned at the end', () => {
    const parser = createSseParser(10);
    assert.throws(() => parser.push('data: 012345678901234'));
    const other = createSseParser(100);
    other.push('data: tail');
    assert.deepEqual(
      other.end().map((e) => e.data),
      ['tail'],
    );
  });
});

describe('gateway headers and placeholders', () => {
  test('defaults: generated rid LLM-GW-<epoch ms> (unique), final-only, filter, no restore', () => {
    const options = parseGatewayHeaders({});
    assert.match(options.rid, /^LLM-GW-\d{13}$/);
    assert.deepEqual(
      { ...options, rid: '' },
      { rid: '', guardrails: [], mode: 'final-only', onFail: 'filter', restore: false },
    );
    const a = generateRid(1000);
    const b = generateRid(1000);
    assert.notEqual(a, b);
    const parsed = parseGatewayHeaders({
      'x-gw-rid': 'trace-42',
      'x-gw-guardrails': ' json , email ,json',
      'x-gw-guardrails-mode': 'STREAM-SYNC',
      'x-gw-guardrails-onfail': 'halt',
      'x-gw-restore': 'true',
    });
    assert.deepEqual(parsed, {
      rid: 'trace-42',
      guardrails: ['json', 'email'],
      mode: 'stream-sync',
      onFail: 'halt',
      restore: true,
    });
  });

  test('placeholders: one per value and type, numbered per type; only input values are restored', () => {
    const p = createRequestPlaceholders('R1');
    assert.equal(p.placeholderFor('EMAIL', 'a@b.co'), '[R1_EMAIL_1]');
    assert.equal(p.placeholderFor('EMAIL', 'c@d.co'), '[R1_EMAIL_2]');
    assert.equal(p.placeholderFor('EMAIL', 'a@b.co'), '[R1_EMAIL_1]');
    assert.equal(p.placeholderFor('PHONE_NUMBER', '+1 415 555 2671'), '[R1_PHONE_NUMBER_1]');
    p.endInput();
    assert.equal(p.placeholderFor('EMAIL', 'model@made.up'), '[R1_EMAIL_3]');
    assert.equal(p.restore('to [R1_EMAIL_1], [R1_EMAIL_3], [R2_EMAIL_1]'), 'to a@b.co, [R1_EMAIL_3], [R2_EMAIL_1]');
    assert.equal(p.withheld(), '[R1_WITHHELD_1]');
  });
});
