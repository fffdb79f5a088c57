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
const DIGITS = '0123456789';
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
    'Amazon Bedrock',
    'GENERIC_PASSWORD',
    `ABSK${Buffer.from(`BedrockAPIKey-${draw(LOWER_ALNUM, 4, 130)}-at-${draw(DIGITS, 12, 131)}:${draw(B64, 60, 132)}`).toString('base64')}`,
  ],
  ['Square', 'GENERIC_PASSWORD', `EAAA${draw(B64URL, 60, 133)}`],
  ['Square', 'GENERIC_PASSWORD', `sq0atp-${draw(B64URL, 22, 134)}`],
  ['Square', 'GENERIC_PASSWORD', `sq0csp-${draw(B64URL, 43, 135)}`],
  ['Sonar', 'GENERIC_PASSWORD', `squ_${draw(HEX, 40, 136)}`],
  ['New Relic', 'GENERIC_PASSWORD', `NRAK-${draw(UPPER_ALNUM, 27, 137)}`],
  ['New Relic', 'GENERIC_PASSWORD', `NRJS-${draw(HEX, 19, 138)}`],
  ['New Relic', 'GENERIC_PASSWORD', `NRII-${draw(B64URL, 32, 139)}`],
  ['Brevo', 'GENERIC_PASSWORD', `xkeysib-${draw(HEX, 64, 140)}-${draw(ALNUM, 16, 140)}`],
  ['Docker Hub', 'GENERIC_PASSWORD', `dckr_pat_${draw(B64URL, 27, 141)}`],
  ['Fly.io', 'GENERIC_PASSWORD', `fm2_${draw(B64, 160, 142)}`],
  ['Tailscale', 'GENERIC_PASSWORD', `tskey-auth-k${draw(ALNUM, 11, 143)}CNTRL-${draw(ALNUM, 33, 143)}`],
  ['PlanetScale', 'GENERIC_PASSWORD', `pscale_tkn_${draw(B64URL, 43, 144)}`],
  ['Render', 'GENERIC_PASSWORD', `rnd_${draw(ALNUM, 32, 145)}`],
  ['Supabase', 'GENERIC_PASSWORD', `sbp_${draw(HEX, 40, 146)}`],
  ['Groq', 'GENERIC_PASSWORD', `gsk_${draw(ALNUM, 52, 147)}`],
  ['xAI', 'GENERIC_PASSWORD', `xai-${draw(ALNUM, 80, 148)}`],
  ['Perplexity', 'GENERIC_PASSWORD', `pplx-${draw(ALNUM, 48, 149)}`],
  ['Replicate', 'GENERIC_PASSWORD', `r8_${draw(ALNUM, 37, 150)}`],
  ['JFrog', 'GENERIC_PASSWORD', `AKCp${draw(ALNUM, 69, 151)}`],
  [
    'JFrog',
    'GENERIC_PASSWORD',
    Buffer.from(`reftkn:01:${draw(DIGITS, 10, 152)}:${draw(ALNUM, 40, 152)}`)
      .toString('base64')
      .slice(0, 64),
  ],
  ['Clojars', 'GENERIC_PASSWORD', `CLOJARS_${draw(HEX, 60, 153)}`],
  ['Dynatrace', 'GENERIC_PASSWORD', `dt0c01.${draw(UPPER_ALNUM, 24, 154)}.${draw(UPPER_ALNUM, 64, 155)}`],
  ['EasyPost', 'GENERIC_PASSWORD', `EZAK${draw(ALNUM, 54, 156)}`],
  ['Flutterwave', 'GENERIC_PASSWORD', `FLWSECK_TEST-${draw(HEX, 32, 157)}-X`],
  ['NuGet', 'GENERIC_PASSWORD', `oy2${draw(LOWER_ALNUM, 43, 159)}`],
  ['Google OAuth', 'GENERIC_PASSWORD', `ya29.${draw(B64URL, 120, 160)}`],
  ['Typeform', 'GENERIC_PASSWORD', `tfp_${draw(B64URL, 59, 161)}`],
  ['ReadMe', 'GENERIC_PASSWORD', `rdme_${draw(LOWER_ALNUM, 70, 162)}`],
  ['RubyGems', 'GENERIC_PASSWORD', `rubygems_${draw(HEX, 48, 163)}`],
  ['Shippo', 'GENERIC_PASSWORD', `shippo_live_${draw(HEX, 40, 164)}`],
  ['Mapbox', 'GENERIC_PASSWORD', `sk.eyJ1Ijoi${draw(B64URL, 70, 165)}.${draw(B64URL, 22, 166)}`],
  ['OpenShift', 'GENERIC_PASSWORD', `sha256~${draw(B64URL, 43, 167)}`],
  ['Prefect', 'GENERIC_PASSWORD', `pnu_${draw(ALNUM, 36, 168)}`],
  ['Scalingo', 'GENERIC_PASSWORD', `tk-us-${draw(B64URL, 48, 169)}`],
  ['42 intra', 'GENERIC_PASSWORD', `s-s4t2ud-${draw(HEX, 64, 170)}`],
  ['Contentful', 'GENERIC_PASSWORD', `CFPAT-${draw(B64URL, 43, 172)}`],
  ['Netlify', 'GENERIC_PASSWORD', `nfp_${draw(ALNUM, 36, 173)}`],
  ['Buildkite', 'GENERIC_PASSWORD', `bkua_${draw(HEX, 40, 174)}`],
  ['LangSmith', 'GENERIC_PASSWORD', `lsv2_pt_${draw(HEX, 32, 175)}_${draw(HEX, 10, 175)}`],
  ['Alibaba Cloud', 'GENERIC_PASSWORD', `LTAI${draw(ALNUM, 20, 176)}`],
  ['Stripe / Standard Webhooks', 'GENERIC_PASSWORD', `whsec_${draw(ALNUM, 32, 177)}`],
  ['Stripe / Standard Webhooks', 'GENERIC_PASSWORD', `whsec_${Buffer.from(draw(ALNUM, 48, 178)).toString('base64')}`],
  // Microsoft Entra ID client secrets: the `<digit>Q~` marker sits inside the token (no prefix).
  ['Microsoft Entra ID', 'GENERIC_PASSWORD', `${draw(`${ALNUM}_~.`, 3, 190)}8Q~${draw(`${ALNUM}_~.-`, 34, 191)}`],
  ['Microsoft Entra ID', 'GENERIC_PASSWORD', `${draw(ALNUM, 3, 192)}7Q~${draw(ALNUM, 31, 193)}`],
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
      `whsec_${'x'.repeat(32)}`,
      `abc8Q~${'a'.repeat(34)}`,
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
      `sq0csp-${draw(B64URL, 20, 180)} is too short`,
      `NRAK-${draw(LOWER_ALNUM, 27, 181)} is lower case`,
      `dt0c01.${draw(UPPER_ALNUM, 24, 182)} is a token id without its secret`,
      `API-${draw(UPPER_ALNUM, 28, 183)} without a key that names Octopus`,
      `rubygems_${draw(HEX, 47, 184)} is one short`,
      `squ_${draw('ghijklmnopqrstuvwxyz', 40, 185)} is not hex`,
      'tskey-auth-XXXXXX from the docs',
      'ya29.short',
      `LTAI${draw(ALNUM, 8, 186)} too short`,
      `xsbp_${draw(HEX, 40, 187)} starts inside a word`,
      `fm2_${draw(B64, 40, 188)} is too short for a macaroon`,
      `whsec_${draw(ALNUM, 31, 194)} is one short`,
      `${draw(ALNUM, 3, 195)}8Q~${draw(ALNUM, 30, 196)} is one short`,
      `https://example.com/files/${draw(ALNUM, 3, 197)}8Q~${draw(ALNUM, 34, 198)} is a path`,
      `${draw(ALNUM, 3, 199)}xQ~${draw(ALNUM, 34, 200)} has no digit before its marker`,
      `portal.demo~2F${draw(ALNUM, 40, 201)} is an escaped path`,
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

  test('Slack webhook URLs by their parts: incoming (services), Workflow Builder (workflows), triggers', () => {
    const team = `T${draw(UPPER_ALNUM, 10, 190)}`;
    const workflow = `https://hooks.slack.com/workflows/${team}/A${draw(UPPER_ALNUM, 10, 191)}/${draw(DIGITS, 18, 192)}/${draw(ALNUM, 24, 193)}`;
    assertFound(`SLACK_WEBHOOK=${workflow}`, 'SLACK_TOKEN', workflow);
    assertFound(`  url: "${workflow}"`, 'SLACK_TOKEN', workflow);
    const trigger = `https://hooks.slack.com/triggers/${team}/${draw(DIGITS, 13, 194)}/${draw(HEX, 32, 195)}`;
    assertFound(`curl -X POST ${trigger} -d '{}'`, 'SLACK_TOKEN', trigger);
    // A workflow URL cut short (no secret part) is only a URL.
    const cut = `https://hooks.slack.com/workflows/${team}/A${draw(UPPER_ALNUM, 10, 191)}`;
    assert.deepEqual(
      reported(cut).filter((r) => !r.startsWith('URL:')),
      [],
    );
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
      ['ALIBABA_CLOUD_ACCESS_KEY_SECRET=', draw(LOWER_ALNUM, 30, 200)],
      ['"cloudflareToken":', `"${draw(LOWER_ALNUM, 40, 201)}"`],
      ['CLOUDFLARE_GLOBAL_API_KEY:', draw(HEX, 37, 202)],
      ['jira_api_token =', `"${draw(LOWER_ALNUM, 24, 203)}"`],
      ['confluent_api_secret:', draw(LOWER_ALNUM, 64, 204)],
      ['DRONE_TOKEN=', draw(LOWER_ALNUM, 32, 205)],
      ['$facebookSecret .=', `"${draw(HEX, 32, 206)}"`],
      ['ARTIFACTORY_IDENTITY_TOKEN=', draw(LOWER_ALNUM, 64, 207)],
      ['linkedin_client_secret:', draw(LOWER_ALNUM, 16, 208)],
      ['LOOKER_CLIENT_SECRET=', draw(LOWER_ALNUM, 24, 209)],
      ['okta_api_token =', `"00${draw(LOWER_ALNUM, 40, 210)}"`],
      [
        'SNYK_TOKEN=',
        `${draw(HEX, 8, 211)}-${draw(HEX, 4, 212)}-${draw(HEX, 4, 213)}-${draw(HEX, 4, 214)}-${draw(HEX, 12, 215)}`,
      ],
      ['SONAR_TOKEN=', draw(HEX, 40, 216)],
      ['SRC_SOURCEGRAPH_TOKEN:', draw(HEX, 40, 217)],
      ['SUMOLOGIC_ACCESS_KEY=', draw(LOWER_ALNUM, 64, 218)],
      ['twilio_auth_token:', draw(HEX, 32, 219)],
      ['airtable_api_key =', `"key${draw(LOWER_ALNUM, 14, 220)}"`],
      ['octopus_api_key =', `"API-${draw(UPPER_ALNUM, 28, 171)}"`],
      ['TELEGRAM_BOT_TOKEN=', `${draw(DIGITS, 6, 221)}:${draw(B64URL, 35, 222)}`],
      ['"telegramToken" =>', `"${draw(DIGITS, 12, 223)}:${draw(B64URL, 35, 224)}"`],
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
      'DRONE_TOKEN = "my-drone-token"',
      `TELEGRAM_BOT_TOKEN=${draw(DIGITS, 4, 225)}:${draw(B64URL, 35, 226)}`,
      `SONAR_TOKEN=${draw(LOWER_ALNUM, 40, 230)}`,
      'airtable_api_key = "my-airtable-key"',
    ]) {
      assert.deepEqual(
        reported(text).filter((r) => r.startsWith('GENERIC_PASSWORD:')),
        [],
        text,
      );
    }
  });

  test("a password key that names a vendor holds the account's password, reported as one", () => {
    for (const key of ['TWITTER_PASSWORD', 'jira_password', 'DATADOG_PASS']) {
      assertFound(`${key}="Tr0ub4dor&3x!"`, 'GENERIC_PASSWORD', 'Tr0ub4dor&3x!');
    }
  });

  test("a vendor's other formats under its key stay found: a value outside one row's format falls to the key rules", () => {
    const mixed = `${draw(ALNUM, 20, 240)}Aa9`;
    assertFound(`cloudflare_api_token: "${mixed}"`, 'GENERIC_PASSWORD', mixed);
    const sonar = `squ_${draw(HEX, 40, 241)}`;
    assertFound(`SONAR_TOKEN=${sonar}`, 'GENERIC_PASSWORD', sonar);
  });
});
