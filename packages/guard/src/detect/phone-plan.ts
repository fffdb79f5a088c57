// Phone number plausibility from libphonenumber-js metadata, precompiled once: parsing every digit run with
// libphonenumber's full parser costs 10–30 µs, far too slow for a scanner that must reach tens of MB/s.
import metadata from 'libphonenumber-js/min/metadata';

interface NumberingPlan {
  lengths: ReadonlySet<number>;
  pattern: RegExp;
}

interface MetadataShape {
  country_calling_codes: Record<string, string[]>;
  countries: Record<string, unknown[]>;
}

const META = metadata as unknown as MetadataShape;

function planOf(country: string): NumberingPlan | undefined {
  const row = META.countries[country];
  if (!row) return undefined;
  const pattern = row[2];
  const lengths = row[3];
  if (typeof pattern !== 'string' || !Array.isArray(lengths)) return undefined;
  // libphonenumber's national-number patterns are written for linear-time engines (no backreferences).
  return { pattern: new RegExp(`^(?:${pattern})$`), lengths: new Set(lengths as number[]) };
}

const PLANS_BY_CALLING_CODE = new Map<string, NumberingPlan[]>();
for (const [code, countries] of Object.entries(META.country_calling_codes)) {
  const plans = countries.map(planOf).filter((p): p is NumberingPlan => p !== undefined);
  if (plans.length > 0) PLANS_BY_CALLING_CODE.set(code, plans);
}

/** Countries whose national format starts with the trunk prefix 0 (and Italy, whose numbers keep the 0). */
const TRUNK_ZERO_COUNTRIES = [
  'GB',
  'DE',
  'FR',
  'NL',
  'AU',
  'BE',
  'AT',
  'CH',
  'IE',
  'SE',
  'JP',
  'KR',
  'TW',
  'IN',
  'BR',
  'ZA',
  'NZ',
];
const TRUNK_PLANS = TRUNK_ZERO_COUNTRIES.map(planOf).filter((p): p is NumberingPlan => p !== undefined);
const ITALY = planOf('IT');

function fits(plan: NumberingPlan, national: string): boolean {
  return plan.lengths.has(national.length) && plan.pattern.test(national);
}

/**
 * Checks an international number given as its digits after `+` (or `00`): true when some calling code prefix
 * leaves a national number whose length and leading digits fit that code's numbering plan. A `(0)` trunk digit
 * must already be removed.
 */
export function isPlausibleInternational(digits: string): boolean {
  for (let len = 1; len <= 3 && len < digits.length; len++) {
    const plans = PLANS_BY_CALLING_CODE.get(digits.slice(0, len));
    if (!plans) continue;
    const national = digits.slice(len);
    for (const plan of plans) if (fits(plan, national)) return true;
    // libphonenumber allows a calling code only one way; a longer prefix is never another code's number.
    return false;
  }
  return false;
}

/**
 * Like isPlausibleInternational, graded: 2 when the national number fits a numbering plan's pattern, 1 when only
 * its length fits the calling code, 0 when the calling code is unknown or the length is impossible.
 */
export function internationalVerdict(digits: string): number {
  for (let len = 1; len <= 3 && len < digits.length; len++) {
    const plans = PLANS_BY_CALLING_CODE.get(digits.slice(0, len));
    if (!plans) continue;
    const national = digits.slice(len);
    let lengthFits = false;
    for (const plan of plans) {
      if (!plan.lengths.has(national.length)) continue;
      if (plan.pattern.test(national)) return 2;
      lengthFits = true;
    }
    return lengthFits ? 1 : 0;
  }
  return 0;
}

/** True for a North American (NANP) number: 10 digits, or 11 with the leading 1, with valid area and exchange. */
export function isPlausibleNanp(digits: string): boolean {
  let d = digits;
  if (d.length === 11 && d.charCodeAt(0) === 49) d = d.slice(1);
  if (d.length !== 10) return false;
  const area = d.charCodeAt(0);
  const exchange = d.charCodeAt(3);
  // Area code and exchange start with 2–9 (unassigned area codes are accepted: numbering plans change).
  return area >= 50 && exchange >= 50;
}

const CHINA = planOf('CN');

/** True for a Chinese mobile number (11 digits from 13 to 19) that fits China's numbering plan. */
export function isPlausibleChinaMobile(digits: string): boolean {
  if (digits.length !== 11 || digits.charCodeAt(0) !== 49 || digits.charCodeAt(1) < 51) return false;
  return CHINA !== undefined && fits(CHINA, digits);
}

/** True for a national number written with the trunk prefix 0 that fits one of the common trunk-0 numbering plans. */
export function isPlausibleTrunkNational(digits: string): boolean {
  if (digits.charCodeAt(0) !== 48 || digits.charCodeAt(1) === 48) return false;
  const national = digits.slice(1);
  for (const plan of TRUNK_PLANS) if (fits(plan, national)) return true;
  return ITALY !== undefined && fits(ITALY, digits);
}
