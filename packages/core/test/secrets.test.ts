import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearerToken, constantTimeEqual, generateKey, sha256Hex } from '../src/index.ts';

test('generated keys have the prefix, 32 base62 characters, and do not repeat', () => {
  const keys = new Set(Array.from({ length: 200 }, () => generateKey('kg')));
  assert.equal(keys.size, 200);
  for (const key of keys) assert.match(key, /^kg_[0-9A-Za-z]{32}$/);
});

test('sha256Hex is the hex SHA-256 digest', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('constantTimeEqual compares values of any length', () => {
  assert.equal(constantTimeEqual('token', 'token'), true);
  assert.equal(constantTimeEqual('token', 'token2'), false);
  assert.equal(constantTimeEqual('', ''), true);
});

test('bearerToken reads only the Bearer scheme', () => {
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('bearer   abc '), 'abc');
  assert.equal(bearerToken('Basic abc'), undefined);
  assert.equal(bearerToken('Bearer'), undefined);
  assert.equal(bearerToken('Bearer a b'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});
