import { citationDomain } from './citations.ts';

/** A canonical target of the graph as the matcher sees it. */
export interface MatchEntity {
  key: string;
  name: string;
  /** `own` (the workspace's brand, products, pages) or `competitor`. */
  role: 'own' | 'competitor';
  /** Surface forms: the name, the aliases and `attributes.names`. */
  names: string[];
  /** Domains whose citations count for this entity (the target URL's host, `attributes.domains`). */
  domains: string[];
}

const MAX_NAMES = 60;
const MAX_TOKENS_PER_NAME = 12;
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Folds text for matching: Unicode compatibility decomposition, diacritics removed, lower case (`Café` → `cafe`,
 * `ＡＣＭＥ` → `acme`).
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The words of folded text with their character offsets. */
export function words(folded: string): { word: string; start: number }[] {
  const out: { word: string; start: number }[] = [];
  for (const match of folded.matchAll(WORD)) out.push({ word: match[0], start: match.index });
  return out;
}

export interface EntityMention {
  key: string;
  role: 'own' | 'competitor';
  /** Index of the first word of the first mention. */
  firstWord: number;
  count: number;
}

/**
 * Finds canonical targets in text. A name matches as a whole sequence of words (letters and digits), compared
 * after folding case and diacritics: `ACME`, `Acmé` and `Acme's` mention Acme; `Acmeology` and `subacme` do not,
 * because a name never matches part of a word. Matching walks the text once and looks candidates up by their
 * first word, so its time is linear in the text whatever the graph's size.
 */
export class EntityMatcher {
  readonly entities: MatchEntity[];
  readonly #byFirstWord = new Map<string, { entity: number; tokens: string[] }[]>();
  readonly #byDomain = new Map<string, MatchEntity>();

  constructor(entities: MatchEntity[]) {
    this.entities = entities;
    entities.forEach((entity, index) => {
      for (const domain of entity.domains) if (!this.#byDomain.has(domain)) this.#byDomain.set(domain, entity);
      const seen = new Set<string>();
      for (const name of entity.names.slice(0, MAX_NAMES)) {
        const tokens = words(foldText(name))
          .map((w) => w.word)
          .slice(0, MAX_TOKENS_PER_NAME);
        const id = tokens.join(' ');
        if (tokens.length === 0 || seen.has(id)) continue;
        seen.add(id);
        const list = this.#byFirstWord.get(tokens[0]!) ?? [];
        list.push({ entity: index, tokens });
        this.#byFirstWord.set(tokens[0]!, list);
      }
    });
    // Longest names first, so "Acme Cloud" wins over "Acme" at the same position.
    for (const list of this.#byFirstWord.values()) list.sort((a, b) => b.tokens.length - a.tokens.length);
  }

  /** Mentions of each entity in the words, ordered by first appearance. */
  match(textWords: readonly { word: string }[]): EntityMention[] {
    const found = new Map<number, EntityMention>();
    for (let i = 0; i < textWords.length; i++) {
      const candidates = this.#byFirstWord.get(textWords[i]!.word);
      if (!candidates) continue;
      for (const candidate of candidates) {
        let ok = candidate.tokens.length <= textWords.length - i;
        for (let j = 1; ok && j < candidate.tokens.length; j++) ok = textWords[i + j]!.word === candidate.tokens[j];
        if (!ok) continue;
        const entity = this.entities[candidate.entity]!;
        const mention = found.get(candidate.entity);
        if (mention) mention.count++;
        else found.set(candidate.entity, { key: entity.key, role: entity.role, firstWord: i, count: 1 });
        i += candidate.tokens.length - 1;
        break;
      }
    }
    return [...found.values()].sort((a, b) => a.firstWord - b.firstWord);
  }

  /** The entity a cited URL belongs to (by domain), or undefined. */
  ownerOfUrl(url: string): MatchEntity | undefined {
    const labels = citationDomain(url).split('.');
    // The host itself, then each parent domain: `docs.acme.com` belongs to `acme.com`.
    for (let i = 0; i < labels.length - 1; i++) {
      const owner = this.#byDomain.get(labels.slice(i).join('.'));
      if (owner) return owner;
    }
    return undefined;
  }
}
