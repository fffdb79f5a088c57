import { decodeCursor as decodeKeysetCursor, keysetPage } from '@keel/core';
import { GeoErrors } from './errors.ts';

/**
 * One page of a geo list fetched with `limit + 1` rows: the rows shown and, when the extra row exists, the cursor after
 * the last one's id (core's keyset cursor, bound to the list by `kind`), else null.
 */
export function pageOf<R extends { id: string | number }>(
  kind: string,
  rows: readonly R[],
  limit: number,
): { rows: R[]; next: string | null } {
  return keysetPage(kind, rows, limit, (last) => [String(last.id)]);
}

/** The last row's id a cursor of this list carries; 400 `GEO_INVALID_CURSOR` for anything else. */
export function decodeCursor(kind: string, cursor: string | undefined): string | undefined {
  const position = decodeKeysetCursor(kind, cursor, ['string'], GeoErrors.invalidCursor);
  if (position === undefined) return undefined;
  if (!/^[0-9a-f-]{1,36}$/.test(position[0])) throw GeoErrors.invalidCursor();
  return position[0];
}
