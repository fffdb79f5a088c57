import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { canonicalJson, payloadHash } from '../src/index.ts';

test('integer-like keys sort as strings by UTF-16 code units ("10" before "9"), at every depth', () => {
  assert.equal(canonicalJson({ 9: 'nine', 10: 'ten', a: 1 }), '{"10":"ten","9":"nine","a":1}');
  assert.equal(canonicalJson(JSON.parse('{"9":1,"10":2}')), '{"10":2,"9":1}');
  assert.equal(canonicalJson({ x: [{ 2: 'b', 1: 'a', 0: 'z' }] }), '{"x":[{"0":"z","1":"a","2":"b"}]}');
  assert.equal(canonicalJson({ b: { 100: 1, 20: 2, 3: 3 } }), '{"b":{"100":1,"20":2,"3":3}}');
});

test('key order and whitespace do not matter; nested keys are sorted; undefined members are dropped', () => {
  assert.equal(
    canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 1.5 }], u: undefined }),
    '{"a":[true,null,{"c":1.5,"d":"x"}],"b":1}',
  );
  assert.equal(payloadHash({ a: 1, b: 2 }), payloadHash(JSON.parse('{ "b": 2,\n "a": 1 }')));
  assert.equal(canonicalJson([undefined, 1]), '[null,1]');
});

test('unicode keys sort by UTF-16 code units and strings keep their characters (RFC 8785, section 3.2.3)', () => {
  const input = {
    '\u20ac': 'Euro Sign',
    '\r': 'Carriage Return',
    '\ufb33': 'Hebrew Letter Dalet With Dagesh',
    '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face',
    '\u0080': 'Control',
    '\u00f6': 'Latin Small Letter O With Diaeresis',
  };
  const keys = Object.keys(JSON.parse(canonicalJson(input)) as object);
  // JSON.parse reorders "1" first again; the text is what counts:
  assert.ok(keys.length === 7);
  assert.equal(
    canonicalJson(input),
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  );
  // the same document without an index-like key takes the one-pass path and sorts the same way
  const { '1': _one, ...rest } = input;
  assert.equal(
    canonicalJson(rest),
    '{"\\r":"Carriage Return","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  );
  assert.equal(canonicalJson({ s: 'é\u2028"\\\u0001' }), '{"s":"é\u2028\\"\\\\\\u0001"}');
});

test('numbers are written as ECMAScript writes them (RFC 8785, section 3.2.2.3); non-finite numbers are refused', () => {
  const cases: [number, string][] = [
    [4.5, '4.5'],
    [2e-3, '0.002'],
    [1e-27, '1e-27'],
    [1e21, '1e+21'],
    [1e30, '1e+30'],
    [Number('333333333.33333329'), '333333333.3333333'],
    [-0, '0'],
    [100, '100'],
    [Number('9007199254740993'), '9007199254740992'],
  ];
  for (const [value, text] of cases) {
    assert.equal(canonicalJson({ n: value }), `{"n":${text}}`);
    assert.equal(canonicalJson({ 1: value }), `{"1":${text}}`, 'the walk writes numbers the same way');
  }
  assert.throws(() => canonicalJson({ n: Number.NaN }), TypeError);
  assert.throws(() => canonicalJson({ 1: Number.POSITIVE_INFINITY }), TypeError);
});

test('the request hash is the SHA-256 of the canonical text', () => {
  const body = { 10: 'x', 9: 'y' };
  assert.equal(payloadHash(body), createHash('sha256').update('{"10":"x","9":"y"}').digest('hex'));
  assert.notEqual(payloadHash({ a: 1 }), payloadHash({ a: '1' }));
});
