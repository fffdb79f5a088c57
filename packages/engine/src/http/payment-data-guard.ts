import { createLocalScanner } from '@keel/guard/scanner';
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

// Guard's detection engine (its built-in library: network prefixes and the Luhn check) decides what a card number is.
const detectCards = createLocalScanner({
  allowThreshold: 0.5,
  blockThreshold: 0.8,
  piiMode: 'MASK',
  timeoutMs: 250,
});

/**
 * A card number: the whole value is one card number by guard's detection engine, written as 15–19 digits (spaces or
 * dashes allowed). The shape is checked first, so the detector only sees values that could be one.
 */
export function looksLikeCardNumber(value: string): boolean {
  if (value.length < 15 || value.length > 23) return false;
  if (!/^\d[\d -]+\d$/.test(value)) return false;
  const digits = value.replace(/[ -]/g, '');
  if (digits.length < 15 || digits.length > 19) return false;
  return detectCards(value).detections.some(
    (d) => d.type === 'CREDIT_CARD' && d.start === 0 && d.end === value.length && Number(d.confidence_score) >= 0.6,
  );
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
