// The two scores of a candidate and how they combine.
//
//   regex_score  = the type's base risk, +0.06 when a checksum/structure check passes, +0.06 when context words
//                  confirm the type, minus an ambiguity penalty when they do not (bare 9-digit SSN, bare 10-digit
//                  phone), capped at 0.15 when validation fails, ×0.4 next to words that say it is something else
//                  (a version, an order number), and at most 0.10 for placeholders.
//   ai_score     = (local) base risk × (0.5 + 0.5 × evidence), evidence = 0.5·validity + 0.2·context + 0.3·strength,
//                  where strength is the value's shape (entropy for secrets, character classes for passwords,
//                  canonical formatting for PII); ×0.2 for placeholders, ×0.4 when validation fails, ×0.5 in
//                  negative context.
//   final_score  = round2(0.6 × regex_score + 0.4 × ai_score)
import type { Candidate } from './types.ts';

/** What a detector learned about one match; the two scores are computed from it. */
export interface Evidence {
  /** Checksum or structural validation: true passed, false failed, null when the type has none. */
  valid: boolean | null;
  /** +1 when words near the match confirm the type, -1 when they say it is something else, 0 otherwise. */
  context: number;
  /** The value stands in for a secret (`sk-xxxx`, `<password>`, `${TOKEN}`, `********`). */
  placeholder: boolean;
  /** 0..1: how typical the value's shape is (entropy, character classes, canonical formatting). */
  strength: number;
  /** 0..1: risk removed when the format alone is ambiguous and no context confirms it. */
  ambiguity: number;
}

/** Weight of the regex stage in the final score. */
export const REGEX_WEIGHT = 0.6;
/** Weight of the AI stage (upstream model or the local scorer) in the final score. */
export const AI_WEIGHT = 0.4;

/** Rounds to two decimals, the precision every score is reported and compared at. */
export function round2(x: number): number {
  return Math.round(x * 100 + 1e-9) / 100;
}

function clamp01(x: number): number {
  return x < 0 ? 0 : Math.min(x, 1);
}

/** The regex stage's score for a match of a type with base risk `base`, given its evidence (see the file header). */
export function regexScoreOf(base: number, ev: Evidence): number {
  if (ev.placeholder) return round2(Math.min(base, 0.5) * 0.2);
  let s = base;
  if (ev.valid === true) s += 0.06;
  if (ev.context > 0) s += 0.06;
  else s -= ev.ambiguity;
  if (ev.valid === false) s = Math.min(s, 0.15);
  if (ev.context < 0) s *= 0.4;
  return round2(clamp01(s));
}

/** The local, deterministic AI opinion for a type with base risk `base`, from the same evidence (see the file header). */
export function localAiScoreOf(base: number, ev: Evidence): number {
  const validity = ev.valid === true ? 1 : ev.valid === null ? 0.6 : 0;
  const context = ev.context > 0 ? 1 : ev.context < 0 ? 0 : 0.5;
  const evidence = 0.5 * validity + 0.2 * context + 0.3 * clamp01(ev.strength);
  let ai = base * (0.5 + 0.5 * evidence);
  if (ev.placeholder) ai *= 0.2;
  if (ev.valid === false) ai *= 0.4;
  if (ev.context < 0) ai *= 0.5;
  else if (ev.context === 0) ai -= ev.ambiguity * 0.5;
  return round2(clamp01(ai));
}

/** final = round2(0.6 × regex_score + 0.4 × ai_score): the risk compared with the allow and block thresholds. */
export function finalScore(regexScore: number, aiScore: number): number {
  return round2(REGEX_WEIGHT * regexScore + AI_WEIGHT * aiScore);
}

/** The final score a candidate gets from its own local AI score (what decide() uses without an upstream model). */
export function localFinalScore(c: Pick<Candidate, 'regexScore' | 'localAiScore'>): number {
  return finalScore(c.regexScore, c.localAiScore);
}

const SCORE_STRINGS = Array.from({ length: 101 }, (_, i) => (i / 100).toFixed(2));

/** Two-decimal string, the serialized form of every score (`0.62`). */
export function formatScore(x: number): string {
  const i = Math.round(x * 100 + 1e-9);
  return i >= 0 && i <= 100 ? SCORE_STRINGS[i] : round2(x).toFixed(2);
}
