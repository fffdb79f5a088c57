import { createLocalScanner } from '@keel/guard/scanner';

/** Guard's detection settings for anonymous data: guard's own defaults (report from 0.3, mask every detection). */
const DETECTION = { allowThreshold: 0.3, blockThreshold: 0.85, piiMode: 'MASK', timeoutMs: 250 } as const;
/** Between the texts of one scan: a paragraph break, which no detector reads across. */
const SEPARATOR = '\n\n';

export interface Scrubbed {
  text: string;
  removed: number;
}

export interface PiiScrubber {
  /** Each text with every detection replaced by `[TYPE]`, and how many were replaced in it. */
  scrubAll(texts: readonly string[]): Scrubbed[];
  /** The detection types found in a text (empty when clean). */
  find(text: string): string[];
}

/**
 * PII removal with guard's detection engine in process (its built-in library and local scorer). The texts of a
 * request are scanned in one pass (joined by paragraph breaks: the detector's fixed cost is paid once); a detection
 * crossing a break sends every text through one by one. A text that had detections is scrubbed again on its own
 * until the detector finds nothing (at most three passes, as a placeholder can join neighbours into a new match);
 * one still not clean after that is stored as `[REDACTED]`.
 */
export function createPiiScrubber(): PiiScrubber {
  const detect = createLocalScanner(DETECTION as never);

  const scrubOne = (text: string, alreadyRemoved = 0): Scrubbed => {
    let current = text;
    let removed = alreadyRemoved;
    for (let pass = 0; pass < 3; pass++) {
      const decision = detect(current);
      if (decision.detections.length === 0) return { text: current, removed };
      removed += decision.detections.length;
      current = decision.redactedText ?? '[REDACTED]';
    }
    return detect(current).detections.length === 0 ? { text: current, removed } : { text: '[REDACTED]', removed };
  };

  const scrubAll = (texts: readonly string[]): Scrubbed[] => {
    if (texts.length === 0) return [];
    if (texts.length === 1 || texts.some((t) => t.includes(SEPARATOR))) return texts.map((t) => scrubOne(t));
    const joined = texts.join(SEPARATOR);
    const decision = detect(joined);
    const out: Scrubbed[] = texts.map((text) => ({ text, removed: 0 }));
    if (decision.detections.length === 0) return out;
    const starts: number[] = [];
    let at = 0;
    for (const t of texts) {
      starts.push(at);
      at += t.length + SEPARATOR.length;
    }
    const parts: { cursor: number; pieces: string[] }[] = texts.map(() => ({ cursor: 0, pieces: [] }));
    let segment = 0;
    for (const d of [...decision.detections].sort((a, b) => a.start - b.start)) {
      while (segment + 1 < texts.length && starts[segment + 1]! <= d.start) segment++;
      const start = d.start - starts[segment]!;
      const end = d.end - starts[segment]!;
      const text = texts[segment]!;
      if (end > text.length) return texts.map((t) => scrubOne(t));
      const part = parts[segment]!;
      if (start < part.cursor) continue;
      part.pieces.push(text.slice(part.cursor, start), d.placeholder);
      part.cursor = end;
      out[segment]!.removed++;
    }
    // A text that had a detection is checked again on its own until clean.
    return out.map((o, i) =>
      o.removed === 0 ? o : scrubOne(parts[i]!.pieces.join('') + texts[i]!.slice(parts[i]!.cursor), o.removed),
    );
  };

  return {
    scrubAll,
    find(text) {
      return detect(text).detections.map((d) => d.type);
    },
  };
}
