import { AppError, checkIdempotencyKey, defineMcpTool, type McpTool } from '@keel/core';
import type { Transaction } from 'kysely';
import { type TObject, type TProperties, Type } from 'typebox';
import { CatalogId } from '../catalog/cart-schemas.ts';
import { getProductDetails } from '../catalog/product-service.ts';
import type { EngineContext } from '../context.ts';
import type { EngineDb } from '../db/schema.ts';
import { EngineErrors } from '../errors.ts';
import { Uuid } from '../http/schemas.ts';
import { listReachableStores } from '../merchants/merchant-service.ts';
import type { Principal } from '../merchants/principal.ts';
import type { EventSink } from '../webhooks/events.ts';
import { runWrite } from '../write.ts';

export const PERMISSION = 'catalog';
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7E]+$',
  description:
    'Required: a retry with the same key and arguments returns the first result; other arguments with it fail',
});
export const OptionalIdempotencyKey = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7E]+$',
    description: 'Optional: makes retries safe',
  }),
);
export const CartId = Uuid('Cart id (a UUID; never a checkout id or a session id)');
export const CheckoutId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^chk_[0-9a-z]+$',
  description: 'Checkout id (chk_…; never a cart id)',
});
export const args = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });
export const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const write = (destructive = false, idempotent = false) => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

/** A tool of the engine's MCP endpoint. */
export type Tool = McpTool<Principal>;

/**
 * A tool's write on the engine's write path, in one transaction with its events (`source: mcp`). With the input's
 * `idempotencyKey`, the rest of the input is the payload and a replay answers the first result.
 */
export async function toolWrite<T>(
  ctx: EngineContext,
  principal: Principal,
  tool: string,
  input: { idempotencyKey?: string },
  work: (trx: Transaction<EngineDb>, sink: EventSink) => Promise<T>,
): Promise<Record<string, unknown>> {
  const key = input.idempotencyKey;
  const idempotency =
    key === undefined
      ? undefined
      : {
          scope: `${principal.keyId}|mcp:${tool}`,
          key: checkIdempotencyKey(key, true)!,
          payload: without(input, 'idempotencyKey'),
        };
  const outcome = await runWrite(ctx, idempotency, async (trx, sink) => ({
    statusCode: 200,
    body: await work(trx, sink),
  }));
  if (outcome.statusCode >= 400) {
    const error = (outcome.body as { error?: { code?: string; message?: string } }).error;
    throw new AppError(
      error?.code ?? 'CONFLICT',
      error?.message ?? 'The first call with this idempotency key failed',
      outcome.statusCode,
    );
  }
  return outcome.replayed
    ? { ...(outcome.body as Record<string, unknown>), idempotentReplayed: true }
    : (outcome.body as Record<string, unknown>);
}

export const without = <T extends Record<string, unknown>>(value: T, key: string) =>
  Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

/** The helpers every tool group shares: tool definitions under the catalog permission, and common lookups. */
export function toolHelpers(ctx: EngineContext) {
  const tool = <S extends TObject>(definition: McpTool<Principal, S>) =>
    defineMcpTool<Principal, S>({ ...definition, permission: PERMISSION });
  const listStores = async (principal: Principal) => ({ stores: await listReachableStores(ctx.db, principal) });
  const getByIdOrCatalog = async (
    principal: Principal,
    input: { productId?: string | undefined; catalogId?: string | undefined },
  ) => {
    if (!input.productId && !input.catalogId) throw EngineErrors.invalidField('send productId or catalogId');
    return { product: await getProductDetails(ctx, principal, input) };
  };
  const lineRef = { itemId: Type.Optional(Uuid('Cart item id')), catalogId: Type.Optional(CatalogId) };
  return { tool, listStores, getByIdOrCatalog, lineRef };
}
