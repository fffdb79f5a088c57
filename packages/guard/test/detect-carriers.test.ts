// Secrets as people paste them: vendor formats by their definitions, in the carrier syntaxes of many languages
// and tools, and the stand-ins (encrypted blobs, references, alphabet runs, public ids) that are not secrets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reported } from './fixtures/builtin-detector.ts';

function assertFound(text: string, type: string, value: string): void {
  assert.ok(
    reported(text).includes(`${type}:${value}`),
    `${type} ${value} in ${JSON.stringify(text)}: ${reported(text)}`,
  );
}

const AWS_BEARER = 'ABIAQ7WZ3KX2MNV5RT6Y';
const AWS_CONTEXT = 'ACCAJ4HXT2W7QZP3LM5N';
const STRIPE_PROD = 'sk_prod_4fT9qLx2Vb7Nc1Rw8Hy3Kd6Ze0Mp5Gs';
const SLACK_CONFIG = `xoxe.xoxp-1-${'Mi4xLTc3NzE4OTk2MzItODg0MTIzNTU2'.repeat(4)}`;
const JWT_SHAPE = 'eyQ7nV2xLk9PmR4tW8sZa.eyB3hG6jN1cX5vM0qT7yU2.fK8dL3pS9wE4rA6zH1n';
const TOKEN = 'Vq7rT2nW9xKp4LmZ8bCy3HsJ';

describe('vendor formats by definition', () => {
  test('AWS access key ids with every documented prefix (AKIA, ASIA, ABIA, ACCA)', () => {
    assertFound(`aws_key = ${AWS_BEARER}`, 'AWS_ACCESS_KEY', AWS_BEARER);
    assertFound(`"AwsKeyId": "${AWS_CONTEXT}"`, 'AWS_ACCESS_KEY', AWS_CONTEXT);
  });

  test('Stripe production keys (sk_prod_, rk_prod_) beside live and test ones', () => {
    assertFound(`STRIPE=${STRIPE_PROD}`, 'STRIPE_KEY', STRIPE_PROD);
    assertFound(`restricted: r${STRIPE_PROD.slice(1)}`, 'STRIPE_KEY', `r${STRIPE_PROD.slice(1)}`);
  });

  test('Slack configuration tokens (xoxe.xoxp-…) are one SLACK_TOKEN; digit-less or short stand-ins are not tokens', () => {
    assertFound(`slack_config_token: ${SLACK_CONFIG}`, 'SLACK_TOKEN', SLACK_CONFIG);
    for (const fake of [
      'xoxb-demo-token-value',
      'xoxp-1-PASTEYOURTOKENHERE',
      'xoxb-2345-abcd12',
      'see xoxo-party-2 pics',
    ]) {
      assert.deepEqual(reported(fake), [], fake);
    }
    assert.deepEqual(reported('"t": "xoxp-482913570123-558201937466-601928374650-####"'), []);
  });

  test('JWT-shaped tokens whose header does not decode are still JWTs by structure', () => {
    assertFound(`jwt = "${JWT_SHAPE}"`, 'JWT', JWT_SHAPE);
    assert.deepEqual(reported('eyes.eyebrows.eyelids'), []);
  });
});

describe('carrier syntaxes', () => {
  const cases: [string, string][] = [
    [`API_TOKEN ?= "${TOKEN}"`, TOKEN],
    [`API_TOKEN ::= "${TOKEN}"`, TOKEN],
    [`API_TOKEN :::= "${TOKEN}"`, TOKEN],
    [`$authToken .= "${TOKEN}";`, TOKEN],
    [`API_TOKEN += ${TOKEN}`, TOKEN],
    [`var authToken string = "${TOKEN}"`, TOKEN],
    [`System.setProperty("SERVICE_SECRET", "${TOKEN}");`, TOKEN],
    [`os.getenv("api_token", "${TOKEN}")`, TOKEN],
    [`<serviceToken>\n    ${TOKEN}\n</serviceToken>`, TOKEN],
    [`{"env": "SERVICE_TOKEN=${TOKEN}\\nDEBUG=false"}`, TOKEN],
    [`mySecretValue=${TOKEN}`, TOKEN],
    [`deploy_api_token_2 = "${TOKEN}"`, TOKEN],
    // A secret word inside a longer key name, in any case: secret, apikey, api_key, apitoken, accesstoken, access_token.
    [`PRIMARY_APIKEY_X = "${TOKEN}"`, TOKEN],
    [`svc_Api_Key_v2: ${TOKEN}`, TOKEN],
    [`githubAccessTokenOld=${TOKEN}`, TOKEN],
    [`legacy_access_token_b = "${TOKEN}"`, TOKEN],
    [`ciApiTokenBackup = "${TOKEN}"`, TOKEN],
    [`creds = ${TOKEN}`, TOKEN],
    [
      'curl -H "Authorization: Bearer 9f3b2c7d1e8a4f6b0c5d2e7f1a3b4c8d" https://api.example.net',
      '9f3b2c7d1e8a4f6b0c5d2e7f1a3b4c8d',
    ],
    [
      "curl --header 'X-Api-Key: 7c1e4b2a-9d3f-4e8b-a6c5-2f0d1b7e3a94' https://api.example.net",
      '7c1e4b2a-9d3f-4e8b-a6c5-2f0d1b7e3a94',
    ],
    ['curl -H "Authorization: Api-Token 5e2a9c7b3d1f8e4a6c0b" -X PUT https://x.example', '5e2a9c7b3d1f8e4a6c0b'],
    ['"client_secret": "b7e4c1a9f3d2e8b6a0c5d7f1e3b9a4c2d8f6e0a1"', 'b7e4c1a9f3d2e8b6a0c5d7f1e3b9a4c2d8f6e0a1'],
  ];
  for (const [text, value] of cases) {
    test(`a secret in ${JSON.stringify(text.slice(0, 48))}`, () => {
      const found = reported(text).filter((r) => r.endsWith(`:${value}`));
      assert.equal(found.length, 1, `${JSON.stringify(text)}: ${reported(text)}`);
    });
  }

  test('an escaped line break ends the value (the next line is not swallowed)', () => {
    const found = reported(`{"config.ini": "DB_TOKEN=${TOKEN}\\nRETRIES=3"}`);
    assert.deepEqual(found, [`GENERIC_PASSWORD:${TOKEN}`]);
  });
});

