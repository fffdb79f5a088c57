import {
  checkOutboundUrl,
  decodeCursor,
  type Executor,
  encodeCursor,
  fromJsonColumn,
  keysetPage,
  toBoolean,
  toIsoString,
} from '@keel/core';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors, invalidCursor } from '../errors.ts';
import { isUuid, newCatalogId, newId } from '../ids.ts';
import { type Principal, requireStoreAccess, storesInScope } from '../merchants/principal.ts';
import type { EventSink, WriteSource } from '../webhooks/events.ts';
import { formatMinor, parseCurrency, toMinorUnits } from './money.ts';
import type { ProductInput, ProductPatch, ProductView } from './product-schemas.ts';
import {
  catalogIdTaken,
  deleteProduct,
  findProductByCatalogId,
  findProductByExternalId,
  findProductById,
  findProductBySku,
  findProductsByIdentifier,
  insertProduct,
  listProducts,
  type NewProductRow,
  type ProductChanges,
  type ProductRow,
  updateProduct,
} from './product-store.ts';
import { searchTerms } from './search/index.ts';

type JsonObject = Record<string, unknown>;

interface VariantView {
  sku: string | null;
  externalId: string | null;
  name: string;
  description: string | null;
  price: string;
  currency: string;
  status: string;
  inStock: boolean;
  inventoryQuantity: number;
  imageUrl: string | null;
  productUrl: string | null;
  otherDetails: JsonObject | null;
}

export function toProductView(row: ProductRow): ProductView {
  return {
    id: row.id,
    catalogId: row.catalog_id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    scope: { merchantId: row.merchant_id, storeId: row.store_id },
    sku: row.sku,
    externalId: row.external_id,
    name: row.name,
    description: row.description,
    price: formatMinor(Number(row.price_minor), row.currency),
    currency: row.currency,
    status: row.status,
    inStock: toBoolean(row.in_stock),
    inventoryQuantity: Number(row.inventory_quantity),
    imageUrl: row.image_url,
    imageUrls: fromJsonColumn<string[]>(row.image_urls) ?? [],
    productUrl: row.product_url,
    metadata: row.metadata === null ? null : fromJsonColumn<JsonObject>(row.metadata),
    otherDetails: row.other_details === null ? null : fromJsonColumn<JsonObject>(row.other_details),
    variants: fromJsonColumn<VariantView[]>(row.variants) ?? [],
    source: row.source,
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

const MAX_JSON_BYTES = 16 * 1024;

function jsonField(value: JsonObject | null | undefined, field: string): string | null {
  if (value === null || value === undefined) return null;
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text) > MAX_JSON_BYTES)
    throw EngineErrors.invalidField(`${field} must be at most 16 KB of JSON`);
  return text;
}

/** A public https URL, or null for "" and null; 400 naming the field otherwise. */
function publicUrl(value: string | null | undefined, field: string): string | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  try {
    return checkOutboundUrl(value.trim(), { allowPrivate: false }).toString();
  } catch (error) {
    throw EngineErrors.invalidField(
      `${field} must be a public https:// URL (${(error as Error).message.replace(/^The URL is not allowed: /, '')})`,
    );
  }
}

/** The searchable text of otherDetails: its scalar values, flattened (bounded). */
export function flattenSearchText(value: unknown): string {
  const parts: string[] = [];
  const walk = (node: unknown, depth: number) => {
    if (parts.length > 500 || depth > 8) return;
    if (typeof node === 'string') parts.push(node);
    else if (typeof node === 'number' || typeof node === 'boolean') parts.push(String(node));
    else if (Array.isArray(node)) for (const item of node) walk(item, depth + 1);
    else if (node && typeof node === 'object') for (const item of Object.values(node)) walk(item, depth + 1);
  };
  walk(value, 0);
  return parts.join(' ').slice(0, 20_000);
}

