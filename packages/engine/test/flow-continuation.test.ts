import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  acceptsOffer,
  broaderQueries,
  MAX_BROADER_SEARCHES,
  parseQuery,
  resolveProductReference,
} from '../src/flows/flow-continuation.ts';

const recent = [
  { catalogId: 'sku-1', name: 'Red Shoe' },
  { catalogId: 'sku-2', name: 'Red Shoe Deluxe' },
  { catalogId: 'sku-3', name: 'Blue Boot' },
];

test('acceptance of an alternatives offer: yes-like answers and requests for alternatives, never a negation', () => {
  for (const yes of ['yes', 'Yes please!', 'sure, show me', 'ok', 'show me alternatives', 'find something similar'])
    assert.equal(acceptsOffer(yes), true, yes);
  for (const no of ['no', 'no thanks', "don't bother", 'not now', 'what time is it', '', 'yes but not those'])
    assert.equal(acceptsOffer(no), false, no);
});

test('the broader query drops one filter at a time, then trailing words, bounded', () => {
  const steps = broaderQueries({ text: 'red running shoes', filters: { color: 'red', size: 42 }, relax: ['size'] });
  assert.deepEqual(
    steps.map((step) => [step.query, step.relaxed]),
    [
      [{ text: 'red running shoes', filters: { color: 'red' } }, ['size']],
      [{ text: 'red running shoes', filters: {} }, ['size', 'color']],
      [{ text: 'red running', filters: {} }, ['size', 'color', 'text']],
      [{ text: 'red', filters: {} }, ['size', 'color', 'text']],
    ],
  );
  const many = broaderQueries({
    text: 'a b c d e f',
    filters: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, i])),
  });
  assert.equal(many.length, MAX_BROADER_SEARCHES);
  assert.deepEqual(broaderQueries({ text: 'shoes', filters: {} }), []);
  // Without `relax`: name order (stored JSON keeps no key order).
  assert.deepEqual(
    broaderQueries({ text: 'shoes', filters: { size: 42, color: 'red' } }).map((step) => step.relaxed),
    [['color'], ['color', 'size']],
  );
  assert.deepEqual(parseQuery({ text: 'x', filters: { a: 1, b: 2 }, relax: ['b', 'zz', 'b'] })?.relax, ['b']);
});

test('parseQuery takes a string or {text, filters}; anything else is no query', () => {
  assert.deepEqual(parseQuery('red shoes'), { text: 'red shoes', filters: {} });
  assert.deepEqual(parseQuery({ text: 'x', filters: { a: 1, b: { nested: true }, c: [1] } }), {
    text: 'x',
    filters: { a: 1 },
  });
  assert.equal(parseQuery({ filters: {} }), undefined);
  assert.equal(parseQuery(42), undefined);
});

test('product references: ordinal, full name (longest wins), catalog id; missing, ambiguous, none', () => {
  const found = (message: string) => {
    const ref = resolveProductReference(message, recent);
    return ref.kind === 'found' ? [ref.product.catalogId, ref.by] : ref.kind;
  };
  assert.deepEqual(found('tell me about the second one'), ['sku-2', 'ordinal']);
  assert.deepEqual(found('#3 please'), ['sku-3', 'ordinal']);
  assert.deepEqual(found('the last one'), ['sku-3', 'ordinal']);
  assert.deepEqual(found('what about the 1st'), ['sku-1', 'ordinal']);
  assert.deepEqual(found('more on the Red Shoe Deluxe'), ['sku-2', 'name']);
  assert.deepEqual(found('details of red shoe'), ['sku-1', 'name']);
  assert.deepEqual(found('sku-3?'), ['sku-3', 'catalog_id']);
  assert.equal(found('the fifth one'), 'missing');
  assert.equal(found('more details please'), 'missing');
  assert.equal(found('compare the first and the third'), 'ambiguous');
  assert.equal(found('I would like a refund'), 'none');
  // A new search is not a detail request.
  assert.equal(found('show me the blue ones'), 'none');
  assert.equal(found('what about sandals'), 'none');
  const ambiguous = resolveProductReference('first or Blue Boot', recent);
  assert.equal(ambiguous.kind, 'ambiguous');
  assert.deepEqual(ambiguous.kind === 'ambiguous' ? ambiguous.options.map((p) => p.catalogId) : [], ['sku-1', 'sku-3']);
});
