import { type Cache, type DeliveryTarget, type SecretBox, toBoolean } from '@keel/core';
import type { Kysely } from 'kysely';
import type { EngineDb } from '../db/schema.ts';
import { findRuntimeWebhookById, RUNTIME_TARGET_PREFIX } from '../integrations/runtime-webhook-store.ts';
import { findDestinationById } from './destination-store.ts';

const CHANNEL = 'webhook-destinations-changed';
const TTL_MS = 5000;

/**
 * Delivery targets by outbox target for the worker — a catalog destination id, or `runtime:<id>` for a realm's
 * runtime webhook — (decrypted secrets held in memory briefly, invalidated on change).
 */
export interface DestinationCache {
  resolve(destinationId: string): Promise<DeliveryTarget | undefined>;
  invalidate(): Promise<void>;
}

export async function createDestinationCache(
  db: Kysely<EngineDb>,
  cache: Cache,
  secrets: SecretBox,
): Promise<DestinationCache> {
  const entries = new Map<string, { target: DeliveryTarget | undefined; expiresAt: number }>();
  await cache.subscribe(CHANNEL, () => entries.clear());
  const catalogTarget = async (id: string): Promise<DeliveryTarget | undefined> => {
    const row = await findDestinationById(db, id);
    return row && toBoolean(row.active)
      ? {
          url: row.url,
          headers: row.secret_sealed ? { 'x-webhook-secret': secrets.decrypt(row.secret_sealed) } : {},
          signingSecret: secrets.decrypt(row.signing_secret_sealed),
        }
      : undefined;
  };
  const runtimeTarget = async (id: string): Promise<DeliveryTarget | undefined> => {
    const row = await findRuntimeWebhookById(db, id);
    return row && toBoolean(row.active)
      ? { url: row.url, headers: {}, signingSecret: secrets.decrypt(row.signing_secret_sealed) }
      : undefined;
  };
  return {
    async resolve(destinationId) {
      const hit = entries.get(destinationId);
      if (hit && hit.expiresAt > Date.now()) return hit.target;
      const target = destinationId.startsWith(RUNTIME_TARGET_PREFIX)
        ? await runtimeTarget(destinationId.slice(RUNTIME_TARGET_PREFIX.length))
        : await catalogTarget(destinationId);
      if (entries.size > 10_000) entries.clear();
      entries.set(destinationId, { target, expiresAt: Date.now() + TTL_MS });
      return target;
    },
    async invalidate() {
      entries.clear();
      await cache.publish(CHANNEL, String(Date.now()));
    },
  };
}