function normalizeVariants(variants: ProductInput['variants'], productCurrency: string): VariantView[] {
  return (variants ?? []).map((variant, i) => {
    const currency =
      variant.currency === undefined ? productCurrency : parseCurrency(variant.currency, `variants[${i}].currency`);
    return {
      sku: variant.sku ?? null,
      externalId: variant.externalId ?? null,
      name: variant.name,
      description: variant.description ?? null,
      price: formatMinor(toMinorUnits(variant.price, currency, `variants[${i}].price`), currency),
      currency,
      status: variant.status ?? 'active',
      inStock: variant.inStock ?? true,
      inventoryQuantity: variant.inventoryQuantity ?? 0,
      imageUrl: publicUrl(variant.imageUrl, `variants[${i}].imageUrl`),
      productUrl: publicUrl(variant.productUrl, `variants[${i}].productUrl`),
      otherDetails: (variant.otherDetails as JsonObject | null | undefined) ?? null,
    };
  });
}

/**
 * The gallery rule: the first `imageUrls` entry is the primary image and is mirrored into `imageUrl`.
 * Sending `imageUrls` replaces the gallery (an `imageUrl` sent with it is used only when the gallery is empty);
 * sending only `imageUrl` replaces the primary entry; clearing `imageUrl` drops the primary entry, so the next
 * one becomes primary.
 */
function resolveImages(
  input: ProductPatch,
  existing: string[],
): { image_url: string | null; image_urls: string } | undefined {
  const hasUrls = input.imageUrls !== undefined;
  const hasPrimary = input.imageUrl !== undefined;
  if (!hasUrls && !hasPrimary) return undefined;
  let urls = existing;
  if (hasUrls) {
    urls = (input.imageUrls ?? []).map((url, i) => {
      const checked = publicUrl(url, `imageUrls[${i}]`);
      if (checked === null) throw EngineErrors.invalidField(`imageUrls[${i}] must be a public https:// URL`);
      return checked;
    });
    const primary = publicUrl(input.imageUrl, 'imageUrl');
    if (urls.length === 0 && primary !== null) urls = [primary];
  } else {
    const primary = publicUrl(input.imageUrl, 'imageUrl');
    urls = primary === null ? urls.slice(1) : [primary, ...urls.slice(1)];
  }
  urls = [...new Set(urls)].slice(0, 20);
  return { image_url: urls[0] ?? null, image_urls: JSON.stringify(urls) };
}

/** Validates and converts the fields present in `input` into column values (merging onto `existing`). */
function productChanges(input: ProductPatch, existing: ProductRow | undefined): ProductChanges {
  const changes: ProductChanges = {};
  if (input.sku !== undefined) changes.sku = input.sku === null || input.sku === '' ? null : input.sku;
  if (input.externalId !== undefined)
    changes.external_id = input.externalId === null || input.externalId === '' ? null : input.externalId;
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  const currency = input.currency !== undefined ? parseCurrency(input.currency) : (existing?.currency ?? 'USD');
  if (input.currency !== undefined || !existing) changes.currency = currency;
  if (input.price !== undefined) changes.price_minor = toMinorUnits(input.price, currency);
  else if (existing && input.currency !== undefined && input.currency.toUpperCase() !== existing.currency) {
    // The stored amount is in the old currency's minor units: re-express it exactly, or ask for the price.
    const text = formatMinor(Number(existing.price_minor), existing.currency);
    changes.price_minor = toMinorUnits(text, currency, 'price (send the price with a changed currency)');
  }
  if (input.status !== undefined) changes.status = input.status;
  if (input.inStock !== undefined) changes.in_stock = input.inStock;
  if (input.inventoryQuantity !== undefined) changes.inventory_quantity = input.inventoryQuantity;
  const images = resolveImages(input, existing ? (fromJsonColumn<string[]>(existing.image_urls) ?? []) : []);
  if (images) Object.assign(changes, images);
  if (input.productUrl !== undefined) changes.product_url = publicUrl(input.productUrl, 'productUrl');
  if (input.metadata !== undefined) changes.metadata = jsonField(input.metadata as JsonObject | null, 'metadata');
  if (input.otherDetails !== undefined) {
    changes.other_details = jsonField(input.otherDetails as JsonObject | null, 'otherDetails');
    changes.search_text = flattenSearchText(input.otherDetails);
  }
  if (input.variants !== undefined || (existing && input.currency !== undefined)) {
    const variants =
      input.variants !== undefined
        ? input.variants
        : (fromJsonColumn<ProductInput['variants']>(existing?.variants) ?? []);
    changes.variants = JSON.stringify(normalizeVariants(variants, currency));
  }
  return changes;
}

