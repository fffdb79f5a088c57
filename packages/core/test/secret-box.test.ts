import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createSecretBox, loadSecretKey } from '../src/index.ts';

describe('secret box (AES-256-GCM)', () => {
  const key = 'a'.repeat(64);

  test('round-trips, uses a fresh IV each time, and never contains the plaintext', () => {
    const box = createSecretBox(key);
    const one = box.encrypt('s3cret-value');
    const two = box.encrypt('s3cret-value');
    assert.notEqual(one, two);
    assert.equal(one.includes('s3cret'), false);
    assert.equal(box.decrypt(one), 's3cret-value');
    assert.equal(box.decrypt(two), 's3cret-value');
  });

  test('a tampered text or another key fails to decrypt', () => {
    const box = createSecretBox(key);
    const sealed = box.encrypt('value');
    const parts = sealed.split('.');
    const flipped = parts[3]!.startsWith('A') ? `B${parts[3]!.slice(1)}` : `A${parts[3]!.slice(1)}`;
    assert.throws(() => box.decrypt([parts[0], parts[1], parts[2], flipped].join('.')));
    assert.throws(() => createSecretBox('b'.repeat(64)).decrypt(sealed));
    assert.throws(() => box.decrypt('garbage'));
    assert.throws(() => createSecretBox('short'), /KEEL_SECRET_KEY/);
  });

  test('without KEEL_SECRET_KEY a key is generated into the data directory once (mode 0600) and reused', (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-secret-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const first = loadSecretKey({ secretKey: undefined, dataDir });
    assert.equal(first.generated, true);
    assert.match(first.keyHex, /^[0-9a-f]{64}$/);
    assert.equal(fs.statSync(path.join(dataDir, 'secret.key')).mode & 0o777, 0o600);
    const second = loadSecretKey({ secretKey: undefined, dataDir });
    assert.deepEqual(second, { keyHex: first.keyHex, generated: false });
    assert.equal(loadSecretKey({ secretKey: key, dataDir }).keyHex, key);
  });
});
