/** Where a citation came from in an engine's answer. */
export type CitationSource = 'citations' | 'annotation' | 'search_results' | 'text';

export interface Citation {
  url: string;
  title: string | null;
  source: CitationSource;
}

const MAX_CITATIONS = 100;
const MAX_URL = 2048;
const URL_IN_TEXT = /https?:\/\/[^\s<>()[\]{}"'`|\\^]+/g;
const TRAILING = /[.,;:!?*_~]+$/;

/** The URL without a trailing punctuation mark, or null when it is not an absolute http(s) URL. */
export function cleanUrl(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > MAX_URL) return null;
  const trimmed = raw.trim().replace(TRAILING, '');
  try {
    const url = new URL(trimmed);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** The registrable-looking host of a URL: lower case, without `www.` (`https://www.Acme.com/x` → `acme.com`). */
export function citationDomain(url: string): string {
  try {
    const host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
    return host.startsWith('www.') ? host.slice(4) : host;
  } catch {
    return '';
  }
}

/** True when `domain` is `target` or one of its subdomains. */
export function domainMatches(domain: string, target: string): boolean {
  return domain === target || domain.endsWith(`.${target}`);
}

/**
 * The sources of a chat-completions answer, in order and without duplicates: the provider's `citations` array
 * (strings or `{url, title}`), `search_results`, the message's `url_citation` annotations, then URLs written in
 * the text (markdown links included). At most 100.
 */
export function extractCitations(body: Record<string, unknown>, text: string): Citation[] {
  const seen = new Set<string>();
  const out: Citation[] = [];
  const add = (rawUrl: unknown, title: unknown, source: CitationSource) => {
    if (out.length >= MAX_CITATIONS) return;
    const url = cleanUrl(rawUrl);
    if (!url || seen.has(url)) return;
    seen.add(url);
    out.push({ url, title: typeof title === 'string' ? title.slice(0, 500) : null, source });
  };
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, MAX_CITATIONS) : []);
  for (const item of list(body.citations)) {
    if (typeof item === 'string') add(item, null, 'citations');
    else if (item && typeof item === 'object') {
      const c = item as Record<string, unknown>;
      add(c.url, c.title, 'citations');
    }
  }
  for (const item of list(body.search_results)) {
    if (item && typeof item === 'object')
      add((item as Record<string, unknown>).url, (item as Record<string, unknown>).title, 'search_results');
  }
  const choice = list(body.choices)[0] as Record<string, unknown> | undefined;
  const message = (choice?.message ?? null) as Record<string, unknown> | null;
  for (const item of list(message?.annotations)) {
    if (!item || typeof item !== 'object') continue;
    const a = item as Record<string, unknown>;
    const inner = (a.url_citation ?? a) as Record<string, unknown>;
    if (a.type === 'url_citation' || typeof inner.url === 'string') add(inner.url, inner.title, 'annotation');
  }
  for (const match of text.slice(0, 200_000).matchAll(URL_IN_TEXT)) add(match[0], null, 'text');
  return out;
}
