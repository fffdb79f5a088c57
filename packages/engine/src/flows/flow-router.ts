import { createHash } from 'node:crypto';

/** What routing knows of one flow: its routing manifest (config `routing`), or its routing profile when it has one. */
export type RoutingManifest = {
  enabled?: boolean | undefined;
  when_to_use?: string | undefined;
  when_not_to_use?: string | undefined;
  capabilities?: string[] | undefined;
  minimum_confidence?: number | undefined;
  /** Profile only: sample messages the flow is for. */
  examples?: string[] | undefined;
  /** Profile only: breaks ties between equal scores (higher first). */
  priority?: number | undefined;
};

export interface RoutingCandidate {
  flowId: string;
  name: string;
  activeVersion: number;
  /** The newest published version above the active one (the canary), if any. */
  canaryVersion: number | null;
  source: 'profile' | 'manifest';
  manifest: RoutingManifest;
}

export interface RoutingPolicy {
  mode: 'automatic' | 'explicit';
  compatibility_fallback: boolean;
  fallback_flow_id: string | null;
  canary_percentage: number;
}

export const DEFAULT_POLICY: RoutingPolicy = {
  mode: 'automatic',
  compatibility_fallback: true,
  fallback_flow_id: null,
  canary_percentage: 0,
};

/** The minimum score a flow needs when neither its manifest nor its profile sets `minimum_confidence`. */
export const DEFAULT_MINIMUM_CONFIDENCE = 0.2;
/** Canary buckets: a subject falls in one of 10,000 (a percentage with two decimals). */
const BUCKETS = 10_000;
/** Words a message is scored on at most (longer messages are cut: scoring stays bounded). */
const MAX_WORDS = 200;

const STOP_WORDS = new Set(
  'a an and are as at be by for from has have i in is it me my of on or our please the this to want we with you your'.split(
    ' ',
  ),
);

/** The scoring words of a text: lower-cased letters and digits, stop words out, a light plural stem. */
export function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < 2 || STOP_WORDS.has(raw)) continue;
    out.add(raw.length > 3 && raw.endsWith('s') && !raw.endsWith('ss') ? raw.slice(0, -1) : raw);
    if (out.size >= MAX_WORDS) break;
  }
  return out;
}

/**
 * The canary bucket of a subject in a realm, 0–9,999: a SHA-256 of realm and subject, so the same subject always
 * lands in the same bucket (a session keeps its side of the canary) and subjects spread evenly.
 */
