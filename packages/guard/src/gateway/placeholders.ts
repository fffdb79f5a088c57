import type { PlaceholderFor } from '../detect/types.ts';

/** Per-request placeholders `[<RID>_<TYPE>_<n>]` and the map that can put the user's values back. */
export interface RequestPlaceholders {
  /** The same (type, value) gets the same placeholder for the whole request, input and output alike. */
  placeholderFor: PlaceholderFor;
  /** From now on new placeholders (output detections) are never restored: only the user's own values are. */
  endInput(): void;
  /** Replaces input placeholders in `text` by the values they stand for. */
  restore(text: string): string;
  /** A placeholder for withheld content that is no detection (an over-long unverifiable span). */
  withheld(): string;
  /** Longest placeholder handed out so far (bounds what a stream must hold back to restore one). */
  readonly maxLength: number;
  readonly restorable: number;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function createRequestPlaceholders(rid: string): RequestPlaceholders {
  const byValue = new Map<string, string>();
  const perType = new Map<string, number>();
  const originals = new Map<string, string>();
  let inputPhase = true;
  let maxLength = 0;
  let pattern: RegExp | undefined;

  const next = (type: string) => {
    const n = (perType.get(type) ?? 0) + 1;
    perType.set(type, n);
    const placeholder = `[${rid}_${type}_${n}]`;
    if (placeholder.length > maxLength) maxLength = placeholder.length;
    return placeholder;
  };

  return {
    placeholderFor(type, value) {
      const key = `${type}\u0000${value}`;
      let placeholder = byValue.get(key);
      if (placeholder === undefined) {
        placeholder = next(type);
        byValue.set(key, placeholder);
        if (inputPhase) originals.set(placeholder, value);
      }
      return placeholder;
    },
    endInput() {
      inputPhase = false;
    },
    restore(text) {
      if (originals.size === 0 || !text.includes('[')) return text;
      pattern ??= new RegExp(`\\[${escapeRegExp(rid)}_[^\\]\\n]{1,200}?_\\d+\\]`, 'g');
      return text.replace(pattern, (match) => originals.get(match) ?? match);
    },
    withheld() {
      return next('WITHHELD');
    },
    get maxLength() {
      return maxLength;
    },
    get restorable() {
      return originals.size;
    },
  };
}
