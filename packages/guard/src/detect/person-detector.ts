// PERSON: people's names in English text, found by compromise (https://github.com/spencermountain/compromise, MIT),
// a rule-and-lexicon part-of-speech tagger that runs offline and is loaded only when PERSON is switched on.
//
// Names have no structure to check, so the type is seeded inactive (an operator turns it on, see the README) and
// scores in the mask band only: base 0.60, a full name (two words or more) counts as typical, a lone given or family
// name is ambiguous unless a naming word or a title stands before it (`name:`, `patient`, `Dr.`, `Mrs`). The tagger
// is about a hundred times slower than the rest of the engine (about 0.1 MB/s against 20–40), which is the other
// reason it is opt-in; it reads the text in chunks of whole lines and checks the scan's deadline between them.
import { createRequire } from 'node:module';
import { checkDeadline } from './errors.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { type Lexicon, lexicon, polarityBefore } from './text-features.ts';

interface Person {
  readonly offset: { readonly start: number; readonly length: number };
}
type Tagger = (text: string) => { people(): { json(options: { offset: true }): Person[] } };

let tagger: Tagger | undefined;
/** compromise's CommonJS build, required on first use (the engine's scan is synchronous). */
function load(): Tagger {
  tagger ??= createRequire(import.meta.url)('compromise') as Tagger;
  return tagger;
}

/** Words that name what follows as a person (same line, 40 characters before). */
const PERSON_WORDS: Lexicon = lexicon(
  [
    'name',
    'named',
    'fullname',
    'patient',
    'contact',
    'customer',
    'client',
    'employee',
    'applicant',
    'signed',
    'dear',
    'attn',
    'author',
    'mr',
    'mrs',
    'ms',
    'miss',
    'dr',
    'prof',
  ],
  [],
);

/** The longest piece of text given to the tagger at once (whole lines; a longer line is cut at a blank). */
const CHUNK = 2000;

/** True when the letter at `k` is an upper-case one (names are written capitalized). */
function isCapital(t: string, k: number): boolean {
  const c = t.charCodeAt(k);
  return (c >= 65 && c <= 90) || (c >= 0xc0 && c <= 0xde && c !== 0xd7);
}

/** The end of the chunk starting at `from`: the last line break (or blank) before from + CHUNK, or the text's end. */
function chunkEnd(t: string, from: number): number {
  if (t.length - from <= CHUNK) return t.length;
  const limit = from + CHUNK;
  let k = t.lastIndexOf('\n', limit);
  if (k <= from) k = t.lastIndexOf(' ', limit);
  return k <= from ? limit : k + 1;
}

/** Reports the names compromise finds in the state's text as PERSON candidates. */
export function scanPeople(st: ScanState, deadline?: number): void {
  const t = st.text;
  const nlp = load();
  for (let from = 0; from < t.length; ) {
    checkDeadline(deadline);
    const to = chunkEnd(t, from);
    const chunk = t.slice(from, to);
    if (/[A-Z\u00c0-\u00de]/.test(chunk)) {
      for (const p of nlp(chunk).people().json({ offset: true })) {
        let start = from + p.offset.start;
        let end = start + p.offset.length;
        // The tagger keeps a sentence's final dot or comma on the last word.
        while (end > start && !/\p{L}/u.test(t[end - 1]!)) end--;
        while (start < end && !/\p{L}/u.test(t[start]!)) start++;
        if (end <= start || !isCapital(t, start)) continue;
        const full = /\s/.test(t.slice(start, end));
        const context =
          polarityBefore(t, start, 40, PERSON_WORDS) > 0 || /^(?:Mrs?|Ms|Miss|Dr|Prof)\b/.test(t.slice(start, end));
        st.emit(
          'PERSON',
          start,
          end,
          evidence({ context: context ? 1 : 0, strength: full ? 1 : 0.5, ambiguity: full || context ? 0 : 0.2 }),
        );
      }
    }
    from = to;
  }
  st.unordered = true;
}
