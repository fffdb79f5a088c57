import { decodeCursor, keysetPage } from '@keel/core';
import { RuntimeErrors } from './runtime-errors.ts';

const invalidCursor = () => RuntimeErrors.invalid('cursor is not a next_cursor of this list');

/**
 * The id a page of the runtime list `kind` continues after (core's keyset cursor, newest id first), or undefined
 * without a cursor; a cursor of another list, an edited one or one of another shape is a 400.
 */
export function cursorAfterId(kind: string, cursor: string | undefined): string | undefined {
  return decodeCursor(`runtime-${kind}`, cursor, ['string'], invalidCursor)?.[0];
}

/**
 * One page of the runtime list `kind`, fetched newest-id-first with `limit + 1` rows: the rows shown, and a cursor
 * after the last one's id as `next_cursor` when the extra row says more exist.
 */
export function idPage<R extends { id: string }, V>(
  kind: string,
  rows: readonly R[],
  limit: number,
  view: (row: R) => V,
) {
  const page = keysetPage(`runtime-${kind}`, rows, limit, (last) => [last.id]);
  return { data: page.rows.map(view), next_cursor: page.next };
}