export function canaryBucket(realmId: string, subject: string): number {
  const digest = createHash('sha256').update(`${realmId}\u0000${subject}`).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

export function inCanary(bucket: number, percentage: number): boolean {
  return bucket < Math.round(percentage * (BUCKETS / 100));
}

export interface ScoredCandidate {
  flow_id: string;
  name: string;
  source: 'profile' | 'manifest';
  eligible: boolean;
  score: number;
  minimum_confidence: number;
  matched: string[];
  excluded_by: string[];
  reason: string;
}

/**
 * Scores one candidate against a message: the share of the message's words found in what the flow is for (its
 * `when_to_use`, capabilities, examples and name), minus a penalty per word of `when_not_to_use` the message has.
 * Deterministic, no model: the same message and manifests always give the same scores.
 */
export function scoreCandidate(message: Set<string>, candidate: RoutingCandidate): ScoredCandidate {
  const m = candidate.manifest;
  const minimum = m.minimum_confidence ?? DEFAULT_MINIMUM_CONFIDENCE;
  const base = {
    flow_id: candidate.flowId,
    name: candidate.name,
    source: candidate.source,
    minimum_confidence: minimum,
  };
  if (m.enabled === false)
    return { ...base, eligible: false, score: 0, matched: [], excluded_by: [], reason: 'routing disabled' };
  const vocabulary = words(
    [m.when_to_use ?? '', ...(m.capabilities ?? []), ...(m.examples ?? []), candidate.name].join(' '),
  );
  const negative = words(m.when_not_to_use ?? '');
  const matched = [...message].filter((word) => vocabulary.has(word) && !negative.has(word)).sort();
  const excluded = [...message].filter((word) => negative.has(word)).sort();
  const raw = message.size === 0 ? 0 : (matched.length - 2 * excluded.length) / message.size;
  const score = Math.round(Math.max(0, Math.min(1, raw)) * 1000) / 1000;
  const eligible = score >= minimum && score > 0;
  const reason = eligible
    ? `matched ${matched.length} of ${message.size} words`
    : excluded.length > 0 && matched.length > 0
      ? `when_not_to_use matched (${excluded.join(', ')})`
      : `score ${score} below minimum_confidence ${minimum}`;
  return { ...base, eligible, score, matched, excluded_by: excluded, reason };
}

export interface RouteRequest {
  message: string;
  /** A flow named by the caller: routing is bypassed (it must be a candidate). */
  flowId?: string | undefined;
  /** What the canary assignment is keyed on (a session or a subject); no key → no canary. */
  canaryKey?: string | undefined;
}

export interface RouteDecision {
  chosen: { flow_id: string; name: string; version: number; canary: boolean } | null;
  why: string;
  strategy: 'explicit' | 'intent' | 'fallback' | 'none';
  candidates: ScoredCandidate[];
  canary: { percentage: number; bucket: number | null; in_canary: boolean };
}

/**
 * Routes a message among a realm's candidates under its policy (pure: no reads or writes). An explicit `flowId` wins;
 * in `automatic` mode the best eligible score wins (ties: priority, then name); otherwise the compatibility fallback
 * flow when enabled. The canary share of subjects gets the chosen flow's canary version when it has one.
 */
export function routeMessage(
  realmId: string,
  policy: RoutingPolicy,
  candidates: readonly RoutingCandidate[],
  request: RouteRequest,
): RouteDecision {
  const message = words(request.message);
  const scored = candidates.map((candidate) => scoreCandidate(message, candidate));
  const bucket = request.canaryKey === undefined ? null : canaryBucket(realmId, request.canaryKey);
  const canaryHit = bucket !== null && inCanary(bucket, policy.canary_percentage);
  const canary = { percentage: policy.canary_percentage, bucket, in_canary: canaryHit };
  const pick = (candidate: RoutingCandidate) => {
    const useCanary = canaryHit && candidate.canaryVersion !== null;
    return {
      flow_id: candidate.flowId,
      name: candidate.name,
      version: useCanary ? candidate.canaryVersion! : candidate.activeVersion,
      canary: useCanary,
    };
  };
  const byId = new Map(candidates.map((candidate) => [candidate.flowId, candidate]));
  if (request.flowId !== undefined) {
    const named = byId.get(request.flowId);
    if (named)
      return {
        chosen: pick(named),
        why: 'flow_id named in the request',
        strategy: 'explicit',
        candidates: scored,
        canary,
      };
    return {
      chosen: null,
      why: 'the named flow is not an active flow of this realm',
      strategy: 'none',
      candidates: scored,
      canary,
    };
  }
  if (policy.mode === 'automatic') {
    const ranked = scored
      .map((score, index) => ({ score, candidate: candidates[index]! }))
      .filter((entry) => entry.score.eligible)
      .sort(
        (a, b) =>
          b.score.score - a.score.score ||
          (b.candidate.manifest.priority ?? 0) - (a.candidate.manifest.priority ?? 0) ||
          a.candidate.name.localeCompare(b.candidate.name),
      );
    const best = ranked[0];
    if (best)
      return {
        chosen: pick(best.candidate),
        why: `highest eligible score ${best.score.score} (${best.score.reason})`,
        strategy: 'intent',
        candidates: scored,
        canary,
      };
  }
  const lead =
    policy.mode === 'automatic'
      ? 'no candidate reached its minimum_confidence'
      : 'mode explicit routes only a named flow';
  if (policy.compatibility_fallback && policy.fallback_flow_id !== null) {
    const fallback = byId.get(policy.fallback_flow_id);
    if (fallback)
      return {
        chosen: pick(fallback),
        why: `${lead}: compatibility fallback flow`,
        strategy: 'fallback',
        candidates: scored,
        canary,
      };
    return {
      chosen: null,
      why: `${lead}; the fallback flow is not active`,
      strategy: 'none',
      candidates: scored,
      canary,
    };
  }
  return {
    chosen: null,
    why: policy.compatibility_fallback ? `${lead}; no fallback flow is set` : `${lead}; compatibility fallback is off`,
    strategy: 'none',
    candidates: scored,
    canary,
  };
}
