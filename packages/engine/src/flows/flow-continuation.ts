// Product continuations of chat through flows (pure: no I/O). The spec's unavailable-result behaviour and
// product-detail continuation: what a user's next message means after a product answer, and the bounded
// broader query behind RENDER_PRODUCT_ALTERNATIVES.

/**
 * A product search: free text and exact filters (e.g. `{color: "red", max_price: 50}`); `relax` names the filters in
 * the order a broader query may give them up (others follow in name order).
 */
export interface ProductQuery {
  text: string;
  filters: Record<string, string | number | boolean>;
  relax?: string[] | undefined;
}

/** A catalog product as chat answers carry it: at least its catalog id and name. */
export type CatalogProduct = { catalogId: string; name: string } & Record<string, unknown>;

/** The products shown most recently in a session (what "the second one" refers to). */
export const RECENT_PRODUCTS = 20;
/** Catalog searches one broader query may run (each relaxes one more constraint). */
export const MAX_BROADER_SEARCHES = 4;
/** Products an alternatives answer shows. */
export const ALTERNATIVES_LIMIT = 10;

const MAX_TEXT = 500;

/** Parses a flow's `data.query` (a string, or `{text, filters}`); undefined when it is neither. */
export function parseQuery(value: unknown): ProductQuery | undefined {
  if (typeof value === 'string') return { text: value.slice(0, MAX_TEXT), filters: {} };
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { text, filters, relax } = value as { text?: unknown; filters?: unknown; relax?: unknown };
  if (typeof text !== 'string') return undefined;
  const kept: ProductQuery['filters'] = {};
  if (filters && typeof filters === 'object' && !Array.isArray(filters))
    for (const [key, filter] of Object.entries(filters).slice(0, 20))
      if (['string', 'number', 'boolean'].includes(typeof filter) && key.length <= 64)
        kept[key] = filter as string | number | boolean;
  const order = Array.isArray(relax) ? relax.filter((name): name is string => Object.hasOwn(kept, name)) : [];
  return { text: text.slice(0, MAX_TEXT), filters: kept, ...(order.length > 0 ? { relax: [...new Set(order)] } : {}) };
}

/** Products from a flow's `data.products` that carry a catalog id and a name (others are not addressable). */
export function parseProducts(value: unknown): CatalogProduct[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (item): item is CatalogProduct =>
      !!item &&
      typeof item === 'object' &&
      typeof (item as CatalogProduct).catalogId === 'string' &&
      typeof (item as CatalogProduct).name === 'string',
  );
}

/** One step of a broader query: the query to run and the constraints relaxed so far. */
export interface Relaxation {
  query: ProductQuery;
  relaxed: string[];
}

/**
 * The broader queries tried in order, at most MAX_BROADER_SEARCHES: each drops one more filter (those in `relax`
 * first, in its order, then the others in name order: stored JSON keeps no key order), then the text loses its last
 * word (never its first). `relaxed` names what was given up: the filter names, and `text` once words were dropped.
 */
export function broaderQueries(requested: ProductQuery): Relaxation[] {
  const steps: Relaxation[] = [];
  const first = requested.relax ?? [];
  const names = [
    ...first,
    ...Object.keys(requested.filters)
      .filter((name) => !first.includes(name))
      .sort(),
  ];
  const filters = { ...requested.filters };
  const relaxed: string[] = [];
  for (const name of names) {
    delete filters[name];
    relaxed.push(name);
    steps.push({ query: { text: requested.text, filters: { ...filters } }, relaxed: [...relaxed] });
  }
  let textWords = requested.text.trim().split(/\s+/).filter(Boolean);
  while (textWords.length > 1 && steps.length < MAX_BROADER_SEARCHES) {
    textWords = textWords.slice(0, -1);
    steps.push({
      query: { text: textWords.join(' '), filters: { ...filters } },
      relaxed: [...relaxed, 'text'],
    });
  }
  return steps.slice(0, MAX_BROADER_SEARCHES);
}

const normalize = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

