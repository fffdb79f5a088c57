import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPaymentData, looksLikeCardNumber } from '../src/http/payment-data-guard.ts';

test("card numbers are recognised by guard's detection engine (network prefix and Luhn), whole values only", () => {
  for (const card of [
    '4242424242424242',
    '4111 1111 1111 1111',
    '5555-5555-5555-4444',
    '378282246310005',
    '6011111111111117',
  ])
    assert.equal(looksLikeCardNumber(card), true, card);
  for (const other of [
    '4242424242424241', // Luhn fails
    '0000000000000000', // no network
    '36227206271667', // 14 digits: shorter than the rule's 15
    'card 4242424242424242', // inside text: only whole values count
    '424242424242424242424242', // too long
  ])
    assert.equal(looksLikeCardNumber(other), false, other);
});

test('a card number under an identifier key is an identifier; a card field is refused whatever its value', () => {
  assert.equal(findPaymentData({ sku: '4242424242424242', gtin: '4242424242424242' }), undefined);
  assert.equal(findPaymentData({ note: { text: '4242424242424242' } }), 'body/note/text');
  assert.equal(findPaymentData({ payment: { cvv: '123' } }), 'body/payment/cvv');
});
