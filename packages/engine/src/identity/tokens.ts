import { createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, ensurePrivateDirectory, restrictFiles } from '@keel/core';
import { errors, jwtVerify, SignJWT } from 'jose';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';

const ISSUER = 'keel-engine';
const AUDIENCE = 'keel-runtime';
const KEY_FILE = 'engine-token.key';

/** What a runtime bearer token says: who, in which realm, with which key pair, until when. */
export interface TokenClaims {
  identityId: string;
  realmId: string | null;
  userType: string;
  /** The access key (credential pair) the token was exchanged for; revoking it ends the token at once. */
  keyId: string;
  /** Epoch ms. */
  expiresAt: number;
}

export interface TokenService {
  readonly ttlSeconds: number;
  issue(claims: Omit<TokenClaims, 'expiresAt'>): Promise<{ token: string; expiresIn: number; expiresAt: number }>;
  /** The claims of a valid token; AUTH_TOKEN_EXPIRED or AUTH_TOKEN_INVALID otherwise. */
  verify(token: string): Promise<TokenClaims>;
}

interface SigningKey {
  kid: string;
  /** Imported once: signing with raw bytes would import the key on every token. */
  secret: Promise<CryptoKey>;
}

function signingKey(hex: string): SigningKey {
  const secret = Buffer.from(hex, 'hex');
  return {
    kid: createHash('sha256').update(secret).digest('hex').slice(0, 16),
    secret: crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
  };
}

/** Derives a signing key from the secret-box key (used when no dedicated key is configured, e.g. in tests). */
export function deriveSigningKeyHex(secretKeyHex: string): string {
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(secretKeyHex, 'hex'), Buffer.alloc(0), 'keel-engine-runtime-token', 32),
  ).toString('hex');
}

/**
 * The HS256 signing key: ENGINE_TOKEN_SIGNING_KEY when set; otherwise `<dataDir>/engine-token.key`, generated
 * (mode 0600) on first start. Several instances sharing a database must share the key.
 */
export function loadTokenSigningKey(options: { configured: string | undefined; dataDir: string }): {
  keyHex: string;
  generated: boolean;
} {
  if (options.configured) return { keyHex: options.configured, generated: false };
  const file = path.join(options.dataDir, KEY_FILE);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    restrictFiles(file);
    if (!/^(?:[0-9a-fA-F]{2}){32,64}$/.test(existing))
      throw new ConfigError(`${file} does not hold a 64 to 128 hexadecimal character key`);
    return { keyHex: existing, generated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(options.dataDir);
  const keyHex = randomBytes(32).toString('hex');
  try {
    fs.writeFileSync(file, `${keyHex}\n`, { mode: 0o600, flag: 'wx' });
    return { keyHex, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return loadTokenSigningKey(options);
  }
}

/**
 * Issues and verifies the runtime's short-lived bearer tokens (JWT, HS256, `iss` keel-engine, `aud`
 * keel-runtime). Tokens signed with a previous key (rotation) still verify until they expire. Verified
 * tokens are remembered until their expiry so the hot path skips the HMAC.
 */
export function createTokenService(options: {
  signingKeyHex: string;
  previousKeyHex?: string | undefined;
  ttlSeconds: number;
  clock: () => number;
}): TokenService {
  const current = signingKey(options.signingKeyHex);
  const keys = new Map([[current.kid, current]]);
  if (options.previousKeyHex) {
    const previous = signingKey(options.previousKeyHex);
    keys.set(previous.kid, previous);
  }
  const verified = new Map<string, TokenClaims>();
  const { clock, ttlSeconds } = options;

  return {
    ttlSeconds,
    async issue(claims) {
      const now = clock();
      const iat = Math.floor(now / 1000);
      const exp = iat + ttlSeconds;
      const token = await new SignJWT({ rlm: claims.realmId, typ: claims.userType, akid: claims.keyId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: current.kid })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(claims.identityId)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(await current.secret);
      return { token, expiresIn: ttlSeconds, expiresAt: exp * 1000 };
    },
    async verify(token) {
      const now = clock();
      const hit = verified.get(token);
      if (hit) {
        if (hit.expiresAt > now) return hit;
        verified.delete(token);
        throw RuntimeErrors.tokenExpired();
      }
      if (token.length > 4096) throw RuntimeErrors.tokenInvalid();
      let payload: Record<string, unknown>;
      try {
        const result = await jwtVerify(
          token,
          async (header) => {
            const key = typeof header.kid === 'string' ? keys.get(header.kid) : undefined;
            if (!key) throw new errors.JWKSNoMatchingKey();
            return key.secret;
          },
          {
            algorithms: ['HS256'],
            issuer: ISSUER,
            audience: AUDIENCE,
            currentDate: new Date(now),
            requiredClaims: ['sub', 'exp', 'iat'],
          },
        );
        payload = result.payload as Record<string, unknown>;
      } catch (error) {
        if (error instanceof errors.JWTExpired) throw RuntimeErrors.tokenExpired();
        throw RuntimeErrors.tokenInvalid();
      }
      const { sub, rlm, typ, akid, exp } = payload;
      if (
        typeof sub !== 'string' ||
        typeof typ !== 'string' ||
        typeof akid !== 'string' ||
        typeof exp !== 'number' ||
        (rlm !== null && typeof rlm !== 'string')
      )
        throw RuntimeErrors.tokenInvalid();
      const claims: TokenClaims = {
        identityId: sub,
        realmId: (rlm as string | null) ?? null,
        userType: typ,
        keyId: akid,
        expiresAt: exp * 1000,
      };
      if (verified.size >= 20_000) verified.clear();
      verified.set(token, claims);
      return claims;
    },
  };
}
