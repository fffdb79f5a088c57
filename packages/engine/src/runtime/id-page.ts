/**
 * One page of a runtime list fetched newest-id-first with `limit + 1` rows: the rows shown, and the last one's id
 * as `next_cursor` when the extra row says more exist.
 */
export function idPage<R extends { id: string }, V>(rows: readonly R[], limit: number, view: (row: R) => V) {
  const page = rows.slice(0, limit);
  return { data: page.map(view), next_cursor: rows.length > limit ? page.at(-1)!.id : null };
}
