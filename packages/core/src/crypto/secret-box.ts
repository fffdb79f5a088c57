import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.ts';
import { ensurePrivateDirectory, restrictFiles } from '../fs/private-files.ts';

/** Encrypts the third-party secrets a service must keep (webhook secrets, provider keys) with AES-256-GCM. */
export interface SecretBox {
  /** `v1.<iv>.<tag>.<ciphertext>` in base64url; a fresh IV every time, so equal secrets encrypt differently. */
  encrypt(plaintext: string): string;
  /** Throws when the text was not produced with this key or was altered. */
  decrypt(sealed: string): string;
}

const KEY_FILE = 'secret.key';

/** Builds a SecretBox from a 256-bit key given as 64 hexadecimal characters. */
export function createSecretBox(keyHex: string): SecretBox {
  if (!/^[0-9a-fA-F]{64}$/.test(keyHex))
    throw new ConfigError('KEEL_SECRET_KEY must be 64 hexadecimal characters (a 256-bit key)');
  const key = Buffer.from(keyHex, 'hex');
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        'v1',
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        ciphertext.toString('base64url'),
      ].join('.');
    },
    decrypt(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) {
        throw new Error('not a sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The key for stored secrets: KEEL_SECRET_KEY when set; otherwise `<dataDir>/secret.key`, generated (mode 0600)
 * on first start. Several instances sharing a database must share KEEL_SECRET_KEY.
 */
export function loadSecretKey(options: { secretKey: string | undefined; dataDir: string }): {
  keyHex: string;
  generated: boolean;
} {
  if (options.secretKey) return { keyHex: options.secretKey, generated: false };
  const file = path.join(options.dataDir, KEY_FILE);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    restrictFiles(file);
    if (!/^[0-9a-fA-F]{64}$/.test(existing)) throw new ConfigError(`${file} does not hold a 64-hex-character key`);
    return { keyHex: existing, generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(options.dataDir);
  const keyHex = randomBytes(32).toString('hex');
  try {
    // `wx`: when two processes start at once, exactly one writes the key and the other reads it.
    fs.writeFileSync(file, `${keyHex}\n`, { mode: 0o600, flag: 'wx' });
    return { keyHex, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return loadSecretKey(options);
  }
}
