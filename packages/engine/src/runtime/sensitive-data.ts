import { createLocalScanner } from '@keel/guard/scanner';
import { RuntimeErrors } from './runtime-errors.ts';

/** What chat never accepts, by category (the error names the category and the JSON path, never the value). */
export type SensitiveCategory =
  | 'card_number'
  | 'card_verification_code'
  | 'payment_secret'
  | 'raw_token'
  | 'password'
  | 'full_address';

/** `conversation`: chat input (every category); `stored`: free text kept by the runtime (addresses allowed, e.g. store locations). */
export type ScanProfile = 'conversation' | 'stored';

/** Guard's detector types and the category each one means here (others, e.g. e-mail, phone, are allowed). */
const GUARD_TYPES: Record<string, SensitiveCategory> = {
  CREDIT_CARD: 'card_number',
  JWT: 'raw_token',
  AWS_ACCESS_KEY: 'raw_token',
  GITHUB_TOKEN: 'raw_token',
  OPENAI_API_KEY: 'raw_token',
  ANTHROPIC_API_KEY: 'raw_token',
  SLACK_TOKEN: 'raw_token',
  GOOGLE_API_KEY: 'raw_token',
  PRIVATE_KEY: 'raw_token',
  STRIPE_KEY: 'payment_secret',
  GENERIC_PASSWORD: 'password',
};

// Rules guard's library does not cover, written for linear time (bounded gaps, no nested quantifiers).
const RULES: { category: SensitiveCategory; pattern: RegExp; profiles: ScanProfile[] }[] = [
  {
    category: 'payment_secret',
    pattern:
      /\b(?:otp|one[- ]?time\s+(?:pass(?:word|code)?|code|pin)|3-?d\s?secure(?:\s+code)?|verification\s+code|sms\s+code|auth(?:entication|orization)?\s+code|card\s+pin|pin(?:\s+(?:code|number))?)\b[^0-9\n]{0,20}\d{4,8}\b/i,
    profiles: ['conversation', 'stored'],
  },
  {
    category: 'payment_secret',
    pattern: /\b(?:tok|pm|card|src|seti|pi)_[A-Za-z0-9]{14,}\b|\bwhsec_[A-Za-z0-9+/=]{20,}/,
    profiles: ['conversation', 'stored'],
  },
  {
    category: 'raw_token',
    pattern: /\b(?:esk|eak|mk|srt)_[A-Za-z0-9]{20,}\b|\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*/,
    profiles: ['conversation', 'stored'],
  },
  {
    category: 'password',
    pattern:
      /\b(?:my\s+)?(?:password|passcode|passphrase|passwort|contraseña|mot\s+de\s+passe)\s+(?:is|was|=|:|es|ist|est)\s+\S{4,}/i,
    profiles: ['conversation', 'stored'],
  },
];

