import type { FastifyInstance } from 'fastify';
import { EngineErrors } from '../errors.ts';

/** Field names (lower-cased, separators removed) that carry card data or payment authentication secrets. */
const FORBIDDEN_KEYS = new Set([
  'cardnumber',
  'cardno',
  'cardnum',
  'ccnumber',
  'ccnum',
  'creditcard',
  'creditcardnumber',
  'debitcard',
  'debitcardnumber',
  'pan',
  'primaryaccountnumber',
  'accountnumberpan',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'cvn',
  'csc',
  'securitycode',
  'cardsecuritycode',
  'cardverificationvalue',
  'cardverificationcode',
  'cardcode',
  'verificationcode',
  'pin',
  'pinblock',
  'cardpin',
  'trackdata',
  'track1',
  'track2',
  'magstripe',
  'cavv',
  'authenticationvalue',
  'threedssecure',
  '3dssecure',
  'otp',
  'onetimecode',
  'onetimepassword',
  'paymenttoken',
  'cardtoken',
  'networktoken',
  'expirydatecvv',
  'cardexpiry',
  'expirationdate',
  'cardexpirationdate',
  'expmonth',
  'expyear',
]);

/** Keys whose values are identifiers: long digit strings there are SKUs, barcodes and ids, not card numbers. */
const IDENTIFIER_KEY = /(^|[^a-z])(sku|id|gtin|ean|upc|isbn|barcode)$|Id$|^catalogId$|^externalId$/i;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A card number: 15–19 digits (spaces or dashes allowed), a card-network prefix, and a valid Luhn check digit. */
export function looksLikeCardNumber(value: string): boolean {
  if (value.length < 15 || value.length > 23) return false;
  if (!/^\d[\d -]+\d$/.test(value)) return false;
  const digits = value.replace(/[ -]/g, '');
  if (digits.length < 15 || digits.length > 19) return false;
  if (!/^(4|5[1-5]|2[2-7]|3[47]|6011|64[4-9]|65|62|35|30[0-5]|36|38)/.test(digits)) return false;
  return luhn(digits);
}

/** The JSON path of the first card field or card number in `value`, or undefined (depth- and size-bounded walk). */
export function findPaymentData(value: unknown): string | undefined {
  let visited = 0;
  const walk = (node: unknown, path: string, key: string, depth: number): string | undefined => {
    if (++visited > 100_000 || depth > 64) return undefined;
    if (typeof node === 'string') return !IDENTIFIER_KEY.test(key) && looksLikeCardNumber(node) ? path : undefined;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const found = walk(node[i], `${path}/${i}`, key, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    if (node && typeof node === 'object') {
      for (const [name, child] of Object.entries(node)) {
        const normalized = name.toLowerCase().replace(/[^a-z0-9]/g, '');
        if (FORBIDDEN_KEYS.has(normalized) && child !== null && child !== '') return `${path}/${name}`;
        const found = walk(child, `${path}/${name}`, name, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(value, 'body', '', 0);
}

/**
 * Rejects (400) any request whose JSON body carries card numbers, verification codes or payment-authentication
 * fields, wherever they appear — before validation strips unknown fields, and before anything is stored or logged.
 */
export function installPaymentDataGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null || typeof request.body !== 'object') return;
    const found = findPaymentData(request.body);
    if (found) throw EngineErrors.paymentData(found.length > 200 ? `${found.slice(0, 200)}…` : found);
  });
}