const ACCEPT =
  /^(?:(?:yes|yeah|yep|yup|sure|ok|okay|please|go ahead|do it|why not|sounds good|show me|show them|alright|of course|absolutely)\b.*|.*\b(?:show|see|look for|find)\b.*\b(?:alternatives?|similar|other options|something else)\b.*|(?:alternatives?|similar ones?)\b.*)$/;
const DECLINE = /\b(?:no|nope|not|don ?t|never|cancel|stop)\b/;

/** Whether a message accepts an offer to look for alternatives ("yes", "sure, show me", "show me alternatives"). */
export function acceptsOffer(message: string): boolean {
  const text = normalize(message.slice(0, 1000));
  return text.length > 0 && !DECLINE.test(text) && ACCEPT.test(text);
}

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  '1st': 1,
  '2nd': 2,
  '3rd': 3,
  '4th': 4,
  '5th': 5,
  '6th': 6,
  '7th': 7,
  '8th': 8,
  '9th': 9,
  '10th': 10,
};
const DETAIL_WORDS =
  /\b(?:details?|detailed|more about|tell me (?:more )?about|describe|description|specs?|specifications?|more info|information|more on|ingredients|dimensions|materials?)\b/;

export type ProductReference =
  | { kind: 'found'; product: CatalogProduct; by: 'ordinal' | 'name' | 'catalog_id' }
  | { kind: 'ambiguous'; options: CatalogProduct[] }
  | { kind: 'missing' }
  | { kind: 'none' };

/**
 * What product a message refers to among the recent ones: an exact catalog id, an ordinal ("the second one",
 * "2nd", "#2", "number 2", "the last one"), or a full product name. Several different products → `ambiguous`;
 * a detail request without a usable reference (or an ordinal past the list) → `missing`; no reference and no
 * detail wording → `none` (the message is not a product-detail request).
 */
export function resolveProductReference(message: string, recent: readonly CatalogProduct[]): ProductReference {
  const raw = message.slice(0, 2000);
  const text = ` ${normalize(raw)} `;
  const matches = new Map<string, { product: CatalogProduct; by: 'ordinal' | 'name' | 'catalog_id' }>();
  const tokens = new Set(raw.split(/[\s,;:!?()"'<>]+/).filter(Boolean));
  for (const product of recent)
    if (tokens.has(product.catalogId) || tokens.has(product.catalogId.replace(/[.]+$/, '')))
      matches.set(product.catalogId, { product, by: 'catalog_id' });
  const positions = new Set<number>();
  let ordinalAsked = false;
  for (const [word, position] of Object.entries(ORDINALS))
    if (text.includes(` ${word} `)) {
      ordinalAsked = true;
      positions.add(position);
    }
  for (const found of raw.matchAll(/(?:#|\bno\.?\s*|\bnumber\s+|\bitem\s+|\boption\s+)(\d{1,2})\b/gi)) {
    ordinalAsked = true;
    positions.add(Number(found[1]));
  }
  if (/\b(?:last|final) (?:one|item|option|product)\b/.test(text) || text.includes(' the last ')) {
    ordinalAsked = true;
    positions.add(recent.length);
  }
  for (const position of positions) {
    const product = recent[position - 1];
    if (product) matches.set(product.catalogId, { product, by: 'ordinal' });
  }
  // A full name; a name inside a longer matched name ("Red Shoe" in "Red Shoe Deluxe") does not count.
  const named = recent
    .map((product) => ({ product, name: normalize(product.name) }))
    .filter((entry) => entry.name.length >= 3 && text.includes(` ${entry.name} `));
  for (const entry of named)
    if (!named.some((other) => other.name.length > entry.name.length && other.name.includes(entry.name)))
      matches.set(entry.product.catalogId, { product: entry.product, by: 'name' });
  if (matches.size === 1) return { kind: 'found', ...[...matches.values()][0]! };
  if (matches.size > 1) return { kind: 'ambiguous', options: [...matches.values()].map((m) => m.product) };
  if (ordinalAsked || DETAIL_WORDS.test(text)) return { kind: 'missing' };
  return { kind: 'none' };
}
