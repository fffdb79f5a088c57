import { createHash } from 'node:crypto';

type Position = (string | number)[];

function checksum(payload: string): string {
  return createHash('sha256').update(payload).digest('base64url').slice(0, 11);
}

/**
 * A keyset cursor: the sort position of the last row shown (e.g. `[createdAt, id]`), bound to one list by `kind`,
 * base64url-encoded with a checksum. Opaque to clients and never an offset.
 */
export function encodeCursor(kind: string, position: Position): string {
  const payload = JSON.stringify([kind, ...position]);
  return Buffer.from(`${payload}.${checksum(payload)}`, 'utf8').toString('base64url');
}

/**
 * Reads a cursor `encodeCursor(kind, …)` made: the position, or undefined without a cursor. A cursor of another list,
 * an edited one (the checksum catches it; a cursor grants nothing, every page is still filtered by scope) or one of
 * another shape than `shape` (a type per position) throws `invalid()`.
 */
export function decodeCursor<const S extends readonly ('string' | 'number')[]>(
  kind: string,
  cursor: string | undefined,
  shape: S,
  invalid: () => Error,
): { [K in keyof S]: S[K] extends 'number' ? number : string } | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  if (cursor.length > 512) throw invalid();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const dot = text.lastIndexOf('.');
  const payload = text.slice(0, dot);
  if (dot < 0 || checksum(payload) !== text.slice(dot + 1)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed[0] !== kind || parsed.length !== shape.length + 1) throw invalid();
  const position = parsed.slice(1);
  if (!position.every((value, i) => typeof value === shape[i])) throw invalid();
  return position as { [K in keyof S]: S[K] extends 'number' ? number : string };
}

/**
 * One page of a keyset list fetched with `limit + 1` rows: the rows shown, and as `next` a cursor (`encodeCursor(kind,
 * position(last row shown))`) when the extra row says more exist, else null.
 */
export function keysetPage<R>(
  kind: string,
  rows: readonly R[],
  limit: number,
  position: (row: R) => Position,
): { rows: R[]; next: string | null } {
  const shown = rows.slice(0, limit);
  return { rows: shown, next: rows.length > limit ? encodeCursor(kind, position(shown.at(-1)!)) : null };
}