function emitWriteEvents(
  sink: EventSink,
  before: ProductRow | undefined,
  after: ProductRow,
  source: WriteSource,
  upsert: boolean,
): void {
  const body = { product: toProductView(after) };
  const base = { merchantId: after.merchant_id, storeId: after.store_id, source, body };
  sink.emit({ ...base, event: before ? 'product.updated' : 'product.created' });
  if (upsert) sink.emit({ ...base, event: 'product.upserted' });
  if (!before) return;
  if (Number(before.price_minor) !== Number(after.price_minor) || before.currency !== after.currency) {
    sink.emit({ ...base, event: 'product.price.updated' });
  }
  if (
    Number(before.inventory_quantity) !== Number(after.inventory_quantity) ||
    toBoolean(before.in_stock) !== toBoolean(after.in_stock) ||
    before.status !== after.status
  ) {
    sink.emit({ ...base, event: 'product.inventory.updated' });
  }
}

/** The product the identifiers point at; 409 when sku and externalId point at two different products. */
export async function findProductByIdentity(
  trx: Executor<EngineDb>,
  storeId: string,
  sku: string | null | undefined,
  externalId: string | null | undefined,
) {
  const bySku = sku ? await findProductBySku(trx, storeId, sku) : undefined;
  const byExternal = externalId ? await findProductByExternalId(trx, storeId, externalId) : undefined;
  if (bySku && byExternal && bySku.id !== byExternal.id) throw EngineErrors.identityConflict(storeId);
  return bySku ?? byExternal;
}

async function freeCatalogId(trx: Executor<EngineDb>): Promise<string> {
  for (let i = 0; i < 5; i++) {
    const candidate = newCatalogId();
    if (!(await catalogIdTaken(trx, candidate))) return candidate;
  }
  throw new Error('could not draw a free catalog id');
}

export interface UpsertOutcome {
  product: ProductView;
  mode: 'created' | 'updated';
}

/**
 * Creates the product, or updates the one `storeId`+`sku` or `storeId`+`externalId` identifies (fields not
 * sent keep their values; defaults apply on creation). 409 when the two identifiers name different products.
 */
export async function upsertProduct(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  input: ProductInput,
  source: WriteSource,
  options: { upsertEvent?: boolean } = {},
): Promise<UpsertOutcome> {
  const storeId = input.storeId.toLowerCase();
  const merchantId = requireStoreAccess(principal, storeId);
  const sku = input.sku === '' ? null : input.sku;
  const externalId = input.externalId === '' ? null : input.externalId;
  const existing = await findProductByIdentity(trx, storeId, sku, externalId);
  const now = new Date().toISOString();
  if (existing) {
    const changes = productChanges({ ...input, sku, externalId }, existing);
    // An identifier that is not sent keeps its value; one that is sent must not belong to another product.
    if (sku === undefined || sku === null) delete changes.sku;
    if (externalId === undefined || externalId === null) delete changes.external_id;
    const after = (await updateProduct(trx, existing.id, { ...changes, source, updated_at: now }))!;
    emitWriteEvents(sink, existing, after, source, options.upsertEvent ?? true);
    return { product: toProductView(after), mode: 'updated' };
  }
  const changes = productChanges({ ...input, sku, externalId }, undefined);
  const row: NewProductRow = {
    id: newId(),
    catalog_id: await freeCatalogId(trx),
    merchant_id: merchantId,
    store_id: storeId,
    sku: sku ?? null,
    external_id: externalId ?? null,
    name: input.name,
    description: input.description ?? null,
    price_minor: changes.price_minor as number,
    currency: changes.currency as string,
    status: input.status ?? 'active',
    in_stock: input.inStock ?? true,
    inventory_quantity: input.inventoryQuantity ?? 0,
    image_url: (changes.image_url as string | null | undefined) ?? null,
    image_urls: (changes.image_urls as string | undefined) ?? '[]',
    product_url: (changes.product_url as string | null | undefined) ?? null,
    metadata: (changes.metadata as string | null | undefined) ?? null,
    other_details: (changes.other_details as string | null | undefined) ?? null,
    variants: (changes.variants as string | undefined) ?? '[]',
    search_text: (changes.search_text as string | undefined) ?? '',
    source,
    created_at: now,
    updated_at: now,
  };
  const after = await insertProduct(trx, row);
  emitWriteEvents(sink, undefined, after, source, options.upsertEvent ?? true);
  return { product: toProductView(after), mode: 'created' };
}

