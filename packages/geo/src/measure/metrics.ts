import type { AnswerFeatures } from './analyze.ts';
import { type Interval, PoissonBootstrap, wilsonInterval } from './stats.ts';

/** A metric's definition; `version` changes whenever the way the value is computed changes. */
export interface MetricDefinition {
  name: string;
  version: string;
  method: 'wilson' | 'bootstrap';
  unit: 'rate' | 'share' | 'rank' | 'score';
  description: string;
}

/** The versioned metric definitions a run computes (`definitionVersion` is `<name>@<version>`). */
export const METRIC_DEFINITIONS: readonly MetricDefinition[] = [
  {
    name: 'mention_rate',
    version: '1',
    method: 'wilson',
    unit: 'rate',
    description: 'Visibility: share of answers that name at least one own target (brand, product, …).',
  },
  {
    name: 'share_of_voice',
    version: '1',
    method: 'bootstrap',
    unit: 'share',
    description:
      "Answers naming the own brand ÷ (those + competitor mentions, one per competitor per answer), over the target graph's competitors.",
  },
  {
    name: 'average_mention_position',
    version: '1',
    method: 'bootstrap',
    unit: 'rank',
    description: 'Mean rank (1 = named first) of the first own target among the tracked entities an answer names.',
  },
  {
    name: 'citation_rate',
    version: '1',
    method: 'wilson',
    unit: 'rate',
    description: 'Share of answers citing at least one own domain.',
  },
  {
    name: 'citation_share',
    version: '1',
    method: 'bootstrap',
    unit: 'share',
    description: 'Citations of own domains ÷ all citations.',
  },
  {
    name: 'position_adjusted_word_count',
    version: '1',
    method: 'bootstrap',
    unit: 'share',
    description:
      "GEO paper (Aggarwal et al., KDD 2024): Σ over sentences citing own domains of |s|·e^(−pos(s)/|S|) ÷ the answer's words, averaged over answers.",
  },
  {
    name: 'sentiment',
    version: '1',
    method: 'bootstrap',
    unit: 'score',
    description:
      'Lexicon sentiment (lexicon-en@1, −1 to 1) of sentences naming an own target, mean over answers naming one.',
  },
  {
    name: 'subjective_impression',
    version: '1',
    method: 'bootstrap',
    unit: 'score',
    description:
      'GEO paper: a judge engine rates how the own sources come across (relevance, influence, uniqueness, position, amount, click, diversity; 0–5 each, mean scaled to 0–1; 0 when the answer neither names nor cites them). Needs a judge engine; skipped otherwise.',
  },
];

const BOOTSTRAP_METRICS = [
  'share_of_voice',
  'average_mention_position',
  'citation_share',
  'position_adjusted_word_count',
  'sentiment',
  'subjective_impression',
] as const;

export interface MetricResult {
  metric: string;
  definitionVersion: string;
  method: MetricDefinition['method'];
  unit: MetricDefinition['unit'];
  /** `all` engines, or one engine. */
  scope: string;
  sampleCount: number;
  interval: Interval;
  numerator: number | null;
  denominator: number | null;
  /** Up to 10 answers that show the value (some with, some without the own target). */
  evidenceAnswerIds: string[];
}

const definition = (name: string) => METRIC_DEFINITIONS.find((d) => d.name === name)!;

/**
 * Accumulates one scope's metrics over answers streamed in a fixed order; memory is independent of the number of
 * answers (rates are counts, the others a Poisson bootstrap seeded from the run's seed and the scope).
 */
export class ScopeMetrics {
  readonly scope: string;
  #n = 0;
  #mentioned = 0;
  #cited = 0;
  #judged = 0;
  readonly #bootstrap: PoissonBootstrap;
  readonly #evidence = { with: [] as string[], without: [] as string[], cited: [] as string[] };

  constructor(scope: string, replicates = 1000) {
    this.scope = scope;
    this.#bootstrap = new PoissonBootstrap(BOOTSTRAP_METRICS.length, undefined, replicates);
  }

  /**
   * Adds one successful answer with its bootstrap weights. The weights of an answer are drawn once (from the run's
   * seed, in task order) and shared by every scope the answer belongs to.
   */
  add(answerId: string, f: AnswerFeatures, weights: Uint8Array): void {
    this.#n++;
    if (f.ownMentioned) this.#mentioned++;
    if (f.ownCitations > 0) this.#cited++;
    const evidence = f.ownMentioned ? this.#evidence.with : this.#evidence.without;
    if (evidence.length < 5) evidence.push(answerId);
    if (f.ownCitations > 0 && this.#evidence.cited.length < 5) this.#evidence.cited.push(answerId);
    const b = this.#bootstrap;
    b.use(weights);
    const own = f.ownMentioned ? 1 : 0;
    b.add(0, own, own + f.competitorsMentioned);
    if (f.ownRank !== null) b.add(1, f.ownRank, 1);
    b.add(2, f.ownCitations, f.citations);
    b.add(3, f.positionAdjustedWordCount, 1);
    if (f.sentiment !== null) b.add(4, f.sentiment, 1);
    if (typeof f.subjectiveImpression === 'number') {
      b.add(5, f.subjectiveImpression, 1);
      this.#judged++;
    }
  }

  /** The scope's results (a metric without any observation is left out, never reported as 0). */
  results(): MetricResult[] {
    if (this.#n === 0) return [];
    const out: MetricResult[] = [];
    const evidence = [...this.#evidence.with, ...this.#evidence.without];
    const push = (
      name: string,
      interval: Interval,
      sampleCount: number,
      num: number | null,
      den: number | null,
      ids: string[],
    ) => {
      const d = definition(name);
      out.push({
        metric: name,
        definitionVersion: `${name}@${d.version}`,
        method: d.method,
        unit: d.unit,
        scope: this.scope,
        sampleCount,
        interval,
        numerator: num,
        denominator: den,
        evidenceAnswerIds: ids,
      });
    };
    push('mention_rate', wilsonInterval(this.#mentioned, this.#n), this.#n, this.#mentioned, this.#n, evidence);
    push('citation_rate', wilsonInterval(this.#cited, this.#n), this.#n, this.#cited, this.#n, [
      ...this.#evidence.cited,
      ...this.#evidence.without,
    ]);
    BOOTSTRAP_METRICS.forEach((name, index) => {
      const interval = this.#bootstrap.interval(index);
      if (!interval) return;
      const sampleCount =
        name === 'average_mention_position' || name === 'sentiment'
          ? this.#mentioned
          : name === 'subjective_impression'
            ? this.#judged
            : this.#n;
      push(name, interval, sampleCount, null, null, name === 'citation_share' ? this.#evidence.cited : evidence);
    });
    return out;
  }
}