describe('stand-ins that are not secrets', () => {
  const clean = [
    'db-password: ENC[AES256_GCM,data:Zm9vYmFy,iv:c2VjcmV0aXY=,tag:dGFnMTIz,type:str]',
    'api_token: vault:secret/data/payments#api_token',
    'service_secret = "svc_8Hq2..[REDACTED]"',
    'secret_key => "sk_abcdefghijklmnopqrstuvwx42"',
    'publicToken = "Gx7pQ2rLm9Vt4Wz8Kb3Nc6Hd"',
    '<input type="hidden" name="authenticity_token" value="Jd8s-Kq2_Lm4Np6Rt8Vx0Zb2Dc4Fg6Hj8Kl0Mn2Pq4">',
    'notes = "Maven - io.jsonwebtoken:jjwt-api-0.12.6"',
    'schemaKey = "ORDER_Schema_7_12"',
    '{ "name": "idempotency-key", "value": "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b" }',
  ];
  for (const text of clean) {
    test(`nothing in ${JSON.stringify(text.slice(0, 56))}`, () => assert.deepEqual(reported(text), []));
  }
});

describe('cards and addresses by definition', () => {
  test('every card on a line is reported, whatever its grouping', () => {
    const line = '5425233430109903 5425-2334-3010-9903 5425 2334 3010 9903';
    assert.deepEqual(reported(line), [
      'CREDIT_CARD:5425233430109903',
      'CREDIT_CARD:5425-2334-3010-9903',
      'CREDIT_CARD:5425 2334 3010 9903',
    ]);
  });

  test('UATP cards (1…, 15 digits) count only with a valid check digit', () => {
    assertFound('travel card 135792468013578', 'CREDIT_CARD', '135792468013578');
    assert.deepEqual(reported('ticket 135792468013579'), []);
  });

  test('IP addresses keep their prefix length and zone; :: alone is the unspecified address', () => {
    assertFound('allow 10.20.0.0/16 only', 'IP_ADDRESS', '10.20.0.0/16');
    assertFound('route fd12:3456::1%wlan0/64 up', 'IP_ADDRESS', 'fd12:3456::1%wlan0/64');
    assertFound('bind= :: port 80', 'IP_ADDRESS', '::');
    assertFound('listen 0.0.0.0 now', 'IP_ADDRESS', '0.0.0.0');
    assertFound('gw 172.16.4.1@wlan1', 'IP_ADDRESS', '172.16.4.1');
    assert.deepEqual(reported('std::vector<int> and a:::b'), []);
  });
});