// Card verification codes: a code word, and a 3-4 digit code in the same sentence after it ("the security code CVV
// on the back of my card is 737") or right before it with a linking word ("737 is my CVV", "737 (cvc)").
const CARD_CODE_WORD = new RegExp(
  [
    '\\b(?:cvv2?|cvc2?|cvn2?|cav2|cvd|csc|cid|c\\.v\\.[vc]\\.?',
    'card\\s+(?:security|verification|validation|check|identification)\\s+(?:code|value|number|digits)',
    'card\\s+code|security\\s+(?:code|digits)|verification\\s+(?:value|digits)',
    '(?:three|four|3|4)[- ]digit\\s+(?:security\\s+|verification\\s+)?(?:code|number)',
    '(?:digits|numbers|code)\\s+(?:printed\\s+)?on\\s+the\\s+back|back\\s+of\\s+(?:my|the|your|this)\\s+(?:credit\\s+|debit\\s+)?card',
    'c[óo]digo\\s+de\\s+segur(?:idad|an[cç]a)|code\\s+de\\s+s[ée]curit[ée]|cryptogramme|kartenpr[üu]f(?:nummer|ziffer)|pr[üu]fziffer',
    'sicherheitscode|codice\\s+di\\s+sicurezza|beveiligingscode)\\b',
  ].join('|'),
  'giu',
);
// A standalone code: 3-4 digits (or single digits spaced out), not part of a longer number, date, price or amount.
const CARD_CODE_VALUE =
  /(?<![\p{L}\p{N}$€£#])(?<!\p{N}[.,/:-])(?:\d{3,4}|\d(?: \d){2,3})(?![\p{L}\p{N}]|[ .,/:-]\d|\s*(?:%|percent\b|(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|seconds?|secs?|ms|pages?|lines?|files?|items?|users?|people|customers?|orders?|times|digits?|characters?|chars|bytes|[kmg]b|dollars?|euros?|usd|eur|gbp|px|errors?|requests?|attempts?|steps?|words?)\b))/gu;
// Words right before a number that make it something else (an order number, a year, a version, an amount).
const NOT_A_CODE_BEFORE =
  /(?:\b(?:order|invoice|ticket|case|room|page|version|ver|v|error|status|line|chapter|step|item|no|nr|number|ending(?:\s+in)?|last\s+(?:four|4)(?:\s+digits)?|in|since|until|by|from|year|before|after|at|over|under|about|around|only|just)\s*[:#]?\s*|\bv)$/iu;
const SENTENCE_END = /[.!?\n;]\s/u;
const LINK_BEFORE_WORD =
  /^\s*(?:\(|\[|-|–|=|:|,)?\s*(?:(?:is|was|are|as)\s+)?(?:(?:my|the|our|his|her|their|its|your|a)\s+)?(?:card'?s\s+)?$/iu;

/** True when a 3-4 digit card verification code is given near a code word, in either order. */
function mentionsCardCode(text: string): boolean {
  CARD_CODE_WORD.lastIndex = 0;
  for (let word = CARD_CODE_WORD.exec(text); word; word = CARD_CODE_WORD.exec(text)) {
    // After the word, within the same sentence.
    let after = text.slice(word.index + word[0].length, word.index + word[0].length + 90);
    const stop = SENTENCE_END.exec(after);
    if (stop) after = after.slice(0, stop.index);
    CARD_CODE_VALUE.lastIndex = 0;
    for (let v = CARD_CODE_VALUE.exec(after); v; v = CARD_CODE_VALUE.exec(after)) {
      if (!NOT_A_CODE_BEFORE.test(after.slice(Math.max(0, v.index - 24), v.index))) return true;
    }
    // Before the word, joined to it by at most a linking phrase ("737 is my CVV", "737 (cvc)").
    const before = text.slice(Math.max(0, word.index - 40), word.index);
    CARD_CODE_VALUE.lastIndex = 0;
    for (let v = CARD_CODE_VALUE.exec(before); v; v = CARD_CODE_VALUE.exec(before)) {
      const link = before.slice(v.index + v[0].length);
      const lead = before.slice(Math.max(0, v.index - 24), v.index);
      if (LINK_BEFORE_WORD.test(link) && !NOT_A_CODE_BEFORE.test(lead)) return true;
    }
  }
  return false;
}

const STREET = new RegExp(
  [
    "\\b\\d{1,6}[A-Za-z]?\\s+(?:[A-Za-zÀ-ÿ0-9.'-]+\\s+){0,4}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|parkway|pkwy|highway|hwy|square|sq|circle|cir)\\b",
    '\\b[A-Za-zÀ-ÿ-]+(?:straße|strasse|weg|gasse|allee|platz)\\s+\\d{1,5}[a-z]?\\b',
    '\\b\\d{1,5},?\\s+(?:rue|avenue|boulevard|calle|via|viale|avenida|rua)\\b',
    "\\b(?:calle|via|viale|avenida|rua)\\s+(?:[A-Za-zÀ-ÿ'-]+\\s+){0,4}\\d{1,5}\\b",
  ].join('|'),
  'i',
);
const POSTAL =
  /\b\d{5}(?:-\d{4})?\b|\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b|\b[A-Z]\d[A-Z]\s?\d[A-Z]\d\b|\b\d{4}\s?[A-Z]{2}\b|,\s*[A-Z][a-z]+(?:\s[A-Z][a-z]+)?,?\s+[A-Z]{2}\b/;

export interface SensitiveFinding {
  category: SensitiveCategory;
  path: string;
}

export interface SensitiveDataScanner {
  /** The first finding in a text, or undefined. */
  scanText(text: string, profile: ScanProfile): SensitiveCategory | undefined;
  /** The first finding among the string leaves of a JSON value (bounded walk). */
  scanValue(value: unknown, path: string, profile: ScanProfile): SensitiveFinding | undefined;
  /** Throws RUNTIME_SENSITIVE_DATA_REJECTED (400) for the first finding. */
  reject(value: unknown, path: string, profile: ScanProfile): void;
}

const MAX_SCANNED = 64 * 1024;

/**
 * Detection of data chat must never take: guard's detection engine (in process, its built-in library and
 * local scorer) for card numbers, raw tokens and API keys, private keys and password assignments, plus rules
 * for verification codes, one-time and 3-D Secure codes, payment tokens, "my password is …" and full postal
 * addresses (a street line with a postal code or city and region).
 */
export function createSensitiveDataScanner(): SensitiveDataScanner {
  const guard = createLocalScanner({
    allowThreshold: 0.5,
    blockThreshold: 0.8,
    piiMode: 'MASK',
    timeoutMs: 250,
  } as never);
  const scanText = (raw: string, profile: ScanProfile): SensitiveCategory | undefined => {
    const text = raw.length > MAX_SCANNED ? raw.slice(0, MAX_SCANNED) : raw;
    if (text.length < 3) return undefined;
    const decision = guard(text);
    for (const detection of decision.detections) {
      const category = GUARD_TYPES[detection.type];
      if (category && Number(detection.confidence_score) >= 0.6) return category;
    }
    if (mentionsCardCode(text)) return 'card_verification_code';
    for (const rule of RULES) if (rule.profiles.includes(profile) && rule.pattern.test(text)) return rule.category;
    if (profile === 'conversation' && STREET.test(text) && POSTAL.test(text)) return 'full_address';
    return undefined;
  };
  const scanValue = (value: unknown, path: string, profile: ScanProfile): SensitiveFinding | undefined => {
    let visited = 0;
    const walk = (node: unknown, at: string, depth: number): SensitiveFinding | undefined => {
      if (++visited > 2000 || depth > 16) return undefined;
      if (typeof node === 'string') {
        const category = scanText(node, profile);
        return category ? { category, path: at } : undefined;
      }
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const found = walk(node[i], `${at}/${i}`, depth + 1);
          if (found) return found;
        }
      } else if (node && typeof node === 'object') {
        for (const [key, child] of Object.entries(node)) {
          const found = walk(child, `${at}/${key}`, depth + 1);
          if (found) return found;
        }
      }
      return undefined;
    };
    return walk(value, path, 0);
  };
  return {
    scanText,
    scanValue,
    reject(value, path, profile) {
      const found = scanValue(value, path, profile);
      if (found) throw RuntimeErrors.sensitiveData(found.category, found.path.slice(0, 200));
    },
  };
}

/** Phrases by which an answer would ask the user for data chat never takes. */
const COLLECTION_REQUEST = new RegExp(
  [
    '\\b(?:enter|provide|share|send|give|type|tell|confirm)\\b[^.?!\\n]{0,40}\\b(?:card\\s+(?:number|details)|credit\\s+card|cvv|cvc|security\\s+code|expiry\\s+date|password|passcode|one[- ]time\\s+code|pin|(?:full\\s+)?(?:shipping|billing|home|postal|delivery|street)\\s+address|full\\s+address)\\b',
    "\\bwhat(?:'s|\\s+is|\\s+are)\\s+your\\s+(?:full\\s+)?(?:(?:shipping|billing|home|postal|delivery|street)\\s+)?(?:address|card\\s+(?:number|details)|cvv|cvc|security\\s+code|password|pin)\\b",
  ].join('|'),
  'i',
);

/** True when an assistant answer asks for card data, codes, passwords or a full address. */
export function asksForSensitiveData(text: string): boolean {
  return COLLECTION_REQUEST.test(text.length > MAX_SCANNED ? text.slice(0, MAX_SCANNED) : text);
}
