import { checkOutboundUrlResolves, fromJsonColumn, toBoolean } from '@keel/core';
import { deleteIdentity, upsertMember } from '../identity/identity-store.ts';
import { requireGrantable } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { insertClientRecords } from '../integrations/integration-service.ts';
import { deleteIntegrationClientRow, updateIntegrationClient } from '../integrations/integration-store.ts';
import { MAX_RUNTIME_WEBHOOKS } from '../integrations/runtime-webhook-service.ts';
import {
  countRuntimeWebhooks,
  deleteRuntimeWebhookRow,
  insertRuntimeWebhook,
  type RuntimeWebhookRow,
  updateRuntimeWebhookRow,
} from '../integrations/runtime-webhook-store.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import type { IntegrationClientItem, RuntimeWebhookItem } from './configuration-schemas.ts';
import { about, type ConfigSection, planSecret, tooMany } from './configuration-sections.ts';
import { listRealmIntegrationClients, listRealmRuntimeWebhooks } from './configuration-store.ts';

/** A Standard Webhooks signing secret as the engine issues them (`whsec_` + base64 of 24 bytes or more). */
const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

function webhookItem(row: RuntimeWebhookRow): RuntimeWebhookItem {
  return {
    url: row.url,
    description: row.description,
    events: [...fromJsonColumn<string[]>(row.events)].sort() as RuntimeWebhookItem['events'],
    active: toBoolean(row.active),
    credential: row.signing_secret_sealed === '' ? null : 'signing_secret',
  };
}

/**
 * Runtime webhooks by URL. The signing secret is never exported: a deploy takes it from
 * `credentials["runtime_webhooks/<url>"]` (a `whsec_…` secret, so receivers keep verifying with the one they
 * hold), keeps the one the realm stores, or — when neither exists — deploys the webhook inactive without a secret
 * and reports it in `missing_credentials` (nothing is delivered to it until a deploy supplies one).
 */
