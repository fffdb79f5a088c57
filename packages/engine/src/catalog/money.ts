import { EngineErrors } from '../errors.ts';

const exponents = new Map<string, number>();

/** The number of minor-unit digits of an ISO 4217 currency (JPY 0, USD 2, BHD 3); 2 for codes Intl does not know. */
export function currencyExponent(currency: string): number {
  let exponent = exponents.get(currency);
  if (exponent === undefined) {
    try {
      exponent =
        new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      exponent = 2;
    }
    exponents.set(currency, exponent);
  }
  return exponent;
}

/** Largest accepted amount in minor units: totals stay exact in a 53-bit integer. */
export const MAX_MINOR = 1_000_000_000_000_000;

/** Normalises a currency code (`usd` → `USD`); 400 unless exactly three letters. */
export function parseCurrency(value: string | undefined | null, field = 'currency'): string {
  if (value === undefined || value === null) return 'USD';
  if (!/^[A-Za-z]{3}$/.test(value))
    throw EngineErrors.invalidField(
      `${field} must be exactly 3 letters (ISO 4217), got ${JSON.stringify(value.slice(0, 10))}`,
    );
  return value.toUpperCase();
}

/**
 * Converts an amount given as a JSON number or a decimal string into exact minor units of the currency.
 * Never goes through float arithmetic: the decimal text is split into digits. 400 when negative, not a
 * number, or more precise than the currency allows (19.999 USD).
 */
export function toMinorUnits(value: number | string, currency: string, field = 'price'): number {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw EngineErrors.invalidField(`${field} must be a finite number`);
    text = String(value);
    if (/e/i.test(text)) text = value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
  } else {
    text = value.trim();
  }
  const match = /^(\d{1,16})(?:\.(\d{1,20}))?$/.exec(text);
  if (!match)
    throw EngineErrors.invalidField(
      `${field} must be a number >= 0 (got ${JSON.stringify(String(value).slice(0, 30))})`,
    );
  const exponent = currencyExponent(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    throw EngineErrors.invalidField(`${field} has more decimal places than ${currency} allows (${exponent})`);
  }
  const minor = BigInt(match[1]!) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
  if (minor > BigInt(MAX_MINOR)) throw EngineErrors.invalidField(`${field} is too large`);
  return Number(minor);
}

/** Exact decimal text of an amount in minor units (`1999`, USD → `"19.99"`). */
export function formatMinor(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const negative = minor < 0;
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return negative ? `-${text}` : text;
}
