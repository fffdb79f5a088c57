import type { AnswerFeatures } from './analyze.ts';
import { askWithRetry, type EngineClient, type EngineReply } from './engine-client.ts';
import type { EntityMatcher } from './entity-match.ts';

/** The GEO paper's subjective-impression dimensions (Aggarwal et al., KDD 2024, §2.2.1), each rated 0–5. */
export const IMPRESSION_DIMENSIONS = [
  'relevance',
  'influence',
  'uniqueness',
  'position',
  'amount',
  'click',
  'diversity',
] as const;

/** The judge's instruction: rate how the own brand's sources come across in one answer, as JSON. */
export function judgePrompt(answer: string, matcher: EntityMatcher): string {
  const own = matcher.entities.filter((e) => e.role === 'own');
  const names = own.map((e) => e.name).join(', ');
  const domains = [...new Set(own.flatMap((e) => e.domains))].join(', ');
  return [
    'You judge how a source is presented in an AI answer (GEO subjective impression).',
    `The source is the brand ${names || '(unnamed)'}${domains ? ` and its sites ${domains}` : ''}.`,
    'Rate each dimension from 0 (not at all) to 5 (very much): relevance of the source to the question, influence of the source on the answer, uniqueness of what the source contributes, position (how early it appears), amount of the answer drawn from it, click (how likely a reader would visit it), diversity of the material used from it.',
    `Reply with JSON only: {${IMPRESSION_DIMENSIONS.map((d) => `"${d}": n`).join(', ')}}.`,
    '',
    'The answer:',
    answer.slice(0, 12_000),
  ].join('\n');
}

/** The mean of the seven ratings scaled to 0–1, or null when the reply is not seven ratings from 0 to 5. */
export function parseJudgement(text: string): number | null {
  const match = /\{[\s\S]*\}/.exec(text);
  if (!match) return null;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(match[0]) as Record<string, unknown>;
  } catch {
    return null;
  }
  let sum = 0;
  for (const dimension of IMPRESSION_DIMENSIONS) {
    const value = parsed[dimension];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 5) return null;
    sum += value;
  }
  return sum / IMPRESSION_DIMENSIONS.length / 5;
}

/**
 * The subjective impression of one answer: 0 when the answer neither names nor cites an own target (the source is
 * absent), otherwise the judge's rating; null when the judge gives no usable rating (the answer is then left out of
 * the metric, never given a made-up score). Also returns the judge's usage, charged to the answer.
 */
export async function judgeAnswer(
  judge: EngineClient,
  answer: string,
  features: AnswerFeatures,
  matcher: EntityMatcher,
  attempts: number,
): Promise<{ impression: number | null; usage: Pick<EngineReply, 'inputTokens' | 'outputTokens'> }> {
  if (!features.ownMentioned && features.ownCitations === 0)
    return { impression: 0, usage: { inputTokens: 0, outputTokens: 0 } };
  try {
    const reply = await askWithRetry(
      judge,
      { prompt: judgePrompt(answer, matcher), locale: 'en', persona: null },
      attempts,
    );
    return { impression: parseJudgement(reply.text), usage: reply };
  } catch {
    return { impression: null, usage: { inputTokens: 0, outputTokens: 0 } };
  }
}
