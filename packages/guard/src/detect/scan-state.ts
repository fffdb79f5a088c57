// State shared by the built-in detectors during one pass over a text.
import { builtinPattern } from './builtin-patterns.ts';
import { type Evidence, localAiScoreOf, regexScoreOf } from './scoring.ts';
import { type CsvHeader, csvHeaderFor, newRowCursor, parseCsvHeader, type RowCursor } from './text-features.ts';
import type { Candidate } from './types.ts';

/** Which built-in detectors run, and the category each reports (a stored pattern may recategorize a built-in). */
export interface BuiltinSelection {
  readonly enabled: ReadonlySet<string>;
  readonly categories: ReadonlyMap<string, string>;
  /** Category and base score of each enabled type: one lookup per emitted candidate. */
  readonly emitted: ReadonlyMap<string, { readonly category: string; readonly base: number }>;
  /** Fast flags for the hot loop. */
  readonly email: boolean;
  readonly phone: boolean;
  readonly card: boolean;
  readonly ssn: boolean;
  readonly iban: boolean;
  readonly ip: boolean;
  readonly url: boolean;
  readonly secretPrefixes: boolean;
  readonly password: boolean;
  readonly injection: boolean;
  readonly privateKey: boolean;
  readonly jwt: boolean;
}

const SECRET_PREFIX_TYPES = [
  'AWS_ACCESS_KEY',
  'GITHUB_TOKEN',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'STRIPE_KEY',
  'SLACK_TOKEN',
  'GOOGLE_API_KEY',
];

/** Builds the selection for the given built-in names with their categories. */
export function selectBuiltins(categories: ReadonlyMap<string, string>): BuiltinSelection {
  const enabled = new Set(categories.keys());
  return {
    enabled,
    categories,
    emitted: new Map(
      [...categories].map(([type, category]) => [type, { category, base: builtinPattern(type)?.baseScore ?? 0.6 }]),
    ),
    email: enabled.has('EMAIL'),
    phone: enabled.has('PHONE_NUMBER'),
    card: enabled.has('CREDIT_CARD'),
    ssn: enabled.has('US_SSN'),
    iban: enabled.has('IBAN'),
    ip: enabled.has('IP_ADDRESS'),
    url: enabled.has('URL'),
    secretPrefixes: SECRET_PREFIX_TYPES.some((t) => enabled.has(t)),
    password: enabled.has('GENERIC_PASSWORD'),
    injection: enabled.has('PROMPT_INJECTION'),
    privateKey: enabled.has('PRIVATE_KEY'),
    jwt: enabled.has('JWT'),
  };
}

/** One text's pass: the text, the enabled detectors, the candidates found so far and per-text caches. */
export class ScanState {
  readonly text: string;
  readonly n: number;
  readonly out: Candidate[] = [];
  readonly sel: BuiltinSelection;

  private header: CsvHeader | undefined;
  private rowCursor: RowCursor | undefined;

  /**
   * Where decoding stops: the end of the last token decoded (see url-encoded.ts), or the text's length for a
   * decoded view itself, which is never decoded again.
   */
  decodedUntil = 0;
  /** True once candidates were added out of text order (from a decoded view or a table column). */
  unordered = false;
  /** Password columns of tables read so far (see credential-columns.ts). */
  columnScans = 0;

  constructor(text: string, sel: BuiltinSelection) {
    this.text = text;
    this.n = text.length;
    this.sel = sel;
  }

  private markerSearched: Map<string, number> | undefined;

  /** Row position for CSV/markdown header lookups (see csvHeaderFor), created on first use. */
  private get rows(): RowCursor {
    this.rowCursor ??= newRowCursor();
    return this.rowCursor;
  }

  /**
   * Position of `marker` in [from, from + window), or -1. Remembers how far each marker was searched in vain, so
   * a text with thousands of BEGIN lines and no END line costs one pass, not one per BEGIN.
   */
  findEndMarker(marker: string, from: number, window: number): number {
    const limit = Math.min(this.n, from + window);
    this.markerSearched ??= new Map();
    const searched = this.markerSearched.get(marker) ?? -1;
    const start = searched > from ? searched - marker.length + 1 : from;
    if (start >= limit) return -1;
    const at = this.text.slice(start, limit).indexOf(marker);
    if (at >= 0) return start + at;
    this.markerSearched.set(marker, limit);
    return -1;
  }

  private pipe: boolean | undefined;

  /**
   * The header cell of the CSV/TSV/markdown column holding `start` (see csvHeaderFor). A text whose first line is
   * no delimited header and that holds no `|` has none, known without moving the row cursor.
   */
  columnHeaderAt(start: number): string | undefined {
    const header = this.csvHeader();
    if (header.delimiters.length === 0) {
      this.pipe ??= this.text.includes('|');
      if (!this.pipe) return undefined;
    }
    return csvHeaderFor(this.text, header, start, this.rows);
  }

  /** The text's first line parsed as a delimited header, computed on first use. */
  csvHeader(): CsvHeader {
    this.header ??= parseCsvHeader(this.text);
    return this.header;
  }

  /** Records a candidate of a built-in type, scored from its evidence; a disabled type is silently skipped. */
  emit(type: string, start: number, end: number, ev: Evidence, baseAdjust = 0): void {
    const info = this.sel.emitted.get(type);
    if (info === undefined) return;
    const base = info.base + baseAdjust;
    this.out.push({
      type,
      category: info.category,
      start,
      end,
      value: this.text.slice(start, end),
      regexScore: regexScoreOf(base, ev),
      localAiScore: localAiScoreOf(base, ev),
      blocklisted: false,
    });
  }
}

const scratch: Evidence = { valid: null, context: 0, placeholder: false, strength: 0.5, ambiguity: 0 };

/**
 * Evidence with the given fields, the rest neutral. The object is reused by the next call (the hot path scores
 * thousands of matches per text): pass it straight to emit() or the scoring functions, never keep it.
 */
export function evidence(partial: Partial<Evidence>): Evidence {
  scratch.valid = partial.valid ?? null;
  scratch.context = partial.context ?? 0;
  scratch.placeholder = partial.placeholder ?? false;
  scratch.strength = partial.strength ?? 0.5;
  scratch.ambiguity = partial.ambiguity ?? 0;
  return scratch;
}
