// National, tax, health and bank identifiers and crypto wallet addresses, each by its definition: structure, check
// digit(s), date part, naming words in the country's language. Values were computed from the published algorithms
// for these tests (random bodies, check digits derived), except the two EIP-55 vectors, which come from EIP-55.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reported, scoreOf, seededDetector } from './fixtures/builtin-detector.ts';

function assertFound(text: string, type: string, value: string): void {
  assert.ok(
    reported(text).includes(`${type}:${value}`),
    `${type} ${value} in ${JSON.stringify(text)}: ${reported(text)}`,
  );
}

/** The same digits with the last one changed: the check digit no longer fits. */
function wrongCheck(v: string): string {
  const last = v.charCodeAt(v.length - 1) - 48;
  return `${v.slice(0, -1)}${(last + 1) % 10}`;
}

const TFN = '607494114';
const ABN = '53159718007';
const ACN = '203105024';
const MEDICARE = '5186641211';
const RRN = '850714-1216820';
const THAI = '5-9520-66965-03-3';
const NPI = '1188523868';
const STEUER_ID = '40134459623';
const ABA = '023412772';
const P2PKH = '1K2fw2qs9dTDvW4d2X1JW6ugzsEu82AfzJ';
const P2SH = '3KigraLJhXmc1fm49cftvjGd9PXcc8itjv';
const BECH32 = 'bc1qchpjmv66uqle3sf4wkknxzkq3qa95qyek8h2yx';
const BECH32M = 'bc1p0k9uvaxvpytllmpdvhg8qa6x0t80sp8ljf7v2nhgct24ull4ea0qrj885u';
const ETH = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('identifiers by definition', () => {
  const found: [string, string, string][] = [
    [`my TFN is ${TFN}`, 'AU_TFN', TFN],
    [
      `tax file number: ${TFN.slice(0, 3)} ${TFN.slice(3, 6)} ${TFN.slice(6)}`,
      'AU_TFN',
      `${TFN.slice(0, 3)} ${TFN.slice(3, 6)} ${TFN.slice(6)}`,
    ],
    [`ABN ${ABN}`, 'AU_ABN', ABN],
    [`ACN: ${ACN}`, 'AU_ACN', ACN],
    [`Medicare card ${MEDICARE}`, 'AU_MEDICARE', MEDICARE],
    [`applicant ${RRN} (seoul)`, 'KR_RRN', RRN],
    [`주민등록번호 ${RRN.replace('-', '')}`, 'KR_RRN', RRN.replace('-', '')],
    [`ผู้ถือบัตร ${THAI}`, 'TH_TNIN', THAI],
    [`เลขประจำตัวประชาชน ${THAI.replaceAll('-', '')}`, 'TH_TNIN', THAI.replaceAll('-', '')],
    ['ITIN 912-78-3456 on the W-7', 'US_ITIN', '912-78-3456'],
    ['taxpayer id 912783456', 'US_ITIN', '912783456'],
    ['passport number 512384907', 'US_PASSPORT', '512384907'],
    ['passport no. A51238490', 'US_PASSPORT', 'A51238490'],
    ['member MBI 3QW7-HY2-NK48', 'US_MBI', '3QW7-HY2-NK48'],
    ["driver's license D4820137", 'US_DRIVER_LICENSE', 'D4820137'],
    ['DL# 48201377', 'US_DRIVER_LICENSE', '48201377'],
    ['mbi=3QW7HY2NK48', 'US_MBI', '3QW7HY2NK48'],
    [`Steuer-ID ${STEUER_ID}`, 'DE_TAX_ID', STEUER_ID],
    [`Steueridentifikationsnummer: ${STEUER_ID}`, 'DE_TAX_ID', STEUER_ID],
    [`send to ${P2PKH}`, 'CRYPTO_WALLET', P2PKH],
    [`btc: ${P2SH}`, 'CRYPTO_WALLET', P2SH],
    [`wallet ${BECH32}`, 'CRYPTO_WALLET', BECH32],
    [`taproot ${BECH32M}`, 'CRYPTO_WALLET', BECH32M],
    [`eth ${ETH}`, 'CRYPTO_WALLET', ETH],
    [`routing number ${ABA}`, 'ABA_ROUTING_NUMBER', ABA],
    [`NPI ${NPI}`, 'US_NPI', NPI],
    ['bank account 004418207731', 'US_BANK_NUMBER', '004418207731'],
  ];
  for (const [text, type, value] of found)
    test(`${type} in ${JSON.stringify(text)}`, () => assertFound(text, type, value));

  test('a wrong check digit, a missing naming word or an impossible date is not that identifier', () => {
    for (const [text, type] of [
      [`my TFN is ${wrongCheck(TFN)}`, 'AU_TFN'],
      [`order ${TFN}`, 'AU_TFN'],
      [`ABN ${wrongCheck(ABN)}`, 'AU_ABN'],
      [`ACN: ${wrongCheck(ACN)}`, 'AU_ACN'],
      [`Medicare card ${wrongCheck(MEDICARE.slice(0, 9))}${MEDICARE[9]}`, 'AU_MEDICARE'],
      [`applicant ${wrongCheck(RRN)}`, 'KR_RRN'],
      ['applicant 851314-1216820', 'KR_RRN'],
      [`ผู้ถือบัตร ${wrongCheck(THAI)}`, 'TH_TNIN'],
      ['ITIN 912-93-3456', 'US_ITIN'],
      ['ref 512384907', 'US_PASSPORT'],
      ['MBI 3SW7-HY2-NK48', 'US_MBI'],
      [`Steuer-ID ${wrongCheck(STEUER_ID)}`, 'DE_TAX_ID'],
      ['Steuer-ID 41134459623', 'DE_TAX_ID'],
      [`NPI ${wrongCheck(NPI)}`, 'US_NPI'],
      [`routing ${wrongCheck(ABA)}`, 'ABA_ROUTING_NUMBER'],
      [`send to ${P2PKH.slice(0, -1)}K`, 'CRYPTO_WALLET'],
      [`wallet ${BECH32.slice(0, -1)}z`, 'CRYPTO_WALLET'],
      [`eth ${ETH.replace('aA', 'Aa')}`, 'CRYPTO_WALLET'],
      ['bank account 4111111111111111', 'US_BANK_NUMBER'],
      ['license key 48201377', 'US_DRIVER_LICENSE'],
      ['order D4820137 shipped', 'US_DRIVER_LICENSE'],
    ]) {
      assert.deepEqual(
        reported(text).filter((r) => r.startsWith(`${type}:`)),
        [],
        text,
      );
    }
  });

  test('every identifier on one line is reported', () => {
    const line = `TFN ${TFN}, ABN ${ABN}, ITIN 912-78-3456, RRN ${RRN}, Thai ${THAI}, btc ${P2PKH} ${BECH32}, eth ${ETH}`;
    const found = reported(line);
    for (const v of [TFN, ABN, '912-78-3456', RRN, THAI, P2PKH, BECH32, ETH])
      assert.ok(
        found.some((r) => r.endsWith(`:${v}`)),
        `${v}: ${found}`,
      );
  });

  test('a check digit with a naming word reaches the block band; a naming word alone (no check digit) masks', () => {
    assert.ok(scoreOf(`my TFN is ${TFN}`, TFN) >= 0.85);
    assert.ok(scoreOf(`Steuer-ID ${STEUER_ID}`, STEUER_ID) >= 0.85);
    assert.ok(scoreOf(`wallet ${BECH32}`, BECH32) >= 0.85);
    const passport = scoreOf('passport number 512384907', '512384907');
    assert.ok(passport >= 0.3 && passport < 0.85, String(passport));
    const lower = ETH.toLowerCase();
    const eth = scoreOf(`eth ${lower}`, lower);
    assert.ok(eth >= 0.3 && eth < scoreOf(`eth ${ETH}`, ETH), String(eth));
  });

  test('routing, NPI and bank account numbers are seeded inactive: a fresh install does not report them', () => {
    for (const text of [`routing number ${ABA}`, `NPI ${NPI}`, 'bank account 004418207731']) {
      const candidates = seededDetector.scan(text);
      assert.deepEqual(candidates, [], text);
    }
  });
});
