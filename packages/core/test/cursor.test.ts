import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, encodeCursor } from '../src/index.ts';

const invalid = () => new Error('invalid cursor');

test('a keyset cursor round-trips its position, is opaque, and is bound to its list', () => {
  const cursor = encodeCursor('orders', ['2026-11-26T10:00:00.000Z', 'a1b2']);
  assert.match(cursor, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeCursor('orders', cursor, ['string', 'string'], invalid), ['2026-11-26T10:00:00.000Z', 'a1b2']);
  assert.deepEqual(decodeCursor('seq', encodeCursor('seq', [42]), ['number'], invalid), [42]);
  assert.equal(decodeCursor('orders', undefined, ['string'], invalid), undefined);
  assert.throws(() => decodeCursor('carts', cursor, ['string', 'string'], invalid), /invalid cursor/, 'another list');
});

test('an edited, truncated, reshaped or made-up cursor is refused', () => {
  const cursor = encodeCursor('orders', ['2026-11-26T10:00:00.000Z', 'a1b2']);
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const edited = Buffer.from(text.replace('a1b2', 'a1b3'), 'utf8').toString('base64url');
  for (const bad of [
    edited,
    cursor.slice(0, -3),
    Buffer.from(JSON.stringify(['orders', 'x', 'y'])).toString('base64url'),
    'not a cursor',
    'x'.repeat(600),
  ]) {
    assert.throws(() => decodeCursor('orders', bad, ['string', 'string'], invalid), /invalid cursor/, bad);
  }
  assert.throws(() => decodeCursor('orders', cursor, ['number', 'string'], invalid), /invalid cursor/, 'shape');
  assert.throws(() => decodeCursor('orders', cursor, ['string'], invalid), /invalid cursor/, 'length');
});