/** Partial update of a product in the key's scope (404 outside it); storeId cannot change. */
export async function patchProduct(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  productId: string,
  patch: ProductPatch,
  source: WriteSource,
): Promise<ProductView> {
  const existing = await productInScope(trx, principal, productId);
  if (patch.storeId !== undefined && patch.storeId.toLowerCase() !== existing.store_id) {
    throw EngineErrors.invalidField('storeId cannot change; create the product in the other store instead');
  }
  const sku = patch.sku === '' ? null : patch.sku;
  const externalId = patch.externalId === '' ? null : patch.externalId;
  for (const [value, find] of [
    [sku, findProductBySku],
    [externalId, findProductByExternalId],
  ] as const) {
    if (value) {
      const other = await find(trx, existing.store_id, value);
      if (other && other.id !== existing.id) throw EngineErrors.identityConflict(existing.store_id);
    }
  }
  const changes = productChanges({ ...patch, sku, externalId }, existing);
  const after = (await updateProduct(trx, existing.id, { ...changes, source, updated_at: new Date().toISOString() }))!;
  emitWriteEvents(sink, existing, after, source, false);
  return toProductView(after);
}

async function productInScope(db: Executor<EngineDb>, principal: Principal, productId: string): Promise<ProductRow> {
  if (!isUuid(productId)) throw EngineErrors.invalidId('productId');
  const row = await findProductById(db, storesInScope(principal, undefined), productId.toLowerCase());
  if (!row) throw EngineErrors.productNotFound(`Product ${productId} not found`);
  return row;
}

export async function removeProduct(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  productId: string,
  source: WriteSource,
): Promise<ProductView> {
  const existing = await productInScope(trx, principal, productId);
  await deleteProduct(trx, existing.id);
  const view = toProductView(existing);
  sink.emit({
    event: 'product.deleted',
    merchantId: existing.merchant_id,
    storeId: existing.store_id,
    source,
    body: { product: view },
  });
  return view;
}

/** Deletes the product `storeId` + `sku`/`externalId` identifies; `ignored` when there is none. */
export async function removeProductByIdentity(
  trx: Executor<EngineDb>,
  sink: EventSink,
  principal: Principal,
  identity: { storeId: string; sku?: string | null | undefined; externalId?: string | null | undefined },
  source: WriteSource,
): Promise<{ mode: 'deleted' | 'ignored'; product: ProductView | null }> {
  const storeId = identity.storeId.toLowerCase();
  requireStoreAccess(principal, storeId);
  if (!identity.sku && !identity.externalId)
    throw EngineErrors.invalidField('a delete needs storeId plus sku and/or externalId');
  const existing = await findProductByIdentity(trx, storeId, identity.sku, identity.externalId);
  if (!existing) return { mode: 'ignored', product: null };
  await deleteProduct(trx, existing.id);
  const view = toProductView(existing);
  sink.emit({ event: 'product.deleted', merchantId: existing.merchant_id, storeId, source, body: { product: view } });
  return { mode: 'deleted', product: view };
}

export async function getProduct(ctx: EngineContext, principal: Principal, productId: string): Promise<ProductView> {
  return viewed(ctx, toProductView(await productInScope(ctx.db, principal, productId)));
}

