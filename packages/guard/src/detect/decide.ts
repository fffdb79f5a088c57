// The decision: final scores, allow/mask/block per detection, the request's verdict and message, redaction.
import { pickNonOverlapping, widenCandidate } from './overlaps.ts';
import { finalScore, formatScore } from './scoring.ts';
import type { AiScore, Candidate, Decision, Detection, EngineSettings, PlaceholderFor } from './types.ts';

/** What decide() needs from the compiled configuration. */
export interface DecisionConfig {
  settings: EngineSettings;
  /** Per-pattern overrides by detection type; a missing side falls back to the settings. */
  overrides: ReadonlyMap<string, { allow: number | null; block: number | null }>;
}

const DEFAULT_PLACEHOLDERS = new Map<string, string>();

/** `[TYPE]`, the placeholder /detect uses (one string per type, made once). */
export const defaultPlaceholder: PlaceholderFor = (type) => {
  let placeholder = DEFAULT_PLACEHOLDERS.get(type);
  if (placeholder === undefined) {
    placeholder = `[${type}]`;
    if (DEFAULT_PLACEHOLDERS.size < 1000) DEFAULT_PLACEHOLDERS.set(type, placeholder);
  }
  return placeholder;
};

interface Reported {
  c: Candidate;
  final: number;
  ai: number;
  source: AiScore['source'];
  blocking: boolean;
}

/**
 * Decides over candidates (from scan) with their AI scores (aiScores[i] belongs to candidates[i]; a missing
 * entry falls back to the candidate's local score). Final below the allow threshold: ignored. From allow up
 * to block: masked. At or above block: masked and the request is blocked. Blocklist hits: final 1.00, always
 * block. PII_MODE BLOCK blocks on any reported detection. Reported detections never overlap.
 */
export function decideCandidates(
  config: DecisionConfig,
  text: string,
  candidates: readonly Candidate[],
  aiScores: readonly AiScore[],
  placeholderFor: PlaceholderFor = defaultPlaceholder,
): Decision {
  const { allowThreshold, blockThreshold } = config.settings;
  const overrides = config.overrides;
  const reported: Reported[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    if (c.blocklisted) {
      reported.push({ c, final: 1, ai: 1, source: 'BLOCKLIST', blocking: true });
      continue;
    }
    const given = aiScores[i];
    const ai = given === undefined ? c.localAiScore : given.score;
    const final = finalScore(c.regexScore, ai);
    let allow = allowThreshold;
    let block = blockThreshold;
    if (overrides.size > 0) {
      const o = overrides.get(c.type);
      if (o !== undefined) {
        allow = o.allow ?? allow;
        block = o.block ?? block;
      }
    }
    if (final < allow) continue;
    reported.push({ c, final, ai, source: given === undefined ? 'LOCAL' : given.source, blocking: final >= block });
  }
  const kept = nonOverlapping(text, reported);

  const detections: Detection[] = [];
  // Types in order of first detection with their counts; the breakdown object is built once from them.
  const types: string[] = [];
  const counts: number[] = [];
  let redacted = '';
  let cursor = 0;
  let overall = 0;
  let blocklistHit: Reported | undefined;
  let thresholdHit: Reported | undefined;
  for (const r of kept) {
    const c = r.c;
    const placeholder = placeholderFor(c.type, c.value);
    const finalText = formatScore(r.final);
    detections.push({
      type: c.type,
      value: c.value,
      placeholder,
      start: c.start,
      end: c.end,
      confidence_score: finalText,
      confidence_explanation: {
        source: r.source,
        regex_score: c.blocklisted ? SCORE_ONE : formatScore(c.regexScore),
        ai_score: formatScore(r.ai),
        category: c.category,
        pattern_active: !c.blocklisted,
        final_score: finalText,
      },
    });
    const k = types.indexOf(c.type);
    if (k < 0) {
      types.push(c.type);
      counts.push(1);
    } else counts[k]++;
    redacted += text.slice(cursor, c.start) + placeholder;
    cursor = c.end;
    if (r.final > overall) overall = r.final;
    if (c.blocklisted) blocklistHit ??= r;
    else if (r.blocking) thresholdHit ??= r;
  }

  const breakdown: Record<string, number> = {};
  for (let k = 0; k < types.length; k++) breakdown[types[k]] = counts[k];

  let blocked = false;
  let blockedBy: string | undefined;
  let message: string;
  if (blocklistHit) {
    blocked = true;
    blockedBy = 'BLOCKLIST';
    message = 'Blocked due to blocklisted value: BLOCKLIST';
  } else if (thresholdHit) {
    blocked = true;
    blockedBy = thresholdHit.c.type;
    message = `Blocked due to high confidence detection: ${blockedBy}`;
  } else if (config.settings.piiMode === 'BLOCK' && kept.length > 0) {
    blocked = true;
    blockedBy = kept[0].c.type;
    message = `Blocked by PII_MODE BLOCK: ${blockedBy} detected`;
  } else if (kept.length > 0) {
    message = `Sensitive data masked: ${types.join(', ')}`;
  } else {
    message = 'No sensitive data detected';
  }

  return {
    detections,
    redactedText: kept.length > 0 ? redacted + text.slice(cursor) : undefined,
    breakdown,
    blocked,
    containsPii: kept.length > 0,
    overallConfidence: overall,
    message,
    blockedBy,
  };
}

const SCORE_ONE = '1.00';

/**
 * Reported detections in text order without overlaps (blocklist first, then higher final, then longer); the
 * kept ones widened to cover every reported detection they overlap, so nothing detected is left in clear.
 */
function nonOverlapping(text: string, reported: Reported[]): Reported[] {
  let inOrder = true;
  for (let i = 1; i < reported.length && inOrder; i++) inOrder = reported[i].c.start >= reported[i - 1].c.end;
  if (inOrder) return reported;
  return pickNonOverlapping(
    reported.map((r) => ({
      item: r,
      start: r.c.start,
      end: r.c.end,
      rank: r.c.blocklisted ? 2 : r.final,
      counts: true,
    })),
  ).map((k) => ({ ...k.item, c: widenCandidate(text, k.item.c, k.start, k.end) }));
}
