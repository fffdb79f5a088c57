import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { GeoContext } from '../context.ts';
import { findWorkspace } from '../tenancy/tenancy-store.ts';

const secrets = new LRUCache<string, string>({ max: 10_000 });

/** The workspace's subject secret, unsealed (never leaves the service; kept decrypted in memory only). */
export async function workspaceSecret(ctx: Pick<GeoContext, 'db' | 'secrets'>, workspaceId: string): Promise<string> {
  let secret = secrets.get(workspaceId);
  if (secret === undefined) {
    const workspace = await findWorkspace(ctx.db, workspaceId);
    if (!workspace) throw new Error('workspace vanished');
    secret = ctx.secrets.decrypt(workspace.subject_secret);
    secrets.set(workspaceId, secret);
  }
  return secret;
}

/**
 * The pseudonymous form of a subject identifier: HMAC-SHA256 with the workspace's secret over the trimmed,
 * lower-cased value, so the same person is found again without the clear value ever being stored.
 */
export function hashSubject(secret: string, subject: string): string {
  return createHmac('sha256', secret).update(subject.trim().toLowerCase()).digest('hex');
}

/** What responses show of a subject hash: enough to tell requests apart, not enough to match elsewhere. */
export function redactHash(hash: string): string {
  return `${hash.slice(0, 8)}…`;
}
