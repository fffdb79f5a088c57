// Self-check of the varied corpus (test/fixtures/varied-corpus.jsonl). It checks the labels and values only;
// it does not run guard's detector.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { type CorpusRecord, loadCorpus, STRUCTURED_TYPES, scoreCorpus } from './fixtures/corpus-score.ts';
import { CARRIERS, CORPUS_FILE, generateVariedCorpus, serializeCorpus } from './fixtures/make-varied-corpus.ts';

// Independent checksum implementations (the generator has its own).
function luhn(value: string): boolean {
  const digits = value.replace(/\D/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length > 1 && sum % 10 === 0;
}

function ibanMod97(value: string): boolean {
  const s = value.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{8,30}$/.test(s)) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  const numeric = [...rearranged].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join('');
  return BigInt(numeric) % 97n === 1n;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function githubChecksumOk(token: string): boolean {
  const body = token.slice(4);
  const entropy = body.slice(0, 30);
  let n = 0;
  for (const ch of body.slice(30)) n = n * 62 + BASE62.indexOf(ch);
  return crc32(entropy) >>> 0 === n;
}

/** Decode a PEM block as it appears in the text (indented, diff-prefixed or JSON-escaped) to DER bytes. */
function pemBody(value: string): { label: string; der: Buffer } {
  const text = value.replace(/\\n/g, '\n');
  const lines = text.split('\n');
  const begin = /^-----BEGIN ([A-Z ]+)-----$/.exec(lines[0]);
  assert.ok(begin, `no BEGIN line: ${lines[0]}`);
  const inner = lines.slice(1, -1);
  let prefix = /^[+ \t]*/.exec(inner[0])?.[0] ?? '';
  for (const l of inner) while (!l.startsWith(prefix)) prefix = prefix.slice(0, -1);
  const last = lines[lines.length - 1].slice(prefix.length);
  assert.equal(last, `-----END ${begin[1]}-----`);
  const b64 = inner.map((l) => l.slice(prefix.length)).join('');
  assert.match(b64, /^[A-Za-z0-9+/]+={0,2}$/);
  return { label: begin[1], der: Buffer.from(b64, 'base64') };
}

function derTotalLength(der: Buffer): number {
  assert.equal(der[0], 0x30, 'DER must start with a SEQUENCE');
  const b = der[1];
  if (b < 0x80) return 2 + b;
  const n = b & 0x7f;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + der[2 + i];
  return 2 + n + len;
}

const records: CorpusRecord[] = loadCorpus(CORPUS_FILE);
const fileText = readFileSync(CORPUS_FILE, 'utf8');
const typeSet = new Set<string>(STRUCTURED_TYPES);
const entities = (type: string) =>
  records.flatMap((r) => r.entities.filter((e) => e.type === type).map((e) => ({ r, e })));

describe('varied corpus', () => {
  it('has 600-900 well-formed records with unique ids', () => {
    assert.ok(records.length >= 600 && records.length <= 900, `${records.length} records`);
    assert.equal(new Set(records.map((r) => r.id)).size, records.length);
    for (const r of records) {
      assert.equal(r.split, 'varied');
      assert.ok(r.carrier && r.template && typeof r.text === 'string' && r.text.length > 0, r.id);
      for (const e of r.entities) assert.ok(typeSet.has(e.type), `${r.id}: unknown type ${e.type}`);
    }
  });

  it('every value equals its slice (UTF-16 offsets, end exclusive)', () => {
    for (const r of records) {
      for (const e of r.entities) {
        assert.ok(e.start >= 0 && e.end > e.start && e.end <= r.text.length, `${r.id} ${e.type} bounds`);
        assert.equal(r.text.slice(e.start, e.end), e.value, `${r.id} ${e.type}`);
      }
      for (const n of r.hard_negatives) {
        assert.ok(n.start >= 0 && n.end > n.start && n.end <= r.text.length, `${r.id} ${n.kind} bounds`);
        assert.equal(r.text.slice(n.start, n.end), n.value, `${r.id} ${n.kind}`);
      }
    }
  });

  it('spans do not overlap (entities, hard negatives, and each other)', () => {
    for (const r of records) {
      const spans = [
        ...r.entities.map((e) => ({ ...e, what: e.type })),
        ...r.hard_negatives.map((n) => ({ ...n, what: n.kind })),
      ].sort((a, b) => a.start - b.start);
      for (let i = 1; i < spans.length; i++) {
        assert.ok(spans[i].start >= spans[i - 1].end, `${r.id}: ${spans[i - 1].what} overlaps ${spans[i].what}`);
      }
    }
  });

  it('every carrier has positive and negative-only records', () => {
    for (const [carrier] of CARRIERS) {
      const rs = records.filter((r) => r.carrier === carrier);
      assert.ok(
        rs.some((r) => r.entities.length > 0),
        `${carrier}: no positive record`,
      );
      assert.ok(
        rs.some((r) => r.entities.length === 0),
        `${carrier}: no negative-only record`,
      );
    }
  });

  it('every CREDIT_CARD passes Luhn and has a card length', () => {
    const cards = entities('CREDIT_CARD');
    assert.ok(cards.length > 50);
    for (const { r, e } of cards) {
      assert.ok(luhn(e.value), `${r.id}: ${e.value}`);
      const n = e.value.replace(/\D/g, '').length;
      assert.ok(n >= 13 && n <= 19, `${r.id}: ${e.value}`);
      assert.match(e.value, /^\d[\d -]+\d$/);
    }
  });

  it('every ORDER_NUMBER hard negative fails Luhn', () => {
    const orders = records.flatMap((r) => r.hard_negatives.filter((n) => n.kind === 'ORDER_NUMBER'));
    assert.ok(orders.length > 20);
    for (const n of orders) assert.ok(!luhn(n.value), n.value);
  });

  it('every IBAN passes mod-97 (and the national checks ibantools knows)', () => {
    const ibans = entities('IBAN');
    assert.ok(ibans.length > 50);
    for (const { r, e } of ibans) {
      assert.ok(ibanMod97(e.value), `${r.id}: ${e.value}`);
      assert.ok(
        isValidIBAN(electronicFormatIBAN(e.value.replace(/\s+/g, ' ')) ?? ''),
        `${r.id}: ibantools rejects ${e.value}`,
      );
    }
  });

  it('every US_SSN is a valid SSN in dashed or spaced form', () => {
    for (const { r, e } of entities('US_SSN')) {
      const m = /^(\d{3})([- ])(\d{2})\2(\d{4})$/.exec(e.value);
      assert.ok(m, `${r.id}: ${e.value}`);
      const [area, group, serial] = [Number(m[1]), Number(m[3]), Number(m[4])];
      assert.ok(area !== 0 && area !== 666 && area < 900, `${r.id}: area ${m[1]}`);
      assert.ok(group !== 0 && serial !== 0, `${r.id}: ${e.value}`);
    }
  });

  it('every PHONE_NUMBER is a valid number for the country it was written for', () => {
    const { phoneCountry } = generateVariedCorpus();
    const phones = entities('PHONE_NUMBER');
    assert.ok(phones.length > 100);
    for (const { r, e } of phones) {
      const cc = phoneCountry.get(`${r.id}:${e.start}`) as CountryCode | undefined;
      assert.ok(cc, `${r.id}: no country for ${e.value}`);
      const p = parsePhoneNumberFromString(e.value.replace('(0)', ''), cc);
      assert.ok(p, `${r.id}: ${e.value} does not parse`);
      assert.ok(p.isValid(), `${r.id}: ${e.value} is not a valid ${cc} number`);
      assert.equal(p.country, cc, `${r.id}: ${e.value} parsed as ${p.country}`);
    }
  });

  it('secrets have the real shapes', () => {
    for (const { r, e } of entities('AWS_ACCESS_KEY')) assert.match(e.value, /^(AKIA|ASIA)[A-Z2-7]{16}$/, r.id);
    for (const { r, e } of entities('GITHUB_TOKEN')) {
      if (e.value.startsWith('github_pat_')) assert.match(e.value, /^github_pat_[A-Z0-9]{22}_[A-Za-z0-9]{59}$/, r.id);
      else {
        assert.match(e.value, /^gh[pousr]_[A-Za-z0-9]{36}$/, r.id);
        assert.ok(githubChecksumOk(e.value), `${r.id}: bad checksum ${e.value}`);
      }
    }
    for (const { r, e } of entities('OPENAI_API_KEY'))
      assert.match(e.value, /^sk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]+T3BlbkFJ[A-Za-z0-9_-]+$/, r.id);
    for (const { r, e } of entities('STRIPE_KEY'))
      assert.match(e.value, /^(sk|rk)_(live|test)_[A-Za-z0-9]{24,}$/, r.id);
    for (const { r, e } of entities('SLACK_TOKEN'))
      assert.match(
        e.value,
        /^(xoxb-\d+-\d+-[A-Za-z0-9]{24}|xoxp-\d+-\d+-\d+-[a-f0-9]{32}|xapp-1-A[A-Z0-9]+-\d+-[a-f0-9]{64})$/,
        r.id,
      );
    for (const { r, e } of entities('JWT')) {
      const parts = e.value.split('.');
      assert.equal(parts.length, 3, r.id);
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: string; typ?: string };
      const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { iat?: number };
      assert.ok(header.alg && header.typ === 'JWT', r.id);
      assert.equal(typeof payload.iat, 'number', r.id);
      assert.match(parts[2], /^[A-Za-z0-9_-]{40,}$/, r.id);
    }
  });

  it('every PRIVATE_KEY span is a whole PEM block with a well-formed body', () => {
    const keys = entities('PRIVATE_KEY');
    assert.ok(keys.length > 30);
    for (const { r, e } of keys) {
      const { label, der } = pemBody(e.value);
      assert.match(label, /PRIVATE KEY$/, r.id);
      if (label === 'OPENSSH PRIVATE KEY')
        assert.equal(der.subarray(0, 15).toString('latin1'), 'openssh-key-v1\0', r.id);
      else assert.equal(derTotalLength(der), der.length, `${r.id}: DER length`);
    }
  });

  it('GENERIC_PASSWORD spans hold the value only (no key, quotes or separators)', () => {
    for (const { r, e } of entities('GENERIC_PASSWORD')) {
      assert.doesNotMatch(e.value, /^(password|passwd|pwd)\b/i, r.id);
      assert.doesNotMatch(e.value, /^["'=:\s]|["'\s]$/, `${r.id}: ${e.value}`);
    }
  });

  it('regenerating produces the identical file (determinism)', () => {
    const a = serializeCorpus(generateVariedCorpus().records);
    const b = serializeCorpus(generateVariedCorpus().records);
    assert.equal(a, b, 'two in-process generations differ');
    assert.equal(a, fileText, 'varied-corpus.jsonl is stale: run make-varied-corpus.ts');
  });

  it('scorer: gold spans as predictions score F1 1 and touch no hard negative', () => {
    const byText = new Map(records.map((r) => [r.text, r]));
    const report = scoreCorpus(records, (text) => byText.get(text)?.entities ?? []);
    assert.equal(report.micro.f1, 1);
    assert.equal(report.hardNegatives.hit, 0);
    const none = scoreCorpus(records, () => []);
    assert.equal(none.micro.tp, 0);
    assert.equal(
      none.micro.fn,
      records.reduce((a, r) => a + r.entities.length, 0),
    );
  });
});