describe('URL', () => {
  test('scheme URLs, www. names and bare hosts under common top-level domains', () => {
    assertFound('docs at https://docs.example.org/guide/start.', 'URL', 'https://docs.example.org/guide/start');
    assertFound('open www.example-shop.com now', 'URL', 'www.example-shop.com');
    assertFound('our sites: example-shop.com and tienda.com.mx', 'URL', 'tienda.com.mx');
    assertFound('db at postgres://db.internal.example:5432/app', 'URL', 'postgres://db.internal.example:5432/app');
  });

  test('ids and versions in a path are not part of the URL span; file names and hostless schemes are not URLs', () => {
    assertFound('see https://img.example.net/badge/version-4.2.1-green', 'URL', 'https://img.example.net/badge/');
    assert.deepEqual(reported('open report.pdf, config.json and notes.txt'), []);
    assert.deepEqual(reported('http://intranet and www.intranet'), []);
  });

  test('a bare host needs a listed top-level domain (the longest, info, included); www. takes any; numbers are no hosts', () => {
    assertFound('wiki at guidebook.info today', 'URL', 'guidebook.info');
    assertFound('visit www.natural-history.museum soon', 'URL', 'www.natural-history.museum');
    assert.deepEqual(reported('visit natural-history.museum soon'), []);
    assert.deepEqual(reported('paid 954.15 for build 4.2.1 on jane.doe'), []);
  });

  test('a URL carrying credentials yields to them: the secret keeps its type and span', () => {
    const token = 'ghp_Zk4mQ8vN2xR7tL1pW9sB3cY6hD0fJ5gK8aE2';
    assert.deepEqual(reported(`git remote add origin https://${token}@github.com/acme/app.git`), [
      `GITHUB_TOKEN:${token}`,
    ]);
    assert.ok(reported('mysql://admin:Wq8!zR2v@db.example.com/shop').includes('GENERIC_PASSWORD:Wq8!zR2v'));
  });
});

describe('national identifiers and hardware addresses by definition', () => {
  const found: [string, string, string][] = [
    ['Aadhaar no. 7391 4058 2608', 'IN_AADHAAR', '7391 4058 2608'],
    ['mi DNI es 48203917B', 'ES_NIF', '48203917B'],
    ['NIE: Y5830471P', 'ES_NIF', 'Y5830471P'],
    ['codice fiscale BNCLRA92E41F205S', 'IT_FISCAL_CODE', 'BNCLRA92E41F205S'],
    ['NRIC T0482915D', 'SG_NRIC_FIN', 'T0482915D'],
    ['henkilötunnus 240387-417T', 'FI_PERSONAL_ID', '240387-417T'],
    ['T.C. kimlik no 38291745010', 'TR_NATIONAL_ID', '38291745010'],
    ['national insurance JH482617B', 'UK_NINO', 'JH482617B'],
    ['PAN card ABCPE1234F', 'IN_PAN', 'ABCPE1234F'],
    ['wifi adapter 3c:22:fb:9a:10:4e', 'MAC_ADDRESS', '3c:22:fb:9a:10:4e'],
    ['switch port 3c22.fb9a.104e', 'MAC_ADDRESS', '3c22.fb9a.104e'],
    // Dotted groups that start with a hex letter look like a plain word followed by a full stop.
    ['switch port ab22.fb9a.104e', 'MAC_ADDRESS', 'ab22.fb9a.104e'],
    ['switch port Dc22.fb9a.104e', 'MAC_ADDRESS', 'Dc22.fb9a.104e'],
  ];
  for (const [text, type, value] of found)
    test(`${type} in ${JSON.stringify(text)}`, () => assertFound(text, type, value));

  test('wrong check characters, unnamed look-alikes and decimal colon runs are not identifiers', () => {
    for (const text of [
      'DNI 48203917C',
      'codice fiscale BNCLRA92E41F205T',
      'NRIC T0482915E',
      'henkilötunnus 240387-417U',
      'tracking 7391 4058 2608',
      'T.C. kimlik no 38291745011',
      'QQ123456C is the sample number',
      'elapsed 12:30:45:10:20:30',
      'SKU ABCDE12345',
    ]) {
      assert.deepEqual(reported(text), [], text);
    }
  });
});

describe('vendor formats named by the key', () => {
  test('a telegram key with a value outside the bot-token format is not a token; one inside it is', () => {
    assert.deepEqual(reported('telegram_bot_token = "123:short-and-wrong_value_here_xyz"'), []);
    const token = '5938201746:AQz7Lm2Kp9Vb4Nc8Xw1Ry6Tu3Ho0Jd5GfEe';
    assert.ok(reported(`telegram_bot_token = "${token}"`).some((r) => r.endsWith(`:${token}`)));
  });
});

describe('US SSN written loosely', () => {
  test('dotted (3.2.4) and 3-6 forms are SSNs when the parts are valid; invalid parts are not', () => {
    assertFound('ssn 512.48.3307 on file', 'US_SSN', '512.48.3307');
    assertFound('ssn 512-483307 on file', 'US_SSN', '512-483307');
    assert.deepEqual(reported('ref 000.48.3307 and 512-003307x'), []);
  });

  test('numbers side by side (blanks between, dashes inside) are read one by one', () => {
    assertFound('ssn 512-483307 512-48-3307', 'US_SSN', '512-483307');
    assertFound('ssn 512-483307 512-48-3307', 'US_SSN', '512-48-3307');
  });
});
