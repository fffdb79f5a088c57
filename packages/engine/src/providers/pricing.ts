import { RuntimeErrors } from '../runtime/runtime-errors.ts';

const DECIMAL = /^\d{1,9}(\.\d{1,6})?$/;

/**
 * A price sent as a JSON number, kept as exact decimal text: at most 6 decimals (more is a 400, so float
 * artefacts such as 0.30000000000000004 are refused rather than rounded), at most 1,000,000.
 */
export function priceText(value: number | undefined, field: string): string {
  if (value === undefined) return '0';
  const text = String(value);
  if (!Number.isFinite(value) || value < 0 || value > 1_000_000 || !DECIMAL.test(text))
    throw RuntimeErrors.invalid(`${field} must be a number from 0 to 1000000 with at most 6 decimals`);
  return text;
}

/** Decimal text with ≤ 6 decimals → integer micro-units. */
export function toMicros(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** Micro-units → the shortest exact decimal text. */
function fromUnits(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** Cost of a model call in pico-units of the provider currency (exact: per-token price = price_per_million micros). */
export function costPicos(
  prices: { input: string; output: string; image: string },
  usage: { inputTokens: number; outputTokens: number; images?: number },
): bigint {
  return (
    BigInt(usage.inputTokens) * toMicros(prices.input) +
    BigInt(usage.outputTokens) * toMicros(prices.output) +
    BigInt(usage.images ?? 0) * toMicros(prices.image) * 1_000_000n
  );
}

/** Pico-units → decimal text (up to 12 decimals, trailing zeros trimmed). */
export function picosText(picos: bigint): string {
  return fromUnits(picos, 12);
}

/** An amount in currency units (a JSON number with ≤ 6 decimals) → pico-units. */
export function amountPicos(value: number): bigint {
  return toMicros(priceText(value, 'amount')) * 1_000_000n;
}

/** Decimal text → a JSON number for responses (prices are stored exactly; they fit a double's precision). */
export function priceNumber(text: string): number {
  return Number(text);
}