export const runtimeWebhookSection: ConfigSection<RuntimeWebhookItem, RuntimeWebhookRow, RuntimeWebhookItem> = {
  name: 'runtime_webhooks',
  key: (item) => item.url,
  async read(db, realmId, limit) {
    const rows = await listRealmRuntimeWebhooks(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('runtime webhooks', limit);
    const urls = new Set<string>();
    for (const row of rows) {
      if (urls.has(row.url))
        throw RuntimeErrors.conflict(
          `runtime_webhooks: two webhooks of the realm share the URL ${row.url}; a bundle names webhooks by URL`,
        );
      urls.add(row.url);
    }
    return rows.map((row) => ({ item: webhookItem(row), row }));
  },
  async prepare(ctx, item) {
    return about(`runtime_webhooks/${item.url}`, async () => {
      const url = (
        await checkOutboundUrlResolves(item.url, { allowPrivate: ctx.rt.engine.config.core.allowPrivateUrls })
      ).toString();
      if (url !== item.url) throw RuntimeErrors.invalid(`the URL must be written as ${url}`);
      if (item.credential === null && item.active)
        throw RuntimeErrors.invalid('a webhook without a signing secret (credential null) cannot be active');
      const supplied = ctx.credentials[`runtime_webhooks/${item.url}`];
      if (supplied !== undefined && !SIGNING_SECRET.test(supplied))
        throw RuntimeErrors.invalid('the supplied signing secret must be a Standard Webhooks secret (whsec_…)');
      return { ...item, events: [...new Set(item.events)].sort() as RuntimeWebhookItem['events'] };
    });
  },
  async desired(_db, ctx, prepared, current) {
    const sealed = current?.row.signing_secret_sealed || null;
    const stored = sealed === null ? null : ctx.rt.secrets.decrypt(sealed);
    const plan = planSecret(
      ctx,
      `runtime_webhooks/${prepared.url}`,
      { ...prepared, credential: prepared.credential === null ? null : 'api_key', is_active: prepared.active },
      stored,
    );
    const { is_active: active, credential, ...rest } = plan.item;
    return {
      ...plan,
      item: { ...rest, active, credential: credential === null ? null : 'signing_secret' },
      missingCredential: plan.missingCredential === null ? null : 'signing_secret',
    };
  },
  async write(trx, ctx, _prepared, desired, current) {
    const item = desired.item;
    const secret = desired.secret;
    const sealed =
      secret.kind === 'set'
        ? ctx.rt.secrets.encrypt(secret.secret)
        : secret.kind === 'keep'
          ? (current?.row.signing_secret_sealed ?? '')
          : '';
    const fields = {
      description: item.description,
      events: JSON.stringify(item.events),
      active: item.active,
      signing_secret_sealed: sealed,
      updated_at: ctx.now,
    };
    if (current) {
      await updateRuntimeWebhookRow(trx, current.row.id, fields);
      return;
    }
    if ((await countRuntimeWebhooks(trx, ctx.realmId)) >= MAX_RUNTIME_WEBHOOKS)
      throw RuntimeErrors.limit(`a realm has at most ${MAX_RUNTIME_WEBHOOKS} runtime webhooks`);
    await insertRuntimeWebhook(trx, {
      ...fields,
      id: newId(),
      realm_id: ctx.realmId,
      url: item.url,
      created_by: ctx.identityId,
      created_at: ctx.now,
    });
  },
  async remove(db, _ctx, current, dry) {
    if (!dry) await deleteRuntimeWebhookRow(db, current.row.id);
  },
  async committed(rt) {
    await rt.engine.destinations.invalidate();
  },
};

type ClientRow = Awaited<ReturnType<typeof listRealmIntegrationClients>>[number];

/**
 * Integration clients by name (name, description, role; never the client id or a secret). A deploy creates a
 * missing client with its own service identity and key pair, whose secret nobody receives: it is reported in
 * `missing_credentials` (credential `client_secret`) — rotate the client to obtain a secret. Needs realm:manage,
 * as the client routes do.
 */
export const integrationClientSection: ConfigSection<IntegrationClientItem, ClientRow, IntegrationClientItem> = {
  name: 'integration_clients',
  permission: 'realm:manage',
  key: (item) => item.name,
  async read(db, realmId, limit) {
    const rows = await listRealmIntegrationClients(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('integration clients', limit);
    return rows.map((row) => ({
      row,
      item: { name: row.name, description: row.description, role: row.role as IntegrationClientItem['role'] },
    }));
  },
  async prepare(_ctx, item) {
    return item;
  },
  async desired(_db, _ctx, prepared, current) {
    return {
      item: prepared,
      secret: { kind: 'none' },
      secretChanged: false,
      missingCredential: current ? null : 'client_secret',
    };
  },
  async write(trx, ctx, prepared, _desired, current) {
    if (!current || current.item.role !== prepared.role) requireGrantable(ctx.principal, prepared.role);
    if (!current) {
      // The key pair's secret is discarded here: it is never answered, logged or stored in clear.
      await insertClientRecords(trx, {
        id: newId(),
        realmId: ctx.realmId,
        name: prepared.name,
        description: prepared.description,
        role: prepared.role,
        createdBy: ctx.identityId,
        now: ctx.now,
      });
      return;
    }
    await updateIntegrationClient(trx, current.row.id, {
      description: prepared.description,
      role: prepared.role,
      updated_at: ctx.now,
    });
    if (current.item.role !== prepared.role)
      await upsertMember(trx, {
        realm_id: ctx.realmId,
        identity_id: current.row.identity_id,
        role: prepared.role,
        now: ctx.now,
      });
  },
  async remove(db, ctx, current, dry) {
    requireGrantable(ctx.principal, current.item.role);
    if (dry) return;
    await deleteIntegrationClientRow(db, current.row.id);
    await deleteIdentity(db, current.row.identity_id);
  },
  async committed(rt) {
    await rt.principals.invalidate();
  },
};
