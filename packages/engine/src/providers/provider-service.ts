import {
  checkOutboundUrl,
  checkOutboundUrlResolves,
  type Executor,
  fromJsonColumn,
  isUniqueViolation,
  toBoolean,
  toIsoString,
} from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import type { ProviderRecord } from './model-clients.ts';
import { priceNumber, priceText } from './pricing.ts';
import {
  clearOtherDefaultProviders,
  countAgentsUsingProvider,
  deleteProviderRow,
  findDefaultProviderRow,
  findProviderRow,
  insertProvider,
  listProviderRows,
  type ProviderRow,
  updateProviderRow,
} from './provider-store.ts';
import { findTemplate, PROVIDER_TEMPLATES, settingsProblems } from './provider-templates.ts';

/** A provider write as the API takes it (POST and PUT). */
export interface ProviderInput {
  realm_id?: string | undefined;
  type: string;
  name: string;
  description?: string | null | undefined;
  api_key?: string | null | undefined;
  base_url?: string | null | undefined;
  supports_text?: boolean | undefined;
  supports_image?: boolean | undefined;
  text_model?: string | null | undefined;
  image_model?: string | null | undefined;
  input_price_per_million?: number | undefined;
  output_price_per_million?: number | undefined;
  image_price?: number | undefined;
  currency?: string | undefined;
  is_default?: boolean | undefined;
  is_active?: boolean | undefined;
  settings?: Record<string, unknown> | null | undefined;
}

export function toProviderRecord(row: ProviderRow): ProviderRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    type: row.type,
    name: row.name,
    baseUrl: row.base_url,
    apiKeySealed: row.api_key_sealed,
    supportsText: toBoolean(row.supports_text),
    supportsImage: toBoolean(row.supports_image),
    textModel: row.text_model,
    imageModel: row.image_model,
    prices: { input: row.input_price_per_million, output: row.output_price_per_million, image: row.image_price },
    currency: row.currency,
    isDefault: toBoolean(row.is_default),
    isActive: toBoolean(row.is_active),
    settings: fromJsonColumn<Record<string, unknown>>(row.settings) ?? {},
    updatedAt: toIsoString(row.updated_at),
  };
}