/** A product read by a caller: recorded as an anonymous `product_view` (after the fact, never awaited). */
function viewed(ctx: EngineContext, view: ProductView): ProductView {
  ctx.catalogActivity?.viewed(view);
  return view;
}

export interface DetailsQuery {
  catalogId?: string | undefined;
  productId?: string | undefined;
  sku?: string | undefined;
  externalId?: string | undefined;
  storeId?: string | undefined;
}

/** One product by catalogId, productId, sku or externalId within the key's scope (storeId narrows sku/externalId). */
export async function getProductDetails(
  ctx: EngineContext,
  principal: Principal,
  query: DetailsQuery,
): Promise<ProductView> {
  const given = [query.catalogId, query.productId, query.sku, query.externalId].filter(
    (v) => v !== undefined && v !== '',
  );
  if (given.length === 0) throw EngineErrors.invalidField('send one of catalogId, productId, sku or externalId');
  const stores = storesInScope(principal, query.storeId);
  let row: ProductRow | undefined;
  if (query.productId) {
    if (!isUuid(query.productId)) throw EngineErrors.invalidId('productId');
    row = await findProductById(ctx.db, stores, query.productId.toLowerCase());
  } else if (query.catalogId) {
    if (!/^\d{10}$/.test(query.catalogId)) throw EngineErrors.invalidField('catalogId must be 10 digits');
    row = await findProductByCatalogId(ctx.db, stores, query.catalogId);
  } else {
    const [field, value] = query.sku ? (['sku', query.sku] as const) : (['external_id', query.externalId!] as const);
    const rows = await findProductsByIdentifier(ctx.db, stores, field, value);
    if (rows.length > 1)
      throw EngineErrors.invalidField(`${query.sku ? 'sku' : 'externalId'} exists in several stores: add storeId`);
    row = rows[0];
  }
  if (!row) throw EngineErrors.productNotFound('No product matches in the stores this key reaches');
  return viewed(ctx, toProductView(row));
}

export interface ListQuery {
  storeId?: string | undefined;
  q?: string | undefined;
  status?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** The position of a product list cursor: `s` (a list: the last row's seq) or `q` (a search: the rows already shown). */
function productCursor(cursor: string | undefined, kind: 's' | 'q'): number | undefined {
  const position = decodeCursor(`products-${kind}`, cursor, ['number'], invalidCursor);
  if (position && !(Number.isSafeInteger(position[0]) && position[0] >= 0)) throw invalidCursor();
  return position?.[0];
}

/** Lists (newest first) or, with `q`, searches (best match first) the products of the key's stores. */
export async function listProductsFor(
  ctx: EngineContext,
  principal: Principal,
  query: ListQuery,
): Promise<{ data: ProductView[]; nextCursor: string | null }> {
  const stores = storesInScope(principal, query.storeId);
  if (query.q !== undefined && query.q.trim() !== '') {
    const offset = productCursor(query.cursor, 'q') ?? 0;
    if (offset > 10_000) throw EngineErrors.invalidField('search results go 10,000 deep at most; refine the query');
    const terms = searchTerms(query.q);
    const rows = await ctx.search.search(ctx.db, {
      storeIds: stores,
      terms,
      status: query.status,
      limit: query.limit + 1,
      offset,
    });
    // A nonempty search (its first page) is an anonymous `catalog_search`: counts only, never the text.
    if (offset === 0)
      ctx.catalogActivity?.listed(principal.merchantId, 'search', Math.min(rows.length, query.limit), terms.length);
    return {
      data: rows.slice(0, query.limit).map(toProductView),
      nextCursor: rows.length > query.limit ? encodeCursor('products-q', [offset + query.limit]) : null,
    };
  }
  const rows = await listProducts(ctx.db, stores, {
    limit: query.limit + 1,
    beforeSeq: productCursor(query.cursor, 's'),
    status: query.status,
  });
  const page = keysetPage('products-s', rows, query.limit, (row) => [Number(row.seq)]);
  if (query.cursor === undefined) ctx.catalogActivity?.listed(principal.merchantId, 'listing', page.rows.length, 0);
  return { data: page.rows.map(toProductView), nextCursor: page.next };
}
