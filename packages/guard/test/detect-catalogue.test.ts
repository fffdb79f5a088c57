// The vendor secret catalogue: every row found by its published format (prefix, body alphabet and length, embedded
// checksum), in any carrier, every match on a line; stand-ins, look-alikes and wrong checksums told apart.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { SECRET_FORMATS } from '../src/detect/secret-catalogue.ts';
import { reported, scoreOf } from './fixtures/builtin-detector.ts';

/** A deterministic pseudo-random string over `alphabet` (xorshift, so every run builds the same values). */
function draw(alphabet: string, n: number, seed: number): string {
  let x = seed * 2654435761 || 1;
  let out = '';
  for (let k = 0; k < n; k++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += alphabet[(x >>> 0) % alphabet.length];
  }
  return out;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const B64 = `${ALNUM}+/`;
const B64URL = `${ALNUM}-_`;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 30 random base62 characters and their CRC32 in 6 base62 digits: the GitHub (2021) and npm token layout. */
function crcBody(seed: number): string {
  const entropy = draw(ALNUM, 30, seed);
  let sum = crc32(entropy);
  let digits = '';
  for (let k = 0; k < 6; k++) {
    digits = BASE62[sum % 62] + digits;
    sum = Math.floor(sum / 62);
  }
  return entropy + digits;
}

/** BIP-173 bech32 encoding of 5-bit values under a human-readable part (for age keys). */
function bech32Encode(hrp: string, data: number[]): string {
  const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  const polymod = (values: number[]) => {
    let chk = 1;
    for (const v of values) {
      const top = chk >>> 25;
      chk = ((chk & 0x1ffffff) << 5) ^ v;
      for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= gen[i]!;
    }
    return chk >>> 0;
  };
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const mod = polymod([...expanded, ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...checksum].map((v) => charset[v]).join('')}`;
}

function assertFound(text: string, type: string, value: string): void {
  assert.ok(
    reported(text).includes(`${type}:${value}`),
    `${type} ${value} in ${JSON.stringify(text)}: ${reported(text)}`,
  );
}

const AGE_KEY = bech32Encode(
  'age-secret-key-',
  [...draw(LOWER_ALNUM, 52, 7)].map((c) => c.charCodeAt(0) & 31),
).toUpperCase();

/** One token per vendor, built from the vendor's published format (never from a scanner's test data). */
const TOKENS: [vendor: string, type: string, token: string][] = [
  ['AWS', 'AWS_ACCESS_KEY', `AKIA${draw(UPPER_ALNUM, 16, 1)}`],
  ['AWS', 'AWS_ACCESS_KEY', `A3T${draw(UPPER_ALNUM, 17, 2)}`],
  ['Google', 'GOOGLE_API_KEY', `AIza${draw(B64URL, 35, 3)}`],
  ['Google OAuth', 'GENERIC_PASSWORD', `GOCSPX-${draw(ALNUM, 28, 4)}`],
  ['GitHub', 'GITHUB_TOKEN', `ghp_${crcBody(5)}`],
  ['GitHub', 'GITHUB_TOKEN', `github_pat_11${draw(UPPER_ALNUM, 20, 6)}_${draw(ALNUM, 59, 6)}`],
  ['GitLab', 'GENERIC_PASSWORD', `glpat-${draw(B64URL.slice(0, 62), 20, 8)}`],
  ['npm', 'GENERIC_PASSWORD', `npm_${crcBody(9)}`],
  ['PyPI', 'GENERIC_PASSWORD', `pypi-AgEIcHlwaS5vcmc${draw(B64URL, 60, 10)}`],
  [
    '1Password',
    'GENERIC_PASSWORD',
    `A3-${draw(UPPER_ALNUM, 6, 11)}-${draw(UPPER_ALNUM, 11, 12)}-${draw(UPPER_ALNUM, 5, 13)}-${draw(UPPER_ALNUM, 5, 14)}-${draw(UPPER_ALNUM, 5, 15)}`,
  ],
  ['1Password', 'GENERIC_PASSWORD', `ops_eyJ${draw(B64, 300, 16)}`],
  ['age', 'GENERIC_PASSWORD', AGE_KEY],
  ['Grafana', 'GENERIC_PASSWORD', `glc_${draw(B64, 120, 17)}`],
  ['Grafana', 'GENERIC_PASSWORD', `glsa_${draw(ALNUM, 32, 18)}_${draw(HEX, 8, 18)}`],
  ['Grafana', 'GENERIC_PASSWORD', `eyJrIjoi${draw(ALNUM, 80, 19)}`],
  ['Notion', 'GENERIC_PASSWORD', `ntn_${draw('0123456789', 11, 20)}${draw(ALNUM, 35, 20)}`],
  ['Sourcegraph', 'GENERIC_PASSWORD', `sgp_${draw(HEX, 16, 21)}_${draw(HEX, 40, 21)}`],
  ['Facebook', 'GENERIC_PASSWORD', `EAAG${draw(ALNUM, 150, 22)}`],
  ['Adobe', 'GENERIC_PASSWORD', `p8e-${draw(ALNUM, 32, 23)}`],
  ['Hugging Face', 'GENERIC_PASSWORD', `hf_${draw(LETTERS, 34, 24)}`],
  ['Hugging Face', 'GENERIC_PASSWORD', `api_org_${draw(LETTERS, 34, 25)}`],
  ['Databricks', 'GENERIC_PASSWORD', `dapi${draw(HEX, 32, 26)}`],
  ['Doppler', 'GENERIC_PASSWORD', `dp.pt.${draw(ALNUM, 43, 27)}`],
  ['Pulumi', 'GENERIC_PASSWORD', `pul-${draw(HEX, 40, 28)}`],
  ['Postman', 'GENERIC_PASSWORD', `PMAK-${draw(HEX, 24, 29)}-${draw(HEX, 34, 29)}`],
  ['Linear', 'GENERIC_PASSWORD', `lin_api_${draw(ALNUM, 40, 30)}`],
  ['Shopify', 'GENERIC_PASSWORD', `shpat_${draw(HEX, 32, 31)}`],
  ['SendGrid', 'GENERIC_PASSWORD', `SG.${draw(B64URL, 22, 32)}.${draw(B64URL, 43, 32)}`],
  ['Mailgun', 'GENERIC_PASSWORD', `key-${draw(HEX, 32, 33)}`],
  ['HashiCorp Vault', 'GENERIC_PASSWORD', `hvs.${draw(B64URL, 95, 34)}`],
  ['HashiCorp Vault', 'GENERIC_PASSWORD', `hvb.${draw(B64URL, 140, 35)}`],
  ['DigitalOcean', 'GENERIC_PASSWORD', `dop_v1_${draw(HEX, 64, 36)}`],
  ['Atlassian', 'GENERIC_PASSWORD', `ATATT3${draw(B64URL, 186, 37)}`],
  ['Heroku', 'GENERIC_PASSWORD', `HRKU-AA${draw(B64URL, 58, 38)}`],
  ['Dropbox', 'GENERIC_PASSWORD', `sl.${draw(B64URL, 140, 39)}`],
  ['Twitter', 'GENERIC_PASSWORD', `AAAAAAAAAAAAAAAAAAAAA${draw(ALNUM, 90, 40)}`],
  ['Sentry', 'GENERIC_PASSWORD', `sntryu_${draw(HEX, 64, 41)}`],
  ['Discord', 'GENERIC_PASSWORD', `MT${draw(ALNUM, 22, 42)}.${draw(B64URL, 6, 42)}.${draw(B64URL, 30, 42)}`],
  [
    'JWT (base64)',
    'JWT',
    Buffer.from(
      `eyJhbGciOiJIUzI1NiJ9.${Buffer.from('{"sub":"1234567890"}').toString('base64url')}.${draw(B64URL, 43, 43)}`,
    ).toString('base64'),
  ],
];

describe('vendor secret catalogue', () => {
  test('every catalogue row is exercised here', () => {
    const vendors = new Set(TOKENS.map(([v]) => v));
    for (const row of SECRET_FORMATS) {
      if (row.vendor === 'Twilio') continue; // needs a naming word: tested below
      assert.ok(vendors.has(row.vendor), `no test token for ${row.vendor}`);
    }
  });

  for (const [vendor, type, token] of TOKENS) {
    test(`${vendor}: ${token.slice(0, 12)}… bare, in a .env line, a YAML value, a JSON string and a curl header`, () => {
      assertFound(token, type, token);
      assertFound(`SOME_VALUE=${token}\nNEXT=1`, type, token);
      assertFound(`  value: "${token}"`, type, token);
      assertFound(`{"x": "${token}"}`, type, token);
      assertFound(`curl -H "Authorization: Bearer ${token}" https://api.example.com`, type, token);
    });
  }

  test("a sentence's final dot is not part of a token; a routable token's dotted parts are", () => {
    const token = `glpat-${draw(B64URL.slice(0, 62), 20, 120)}`;
    assertFound(`The token is ${token}.`, 'GENERIC_PASSWORD', token);
    assertFound(
      `t=${token}.01.${draw(LOWER_ALNUM, 9, 121)}`,
      'GENERIC_PASSWORD',
      `${token}.01.${draw(LOWER_ALNUM, 9, 121)}`,
    );
  });

  test('every token of a line is reported, not only the last', () => {
    const line = TOKENS.map(([, , token]) => token).join(' ');
    const found = reported(line);
    for (const [, type, token] of TOKENS) assert.ok(found.includes(`${type}:${token}`), `${type} ${token}`);
  });

  test('credentials land in the block band', () => {
    for (const [, , token] of TOKENS) assert.ok(scoreOf(`k=${token}`, token) >= 0.85, token);
  });

  test('an embedded checksum that passes raises the score; one that fails leaves the token reported but lower', () => {
    const good = `ghp_${crcBody(50)}`;
    const bad = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
    assert.ok(scoreOf(good, good) > scoreOf(bad, bad), `${scoreOf(good, good)} vs ${scoreOf(bad, bad)}`);
    const npmGood = `npm_${crcBody(51)}`;
    const npmBad = `npm_${draw(ALNUM, 36, 52)}`;
    assert.ok(scoreOf(npmGood, npmGood) > scoreOf(npmBad, npmBad));
    const ageBad = `${AGE_KEY.slice(0, -1)}${AGE_KEY.endsWith('Q') ? 'P' : 'Q'}`;
    assert.ok(scoreOf(AGE_KEY, AGE_KEY) > scoreOf(ageBad, ageBad));
  });

  test('stand-ins in a vendor format are not secrets: repeated or low-entropy bodies, documented examples', () => {
    for (const fake of [
      `dop_v1_${'0'.repeat(64)}`,
      `hf_${'x'.repeat(34)}`,
      `sgp_${'a'.repeat(40)}`,
      `shpat_${'1234abcd'.repeat(4)}`,
      'AKIAIOSFODNN7EXAMPLE',
      `lin_api_${'YOUR_API_KEY_HERE'.padEnd(40, 'X')}`,
    ]) {
      assert.deepEqual(
        reported(`token = ${fake}`).filter((r) => r.endsWith(fake)),
        [],
        fake,
      );
    }
  });

  test('look-alikes: a prefix without its body, a body of the wrong alphabet or length, a prefix inside a word', () => {
    for (const text of [
      `pul-${draw(HEX, 39, 60)} is one short`,
      `hf_${draw(LETTERS, 20, 61)} too short`,
      `dapi${draw(LOWER_ALNUM.slice(16), 32, 62)} has letters past f`,
      `xshpat_${draw(HEX, 32, 63)} starts inside a word`,
      'see the dp.pt. docs',
      'hvs.short',
      'SG.header.value',
      'https://example.com/sl.html',
    ]) {
      assert.deepEqual(
        reported(text).filter((r) => r.startsWith('GENERIC_PASSWORD') || r.startsWith('JWT')),
        [],
        text,
      );
    }
  });

  test('a base64 value that does not decode to a JWT is not one', () => {
    const notJwt = Buffer.from(`eyJ${draw(ALNUM, 120, 70)}`).toString('base64');
    assert.ok(!reported(notJwt).some((r) => r.startsWith('JWT:')), notJwt);
  });

  test('Twilio API key SIDs (SK + 32 hex) are reported only when a word names them', () => {
    const sid = `SK${draw(HEX, 32, 80)}`;
    assertFound(`twilio api key: ${sid}`, 'GENERIC_PASSWORD', sid);
    assert.deepEqual(reported(`row ${sid}`), []);
  });

  test('webhook URLs are credentials as a whole (Slack, Microsoft Teams, Discord); the documented stand-in is a URL', () => {
    const slack = `https://hooks.slack.com/services/T${draw(UPPER_ALNUM, 10, 90)}/B${draw(UPPER_ALNUM, 10, 91)}/${draw(ALNUM, 24, 92)}`;
    assertFound(`notify: ${slack}\n`, 'SLACK_TOKEN', slack);
    const uuid = (seed: number) => [8, 4, 4, 4, 12].map((n, k) => draw(HEX, n, seed + k)).join('-');
    const teams = `https://acme.webhook.office.com/webhookb2/${uuid(93)}@${uuid(94)}/IncomingWebhook/${draw(HEX, 32, 95)}/${uuid(96)}`;
    assertFound(`"url": "${teams}"`, 'GENERIC_PASSWORD', teams);
    const discord = `https://discord.com/api/webhooks/${draw('0123456789', 18, 97)}/${draw(B64URL, 68, 98)}`;
    assertFound(`DISCORD_WEBHOOK=${discord}`, 'GENERIC_PASSWORD', discord);
    const doc = 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX';
    assert.deepEqual(
      reported(doc).filter((r) => !r.startsWith('URL:')),
      [],
    );
    assert.deepEqual(reported('https://hooks.slack.com/services/short'), [
      'URL:https://hooks.slack.com/services/short',
    ]);
  });

  test('vendors without a prefix are found by the key that names them, in their format only (hex included)', () => {
    const cases: [string, string][] = [
      ['DATADOG_API_KEY=', draw(HEX, 32, 100)],
      ['"discordToken" =>', `"${draw(HEX, 64, 101)}"`],
      ['dropbox_token:', draw(LOWER_ALNUM, 15, 102)],
      ['twitter_api_secret =', `"${draw(ALNUM, 50, 103)}"`],
      [
        'HEROKU_API_KEY=',
        `${draw(HEX, 8, 104)}-${draw(HEX, 4, 105)}-${draw(HEX, 4, 106)}-${draw(HEX, 4, 107)}-${draw(HEX, 12, 108)}`,
      ],
      ['plaid_secret:', draw(HEX, 30, 109)],
      ['mailchimp_api_key =', `"${draw(HEX, 32, 110)}-us14"`],
    ];
    for (const [key, value] of cases) {
      const bare = value.replaceAll('"', '');
      assertFound(`${key} ${value}`, 'GENERIC_PASSWORD', bare);
    }
    // The key names the vendor, the value is not in its format: a label, an id, a stand-in.
    for (const text of [
      'DATADOG_API_KEY = "my-datadog-key"',
      `discord_token: ${draw(HEX, 40, 111)}`,
      'mailchimp_api_key = "abc-us14"',
      `DATADOG_API_KEY=${'ab'.repeat(16)}`,
    ]) {
      assert.deepEqual(
        reported(text).filter((r) => r.startsWith('GENERIC_PASSWORD:')),
        [],
        text,
      );
    }
  });
});
