// Chat's sensitive-data rules on their own: card verification codes in many phrasings, and ordinary numbers
// near the same words that must pass.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSensitiveDataScanner } from '../src/runtime/sensitive-data.ts';

const scanner = createSensitiveDataScanner();

const CARD_CODES = [
  'The security code CVV on the back of my card is 737',
  'the cvv is 123',
  'CVV: 4821',
  'cvv=519',
  'CVC2 904',
  'my card verification value is 318 if you need it',
  'Card security code (the little one) -> 662',
  'here are the details, expiry 11/28 and cvc 047',
  'Oh and 737 is my CVV',
  'use 552 as the cvc please',
  '881 (cvv)',
  'the 3 digits on the back are 409',
  'The three-digit code is 276.',
  'the numbers on the back of my card read 5 1 2',
  'My Amex has a 4-digit security code: 7391',
  'security code for the visa, which I keep forgetting, is 640',
  'I think the CID on my Amex card is 2284',
  'el código de seguridad es 415',
  'o código de segurança do cartão é 903',
  'le cryptogramme visuel est 268',
  'Die Kartenprüfnummer lautet 731',
  'il codice di sicurezza è 119',
  'mijn beveiligingscode is 845',
  'Card ending 4242, security code 318',
];

const ORDINARY = [
  'What is a CVV and where do I find it?',
  'The CVV field accepts 3 or 4 digits.',
  'Our security code review found 12 issues in 2024.',
  'The security code audit took 120 minutes.',
  'security code scanning started in 2023',
  'My order 1234 asks for a CVV, is that normal?',
  'I never share my CVV. Order 5821 shipped yesterday.',
  'The card verification step failed 3 times, error 402.',
  'Please check the back of my card order #5567 status',
  'The CVV on my card has worn off; the total was $129.',
  'I paid 899 euros with the card whose cvv I entered on the website',
  'Use promo code SAVE20 for 15% off 3 items',
  'My flight is at 10:45 and the gate is B12.',
  'The security code version v2.0.1 shipped on 12/03',
  'How many digits does a card security code have? Visa 3, Amex 4.',
];

describe('chat sensitive data: card verification codes', () => {
  test('a verification code is refused in every phrasing (either order, other languages, spaced digits)', () => {
    for (const text of CARD_CODES) {
      assert.equal(scanner.scanText(text, 'conversation'), 'card_verification_code', text);
      assert.equal(scanner.scanText(text, 'stored'), 'card_verification_code', text);
    }
  });

  test('ordinary numbers near the same words pass (counts, years, times, order numbers, prices)', () => {
    for (const text of ORDINARY) assert.equal(scanner.scanText(text, 'conversation'), undefined, text);
  });

  test('card numbers and payment secrets still win over the code rule', () => {
    assert.equal(scanner.scanText('card 4111 1111 1111 1111 cvv 123', 'conversation'), 'card_number');
    assert.equal(scanner.scanText('the one-time code is 482913', 'conversation'), 'payment_secret');
  });
});
