import { type Citation, cleanUrl } from './citations.ts';
import { type EntityMatcher, type EntityMention, foldText, words } from './entity-match.ts';

/** What the metrics need from one answer; stored with the answer so a run's metrics can be recomputed alone. */
export interface AnswerFeatures {
  /** Tracked entities mentioned, in order of first appearance. */
  mentions: { key: string; role: 'own' | 'competitor'; count: number }[];
  ownMentioned: boolean;
  /** 1-based rank of the first own entity among the entities mentioned (null when none is). */
  ownRank: number | null;
  competitorsMentioned: number;
  citations: number;
  ownCitations: number;
  competitorCitations: number;
  /** Share of the answer's words in sentences citing an own domain (GEO paper's Word Count), 0–1. */
  wordCount: number;
  /** The same share with each sentence weighted by e^(−pos/|S|) (GEO paper's Position-Adjusted Word Count). */
  positionAdjustedWordCount: number;
  /** Lexicon sentiment of the sentences naming an own entity, −1–1; null when none does. */
  sentiment: number | null;
  /** GEO paper's subjective impression (0–1) from the run's judge engine; absent without a judge, null if it failed. */
  subjectiveImpression?: number | null;
}

const URL_RE = /https?:\/\/[^\s<>()[\]{}"'`|\\^]+/g;
const MARKER_RE = /\[(\d{1,3})\]/g;
const SENTENCE_END = /(?<=[.!?])\s+|\n+/;

const POSITIVE = new Set(
  'best great excellent leading recommended recommend reliable popular top trusted good fast easy affordable innovative strong love loved favorite favourite quality secure powerful robust outstanding superior efficient praised helpful intuitive impressive solid ideal standout versatile seamless'.split(
    ' ',
  ),
);
const NEGATIVE = new Set(
  'worst bad poor expensive slow unreliable complaints complaint issues problems lacks lacking limited outdated difficult buggy weak avoid overpriced scam criticized criticised insecure breach lawsuit fails failure disappointing clunky confusing frustrating mediocre inferior costly risky'.split(
    ' ',
  ),
);
const NEGATORS = new Set(['not', 'no', 'never', 't', 'hardly', 'without']);

/** Lexicon version used by `sentiment` (changing the word lists means a new metric definition version). */
export const SENTIMENT_LEXICON = 'lexicon-en@1';

interface Sentence {
  firstWord: number;
  wordCount: number;
  cited: Set<string>;
}

/**
 * Analyzes one answer against the target graph: entity mentions (see EntityMatcher), which citations belong to own
 * or competitor domains, the GEO paper's word-count shares (Aggarwal et al., KDD 2024: a sentence's words count for
 * the sources it cites — inline URLs, or `[n]` markers naming the n-th citation — split evenly among them; a
 * sentence at 0-based position i of |S| is weighted by e^(−i/|S|); URLs and markers themselves are not words) and
 * the sentiment of sentences naming an own entity.
 */
export function analyzeAnswer(text: string, citations: Citation[], matcher: EntityMatcher): AnswerFeatures {
  const known = new Set(citations.map((c) => c.url));
  // One pass: each sentence is folded and split into words once; the words of the whole answer are their
  // concatenation (separators between sentences hold no letters, so word indices agree).
  const allWords: { word: string; start: number }[] = [];
  const sentences: Sentence[] = [];
  for (const raw of text.slice(0, 200_000).split(SENTENCE_END)) {
    if (raw.trim() === '') continue;
    const cited = new Set<string>();
    for (const match of raw.matchAll(URL_RE)) {
      const url = cleanUrl(match[0]);
      if (url && known.has(url)) cited.add(url);
    }
    for (const match of raw.matchAll(MARKER_RE)) {
      const citation = citations[Number(match[1]) - 1];
      if (citation) cited.add(citation.url);
    }
    const folded = foldText(raw);
    const sentenceWords = words(folded);
    // URLs and [n] markers are not words of the answer.
    let excluded = 0;
    if (folded.includes('[') || folded.includes('http')) {
      const ranges: [number, number][] = [];
      for (const m of folded.matchAll(URL_RE)) ranges.push([m.index, m.index + m[0].length]);
      for (const m of folded.matchAll(MARKER_RE)) ranges.push([m.index, m.index + m[0].length]);
      for (const w of sentenceWords) if (ranges.some(([from, to]) => w.start >= from && w.start < to)) excluded++;
    }
    sentences.push({ firstWord: allWords.length, wordCount: sentenceWords.length - excluded, cited });
    for (const w of sentenceWords) allWords.push(w);
  }
  const mentions = matcher.match(allWords);
  const ownMentions = mentions.filter((m) => m.role === 'own');
  const ownIndex = mentions.findIndex((m) => m.role === 'own');

  const owners = new Map<string, 'own' | 'competitor' | null>();
  const ownerOf = (url: string) => {
    let owner = owners.get(url);
    if (owner === undefined) {
      owner = matcher.ownerOfUrl(url)?.role ?? null;
      owners.set(url, owner);
    }
    return owner;
  };
  let ownCitations = 0;
  let competitorCitations = 0;
  for (const citation of citations) {
    const owner = ownerOf(citation.url);
    if (owner === 'own') ownCitations++;
    else if (owner === 'competitor') competitorCitations++;
  }

  const totalWords = sentences.reduce((sum, s) => sum + s.wordCount, 0);
  let wc = 0;
  let pawc = 0;
  sentences.forEach((sentence, i) => {
    if (sentence.cited.size === 0) return;
    let own = 0;
    for (const url of sentence.cited) if (ownerOf(url) === 'own') own++;
    if (own === 0) return;
    const share = (sentence.wordCount * own) / sentence.cited.size;
    wc += share;
    pawc += share * Math.exp(-i / sentences.length);
  });

  return {
    mentions: mentions.map((m: EntityMention) => ({ key: m.key, role: m.role, count: m.count })),
    ownMentioned: ownMentions.length > 0,
    ownRank: ownIndex === -1 ? null : ownIndex + 1,
    competitorsMentioned: mentions.length - ownMentions.length,
    citations: citations.length,
    ownCitations,
    competitorCitations,
    wordCount: totalWords === 0 ? 0 : wc / totalWords,
    positionAdjustedWordCount: totalWords === 0 ? 0 : pawc / totalWords,
    sentiment: ownMentions.length === 0 ? null : sentimentOf(allWords, sentences, matcher),
  };
}

function sentimentOf(
  allWords: { word: string; start: number }[],
  sentences: Sentence[],
  matcher: EntityMatcher,
): number {
  let positive = 0;
  let negative = 0;
  sentences.forEach((sentence, i) => {
    const end = sentences[i + 1]?.firstWord ?? allWords.length;
    const slice = allWords.slice(sentence.firstWord, end);
    if (!matcher.match(slice).some((m) => m.role === 'own')) return;
    slice.forEach((w, j) => {
      const polarity = POSITIVE.has(w.word) ? 1 : NEGATIVE.has(w.word) ? -1 : 0;
      if (polarity === 0) return;
      const negated = j > 0 && NEGATORS.has(slice[j - 1]!.word);
      if (polarity > 0 !== negated) positive++;
      else negative++;
    });
  });
  return positive + negative === 0 ? 0 : (positive - negative) / (positive + negative);
}
