import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, keysetPage } from '../src/index.ts';

const invalid = () => new Error('invalid cursor');

test('keysetPage shows `limit` rows and a cursor after the last shown one only when the extra row exists', () => {
  const rows = [{ id: 'c' }, { id: 'b' }, { id: 'a' }];
  const first = keysetPage('letters', rows, 2, (row) => [row.id]);
  assert.deepEqual(first.rows, [{ id: 'c' }, { id: 'b' }]);
  assert.deepEqual(decodeCursor('letters', first.next!, ['string'], invalid), ['b']);
  assert.throws(() => decodeCursor('numbers', first.next!, ['string'], invalid), /invalid cursor/);
  const last = keysetPage('letters', rows.slice(2), 2, (row) => [row.id]);
  assert.deepEqual(last, { rows: [{ id: 'a' }], next: null });
  assert.deepEqual(
    keysetPage('letters', [], 2, (row: { id: string }) => [row.id]),
    { rows: [], next: null },
  );
  const exact = keysetPage('letters', rows.slice(0, 2), 2, (row) => [row.id]);
  assert.equal(exact.next, null, 'exactly `limit` rows: no next page');
  const composite = keysetPage(
    'dated',
    [
      { at: 't2', id: 'x' },
      { at: 't1', id: 'y' },
    ],
    1,
    (r) => [r.at, r.id],
  );
  assert.deepEqual(decodeCursor('dated', composite.next!, ['string', 'string'], invalid), ['t2', 'x']);
});
