// Check digits and issuing rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { cardSchemeFits, checkIban, luhnValid, ssnValid } from '../src/detect/checksums.ts';
import { crc32Base62Valid } from '../src/detect/secret-catalogue.ts';
import { isPlaceholderValue } from '../src/detect/text-features.ts';

test('Luhn accepts valid card numbers and rejects a changed digit', () => {
  for (const n of ['4111111111111111', '5500000000000004', '378282246310005', '6011111111111117'])
    assert.ok(luhnValid(n), n);
  for (const n of ['4111111111111112', '5500000000000005', '378282246310006']) assert.equal(luhnValid(n), false, n);
});

test('card schemes fix prefix and length', () => {
  assert.ok(cardSchemeFits('4111111111111111'));
  assert.ok(cardSchemeFits('378282246310005'));
  assert.equal(cardSchemeFits('3782822463100050'), false); // Amex is 15 digits
  assert.equal(cardSchemeFits('1234567812345670'), false); // no scheme starts with 1
  assert.equal(cardSchemeFits('565334523554'), false); // 12-digit Maestro numbers are not accepted
});

test('SSN rules: area 001–899 except 666, group 01–99, serial 0001–9999', () => {
  assert.ok(ssnValid(123, 45, 6789));
  assert.ok(ssnValid(899, 1, 1));
  assert.equal(ssnValid(0, 45, 6789), false);
  assert.equal(ssnValid(666, 45, 6789), false);
  assert.equal(ssnValid(900, 45, 6789), false);
  assert.equal(ssnValid(123, 0, 6789), false);
  assert.equal(ssnValid(123, 45, 0), false);
});

test('IBAN: country length, BBAN format and mod-97', () => {
  assert.equal(checkIban('DE89370400440532013000'), 'valid');
  assert.equal(checkIban('GB82WEST12345698765432'), 'valid');
  assert.equal(checkIban('DE89370400440532013001'), 'checksum');
  assert.equal(checkIban('DE8937040044053201300'), 'invalid'); // one digit short
  assert.equal(checkIban('XX89370400440532013000'), 'invalid');
});

test('placeholders are told from real values', () => {
  for (const v of [
    '********',
    'YOUR_API_KEY',
    'your-api-key-here',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} placeholder under test
    '${OPENAI_API_KEY}',
    'xxxx-xxxx-xxxx',
    '{{ secrets.API_TOKEN }}',
    'REDACTED',
    'changeme',
    '<password>',
    'sk_test_PLACEHOLDER'.slice(8),
  ]) {
    assert.ok(isPlaceholderValue(v), v);
  }
  for (const v of ['zen-sizzle-hidden-39', 'replacement58Replacement', 'Tr0ub4dor&3x', 'q7XkP2vR9mLw4ZtB8nYc']) {
    assert.equal(isPlaceholderValue(v), false, v);
  }
});

test('the GitHub/npm CRC32 check (a table walk over the ASCII body) agrees with zlib on every body', () => {
  const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const encode = (sum: number) => {
    let digits = '';
    for (let k = 0; k < 6; k++) {
      digits = base62[sum % 62] + digits;
      sum = Math.floor(sum / 62);
    }
    return digits;
  };
  let seed = 7;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  for (let n = 0; n < 500; n++) {
    let entropy = '';
    for (let k = 0; k < 30; k++) entropy += base62[next() % 62];
    const sum = crc32(entropy);
    assert.ok(crc32Base62Valid(entropy + encode(sum)), entropy);
    assert.equal(crc32Base62Valid(entropy + encode((sum + 1) % 2 ** 32)), false, entropy);
  }
  // A body outside the table's alphabet is checked through zlib's UTF-8 bytes, and a wrong length never passes.
  const accented = 'é'.repeat(30);
  assert.ok(crc32Base62Valid(accented + encode(crc32(accented))));
  assert.equal(crc32Base62Valid('abc'), false);
  assert.equal(crc32Base62Valid(`${'a'.repeat(30)}00000!`), false);
});

test('redaction markers make a placeholder in any case, with or without other text around them', () => {
  for (const v of ['[REDACTED]', 'token-[redacted]', 'Redacted]', '***REDACTED***', 'abc***redacted']) {
    assert.ok(isPlaceholderValue(v), v);
  }
  // A bracket or a star in a random value does not make it one.
  assert.equal(isPlaceholderValue('q7Xk[P2vR9mLw4ZtB8nYc'), false);
  assert.equal(isPlaceholderValue('q7Xk*P2vR9mLw4Zt]B8nYc'), false);
});
