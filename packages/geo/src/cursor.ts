import { GeoErrors } from './errors.ts';

/**
 * Keyset cursors: the last row's id, base64url-encoded with a kind tag so a cursor of one list is not accepted by
 * another. Opaque to clients; never an offset.
 */
export function encodeCursor(kind: string, lastId: string | number): string {
  return Buffer.from(`${kind}:${lastId}`, 'utf8').toString('base64url');
}

export function decodeCursor(kind: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(`${kind}:`)) throw GeoErrors.invalidCursor();
  const value = text.slice(kind.length + 1);
  if (!/^[0-9a-f-]{1,36}$/.test(value)) throw GeoErrors.invalidCursor();
  return value;
}
