import { decodeCursor as decodeKeysetCursor, encodeCursor as encodeKeysetCursor } from '@keel/core';
import { GeoErrors } from './errors.ts';

/** A geo list's cursor (core's keyset cursor): the last row's id, bound to one list by `kind`. */
export function encodeCursor(kind: string, lastId: string | number): string {
  return encodeKeysetCursor(kind, [String(lastId)]);
}

/** The last row's id a cursor of this list carries; 400 `GEO_INVALID_CURSOR` for anything else. */
export function decodeCursor(kind: string, cursor: string | undefined): string | undefined {
  const position = decodeKeysetCursor(kind, cursor, ['string'], GeoErrors.invalidCursor);
  if (position === undefined) return undefined;
  if (!/^[0-9a-f-]{1,36}$/.test(position[0])) throw GeoErrors.invalidCursor();
  return position[0];
}
