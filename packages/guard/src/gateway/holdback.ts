// Which tail of not-yet-released stream text could still grow into a detection, and so must be held back.

const isSpace = (code: number) =>
  code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x2028 || code === 0x2029 || code === 0x3000;

/** A short group of digits or capitals and its separator: card, phone, IBAN and SSN groups ("4539 ", "(415) "). */
const GROUP = /[+(]?[A-Z0-9]{1,6}\)?[ .-]{1,2}$/;
/** The trailing run may only join earlier groups when it is itself digits, capitals or group punctuation. */
const GROUPABLE = /^[A-Z0-9+().-]*$/;
/** Longest run of joined groups held back (a spaced IBAN is 42 characters, a spaced phone number ~20). */
const MAX_JOINED = 48;
const PEM_BEGIN = '-----BEGIN ';
const PEM_END = /-----END [^\n]{0,80}?-----/;

/**
 * The index from which `text` must be held back: the trailing run without whitespace (an entity arriving as
 * `jo`, `hn@exa`, `mple.com` stays held until a whitespace ends it), extended back over spaced digit or
 * capital groups (`4539 1488 0343 `, `+1 415 555 `, `DE89 3704 `), and back to an unterminated
 * `-----BEGIN ` (a PEM block is held until its END line). Everything before the index can no longer be part
 * of a growing entity, except multi-word phrases, which the caller catches by scanning (see stream-guard.ts).
 */
export function holdbackStart(text: string): number {
  let start = text.length;
  while (start > 0 && !isSpace(text.charCodeAt(start - 1))) start--;
  if (GROUPABLE.test(text.slice(start))) {
    let joined = 0;
    while (joined < MAX_JOINED && start > 0) {
      const match = GROUP.exec(text.slice(Math.max(0, start - 10), start));
      if (!match) break;
      start -= match[0].length;
      joined += match[0].length;
    }
  }
  const begin = text.lastIndexOf(PEM_BEGIN);
  if (begin >= 0 && begin < start && !PEM_END.test(text.slice(begin + PEM_BEGIN.length))) start = begin;
  return start;
}

/** Restore only (no detection): hold back a trailing `[` that could still become one of our placeholders. */
export function placeholderHoldbackStart(text: string, maxPlaceholderLength: number): number {
  const open = text.lastIndexOf('[');
  if (open < 0 || text.indexOf(']', open) >= 0) return text.length;
  return text.length - open <= maxPlaceholderLength ? open : text.length;
}

/** Where an unterminated PEM block that is being withheld ends in `text`, or -1 while it goes on. */
export function pemEndIndex(text: string): number {
  const match = PEM_END.exec(text);
  return match ? match.index + match[0].length : -1;
}

/** Index of the first whitespace in `text`, or -1. */
export function firstSpace(text: string): number {
  for (let i = 0; i < text.length; i++) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}
