import type { Cache } from '@keel/core';
import { sha256Hex } from '@keel/core';
import type { ModelProvider } from '@keel/models';
import type { AiScore, Candidate } from '../detect/types.ts';
import { contextForModel, maskValueForModel } from './model-input.ts';

export interface AiScorerOptions {
  provider: ModelProvider | undefined;
  cache: Cache;
  model: string;
  timeoutMs: number;
  cacheTtlMs: number;
  /** Candidates sent in one call; the rest keep the local score. */
  maxCandidatesPerCall?: number;
  onUpstreamFailure?: (reason: string) => void;
}

const SYSTEM_PROMPT = [
  'You are a data-loss-prevention classifier.',
  'For each numbered candidate, give the probability (0 to 1) that it is real sensitive data of the stated type,',
  'and not an example, placeholder, test value, version, order number or other look-alike.',
  'Values are partly masked; judge from the type, the visible shape and the context.',
  'Answer with JSON only: {"scores":[<probability for candidate 1>, <for candidate 2>, ...]}',
].join(' ');

/** The cache key of an AI verdict: a hash of the pattern and the value, never the value itself. */
export function aiCacheKey(candidate: Pick<Candidate, 'type' | 'value'>): string {
  return `ai:${sha256Hex(`${candidate.type}\u0000${candidate.value}`)}`;
}

function parseScores(answer: string, expected: number): number[] | undefined {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const scores = (JSON.parse(answer.slice(start, end + 1)) as { scores?: unknown }).scores;
    if (!Array.isArray(scores) || scores.length !== expected) return undefined;
    if (!scores.every((s) => typeof s === 'number' && s >= 0 && s <= 1)) return undefined;
    return scores as number[];
  } catch {
    return undefined;
  }
}

const local = (candidate: Candidate): AiScore =>
  candidate.blocklisted ? { score: 1, source: 'BLOCKLIST' } : { score: candidate.localAiScore, source: 'LOCAL' };

/**
 * Verdicts being asked for right now, per cache: a request that needs one waits for that answer instead of
 * asking again, so a burst of identical content (retries, a prompt sent by many users) costs one upstream call.
 */
const inFlightByCache = new WeakMap<object, Map<string, Promise<number | undefined>>>();

/**
 * One AI score per candidate: cached verdicts first, then verdicts already being asked for, then at most one
 * upstream call for all the rest, and the local deterministic scorer wherever the upstream is missing, slow or
 * unintelligible.
 */
export async function scoreCandidates(
  options: AiScorerOptions,
  text: string,
  candidates: readonly Candidate[],
): Promise<AiScore[]> {
  const scores = candidates.map(local);
  const { provider } = options;
  if (!provider || candidates.length === 0) return scores;

  const inFlight = inFlightByCache.get(options.cache) ?? new Map<string, Promise<number | undefined>>();
  inFlightByCache.set(options.cache, inFlight);
  const askable = candidates.map((_, i) => i).filter((i) => !candidates[i]!.blocklisted);
  const keys = askable.map((i) => aiCacheKey(candidates[i]!));
  const cached = await options.cache.getMany<number>(keys);
  const misses: number[] = [];
  const waiting: [candidateIndex: number, verdict: Promise<number | undefined>][] = [];
  askable.forEach((candidateIndex, k) => {
    const hit = cached[k];
    const pending = inFlight.get(keys[k]!);
    if (typeof hit === 'number') scores[candidateIndex] = { score: hit, source: 'HYBRID' };
    else if (pending) waiting.push([candidateIndex, pending]);
    else misses.push(candidateIndex);
  });
  const batch = misses.slice(0, options.maxCandidatesPerCall ?? 50);
  if (batch.length > 0) await askUpstream(options, provider, text, candidates, batch, scores, inFlight);
  for (const [candidateIndex, verdict] of waiting) {
    const score = await verdict;
    if (score !== undefined) scores[candidateIndex] = { score, source: 'HYBRID' };
  }
  return scores;
}

/** One upstream call for `batch`; its verdicts are cached and shared with requests that wait for them. */
async function askUpstream(
  options: AiScorerOptions,
  provider: NonNullable<AiScorerOptions['provider']>,
  text: string,
  candidates: readonly Candidate[],
  batch: readonly number[],
  scores: AiScore[],
  inFlight: Map<string, Promise<number | undefined>>,
): Promise<void> {
  const batchKeys = batch.map((candidateIndex) => aiCacheKey(candidates[candidateIndex]!));
  let settle: (verdicts: number[] | undefined) => void = () => undefined;
  const verdicts = new Promise<number[] | undefined>((resolve) => {
    settle = resolve;
  });
  batchKeys.forEach((key, n) => {
    if (!inFlight.has(key))
      inFlight.set(
        key,
        verdicts.then((all) => all?.[n]),
      );
  });
  let rounded: number[] | undefined;
  try {
    const lines = batch.map((candidateIndex, n) => {
      const c = candidates[candidateIndex]!;
      const context = contextForModel(text, candidates, candidateIndex);
      return `${n + 1}. type=${c.type} shape=${JSON.stringify(maskValueForModel(c.value))} context=${JSON.stringify(context)}`;
    });
    const answer = await provider.complete(
      {
        model: options.model,
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: lines.join('\n') },
        ],
        temperature: 0,
        maxTokens: 20 + batch.length * 8,
      },
      { timeoutMs: options.timeoutMs },
    );
    const parsed = parseScores(answer, batch.length);
    if (!parsed) {
      options.onUpstreamFailure?.('unintelligible answer');
      return;
    }
    rounded = parsed.map((score) => Math.round(score * 100) / 100);
    await Promise.all(
      batch.map((candidateIndex, n) => {
        scores[candidateIndex] = { score: rounded![n]!, source: 'HYBRID' };
        return options.cache.set(batchKeys[n]!, rounded![n]!, options.cacheTtlMs);
      }),
    );
  } catch (error) {
    options.onUpstreamFailure?.((error as Error).message);
  } finally {
    settle(rounded);
    for (const key of batchKeys) inFlight.delete(key);
  }
}
