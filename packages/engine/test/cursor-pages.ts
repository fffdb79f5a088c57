// Test helpers for keyset-paginated lists: walk every page, and edit a cursor the way a client might.
import assert from 'node:assert/strict';

/**
 * Every row of a list, following its next cursor from the first page with `limit` 2: `get(url)` answers the page,
 * `next` names the body's cursor field. Also answers each cursor seen.
 */
export async function allPages(
  get: (url: string) => Promise<{ status: number; body: any }>,
  path: string,
  next: 'nextCursor' | 'next_cursor',
  id: (row: any) => string = (row) => row.id,
) {
  const seen: string[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  const separator = path.includes('?') ? '&' : '?';
  do {
    const url: string = `${path}${separator}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await get(url);
    assert.equal(page.status, 200, `${url}: ${JSON.stringify(page.body)}`);
    assert.ok(page.body.data.length <= 2);
    seen.push(...page.body.data.map(id));
    cursor = page.body[next];
    if (cursor) cursors.push(cursor);
  } while (cursor && seen.length < 100);
  return { seen, cursors };
}

/** The cursor with one character of the last id inside it changed (its checksum kept). */
export function tamperCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const edited = text.replace(/[0-9a-f](?=[^0-9a-f]*"\][^\]]*$)/, (c) => (c === '0' ? '1' : '0'));
  assert.notEqual(edited, text);
  return Buffer.from(edited, 'utf8').toString('base64url');
}