/** The API view: every field except the api key, which is only ever reported as set or not. */
export function toProviderView(row: ProviderRow) {
  return {
    id: row.id,
    realm_id: row.realm_id,
    type: row.type,
    name: row.name,
    description: row.description,
    base_url: row.base_url,
    api_key_set: row.api_key_sealed !== null,
    supports_text: toBoolean(row.supports_text),
    supports_image: toBoolean(row.supports_image),
    text_model: row.text_model,
    image_model: row.image_model,
    input_price_per_million: priceNumber(row.input_price_per_million),
    output_price_per_million: priceNumber(row.output_price_per_million),
    image_price: priceNumber(row.image_price),
    currency: row.currency,
    is_default: toBoolean(row.is_default),
    is_active: toBoolean(row.is_active),
    settings: fromJsonColumn<Record<string, unknown>>(row.settings) ?? {},
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

export function listTemplates() {
  return { data: PROVIDER_TEMPLATES };
}

export function getTemplate(type: string) {
  const template = findTemplate(type);
  if (!template) throw RuntimeErrors.notFound('Provider template', type);
  return template;
}

/** Validates a provider write (capability rules, template rules, SSRF-checked base URL) into row fields. */
export async function providerFields(rt: RuntimeContext, input: ProviderInput, keepSealedKey: string | null) {
  const template = findTemplate(input.type);
  if (!template)
    throw RuntimeErrors.invalid(
      `type must be one of ${PROVIDER_TEMPLATES.map((t) => t.type).join(', ')} (GET /api/v1/runtime/providers/templates)`,
    );
  const supportsText = input.supports_text ?? true;
  const supportsImage = input.supports_image ?? false;
  if (!supportsText && !supportsImage)
    throw RuntimeErrors.invalid('Enable at least one of supports_text and supports_image');
  if (supportsImage && !template.capabilities.image)
    throw RuntimeErrors.invalid(`${template.type} providers do not support images`);
  if (supportsText && !input.text_model)
    throw RuntimeErrors.invalid('text_model is required when supports_text is true');
  if (supportsImage && !input.image_model)
    throw RuntimeErrors.invalid('image_model is required when supports_image is true');
  const settings = input.settings ?? {};
  checkJson(settings, 'settings', { maxDepth: 2, maxBytes: 4096 });
  const problems = settingsProblems(template, settings);
  if (problems.length > 0) throw RuntimeErrors.invalid(problems.join('; '));
  if (template.api_key === 'unsupported' && input.api_key)
    throw RuntimeErrors.invalid(`${template.type} takes no api_key: it uses the credential chain of the engine host`);
  let baseUrl = input.base_url ?? null;
  if (template.base_url.required && !baseUrl) baseUrl = template.base_url.default;
  if (baseUrl) {
    const policy = { allowPrivate: rt.allowPrivateUrls };
    checkOutboundUrl(baseUrl, policy);
    await checkOutboundUrlResolves(baseUrl, policy);
    baseUrl = baseUrl.replace(/\/+$/, '');
  }
  // api_key: a new value replaces the stored one, null removes it, omitted keeps it (PUT); never echoed.
  const sealed =
    input.api_key === undefined ? keepSealedKey : input.api_key === null ? null : rt.secrets.encrypt(input.api_key);
  return {
    type: template.type,
    name: input.name,
    description: input.description ?? null,
    base_url: baseUrl,
    api_key_sealed: sealed,
    supports_text: supportsText,
    supports_image: supportsImage,
    text_model: supportsText ? (input.text_model ?? null) : (input.text_model ?? null),
    image_model: input.image_model ?? null,
    input_price_per_million: priceText(input.input_price_per_million, 'input_price_per_million'),
    output_price_per_million: priceText(input.output_price_per_million, 'output_price_per_million'),
    image_price: priceText(input.image_price, 'image_price'),
    currency: (input.currency ?? 'USD').toUpperCase(),
    is_default: input.is_default ?? false,
    is_active: input.is_active ?? true,
    settings: JSON.stringify(settings),
  };
}

function nameTaken(error: unknown, name: string): never {
  if (isUniqueViolation(error)) throw RuntimeErrors.nameTaken(`A provider named ${name} exists in this realm`);
  throw error;
}

export async function createProvider(rt: RuntimeContext, principal: RuntimePrincipal, input: ProviderInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const fields = await providerFields(rt, input, null);
  const now = nowIso(rt);
  const row: ProviderRow = { id: newId(), realm_id: realmId, ...fields, created_at: now, updated_at: now };
  await inTransaction(rt.engine, async (trx) => {
    await insertProvider(trx, row);
    if (fields.is_default) await clearOtherDefaultProviders(trx, realmId, row.id, now);
  }).catch((error) => nameTaken(error, input.name));
  await rt.realms.invalidate(realmId);
  return toProviderView(row);
}

export async function listProviders(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined; type?: string | undefined; is_active?: boolean | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listProviderRows(
    rt.db,
    realmId,
    { afterId: cursorAfterId('providers', query.cursor), type: query.type, isActive: query.is_active },
    query.limit + 1,
  );
  return idPage('providers', rows, query.limit, toProviderView);
}

export async function getProvider(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findProviderRow(rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Provider', id);
  return toProviderView(row);
}

/** Replaces a provider's configuration; an omitted api_key keeps the stored one. */
export async function updateProvider(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: ProviderInput,
) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const existing = await findProviderRow(rt.db, realmId, id);
  if (!existing) throw RuntimeErrors.notFound('Provider', id);
  const fields = await providerFields(rt, input, existing.api_key_sealed);
  const now = nowIso(rt);
  await inTransaction(rt.engine, async (trx) => {
    await updateProviderRow(trx, existing.id, { ...fields, updated_at: now });
    if (fields.is_default) await clearOtherDefaultProviders(trx, realmId, existing.id, now);
  }).catch((error) => nameTaken(error, input.name));
  rt.models.drop(existing.id);
  await rt.realms.invalidate(realmId);
  return getProvider(rt, principal, existing.id);
}

/** Activates or deactivates a provider (flips it when `is_active` is not sent). */
export async function toggleProvider(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  isActive: boolean | undefined,
) {
  const realmId = requirePermission(principal, 'config:write');
  const existing = await findProviderRow(rt.db, realmId, id);
  if (!existing) throw RuntimeErrors.notFound('Provider', id);
  const next = isActive ?? !toBoolean(existing.is_active);
  const now = nowIso(rt);
  await inTransaction(rt.engine, (trx) => updateProviderRow(trx, existing.id, { is_active: next, updated_at: now }));
  rt.models.drop(existing.id);
  await rt.realms.invalidate(realmId);
  return getProvider(rt, principal, existing.id);
}

/** Deletes a provider that no agent uses (directly, or as the realm default for agents without one). */
export async function deleteProvider(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  await inTransaction(rt.engine, async (trx) => {
    const existing = await findProviderRow(trx, realmId, id);
    if (!existing) throw RuntimeErrors.notFound('Provider', id);
    const count = await countAgentsUsingProvider(trx, realmId, existing.id, toBoolean(existing.is_default));
    if (count > 0)
      throw RuntimeErrors.inUse(
        `Provider ${existing.id} is used by ${count} agent configuration(s)${toBoolean(existing.is_default) ? ' (directly or as the realm default)' : ''}`,
      );
    await deleteProviderRow(trx, existing.id);
  });
  rt.models.drop(id.toLowerCase());
  await rt.realms.invalidate(realmId);
}

/** A provider of the realm by id, or the realm default (null id); cached for the hot path. */
export async function loadProvider(
  rt: RuntimeContext,
  realmId: string,
  id: string | null,
): Promise<ProviderRecord | undefined> {
  return rt.realms.get(realmId, `provider:${id ?? 'default'}`, async () => {
    const row = await (id === null ? findDefaultProviderRow(rt.db, realmId) : findProviderRow(rt.db, realmId, id));
    return row ? toProviderRecord(row) : undefined;
  });
}

export async function providerExists(db: Executor<EngineDb>, realmId: string, id: string): Promise<boolean> {
  return (await findProviderRow(db, realmId, id)) !== undefined;
}
