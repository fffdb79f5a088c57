import type { Executor } from '@keel/core';
import type { Selectable, Updateable } from 'kysely';
import type { CartItemTable, CartTable, CheckoutTable, EngineDb } from '../db/schema.ts';

export type CartRow = Selectable<CartTable>;
export type CartItemRow = Selectable<CartItemTable>;
export type CheckoutRow = Selectable<CheckoutTable>;

// Carts ---------------------------------------------------------------------------------------------------------

/** Stores a new cart. */
export async function insertCart(db: Executor<EngineDb>, row: CartRow): Promise<void> {
  await db.insertInto('cart').values(row).execute();
}

/** The cart with this id in one of `stores`. */
export function findCartInStores(
  db: Executor<EngineDb>,
  stores: readonly string[],
  id: string,
): Promise<CartRow | undefined> {
  return db.selectFrom('cart').selectAll().where('id', '=', id).where('store_id', 'in', stores).executeTakeFirst();
}

/** The cart with this id; it must exist (a checkout's or an order's cart). */
export function getCartById(db: Executor<EngineDb>, id: string): Promise<CartRow> {
  return db.selectFrom('cart').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Touches the cart with this id in one of `stores` when its status is one of `statuses` and returns it; a
 * conditional UPDATE, so it takes the row lock on PostgreSQL. Undefined when no such cart has such a status.
 */
export function lockCartInStatuses(
  db: Executor<EngineDb>,
  stores: readonly string[],
  id: string,
  statuses: string[],
  now: string,
): Promise<CartRow | undefined> {
  return db
    .updateTable('cart')
    .set({ updated_at: now })
    .where('id', '=', id)
    .where('store_id', 'in', stores)
    .where('status', 'in', statuses)
    .returningAll()
    .executeTakeFirst();
}

/** Updates a cart and returns the row as stored. */
export async function updateCart(db: Executor<EngineDb>, id: string, fields: Updateable<CartTable>): Promise<CartRow> {
  return (await db.updateTable('cart').set(fields).where('id', '=', id).returningAll().executeTakeFirst())!;
}

/** Returns a cart to `open` without a checkout id while `checkoutId` is still its checkout; undefined otherwise. */
export function reopenCartOfCheckout(
  db: Executor<EngineDb>,
  cartId: string,
  checkoutId: string,
  now: string,
): Promise<CartRow | undefined> {
  return db
    .updateTable('cart')
    .set({ status: 'open', checkout_id: null, updated_at: now })
    .where('id', '=', cartId)
    .where('checkout_id', '=', checkoutId)
    .returningAll()
    .executeTakeFirst();
}

/** Pages of carts of `stores`, newest first (keyset on created_at, id), `limit + 1` rows. */
export function listCartRows(
  db: Executor<EngineDb>,
  filter: {
    stores: string[];
    status?: string | undefined;
    includeArchived?: boolean | undefined;
    after?: readonly [string, string] | undefined;
    limit: number;
  },
): Promise<CartRow[]> {
  let q = db.selectFrom('cart').selectAll().where('store_id', 'in', filter.stores);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  else if (!filter.includeArchived) q = q.where('status', '!=', 'archived');
  const after = filter.after;
  if (after) {
    q = q.where((eb) =>
      eb.or([eb('created_at', '<', after[0]), eb.and([eb('created_at', '=', after[0]), eb('id', '<', after[1])])]),
    );
  }
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/**
 * Marks the cart of a checkout `completed` while it is `checkout_created` with that checkout, and returns it;
 * undefined when another completion or an archive got there first.
 */
export function completeCartOfCheckout(
  db: Executor<EngineDb>,
  cartId: string,
  checkoutId: string,
  now: string,
): Promise<CartRow | undefined> {
  return db
    .updateTable('cart')
    .set({ status: 'completed', updated_at: now })
    .where('id', '=', cartId)
    .where('checkout_id', '=', checkoutId)
    .where('status', '=', 'checkout_created')
    .returningAll()
    .executeTakeFirst();
}

// Cart items ----------------------------------------------------------------------------------------------------

/** The lines of a cart in the order they were added. */
export function listCartItems(db: Executor<EngineDb>, cartId: string): Promise<CartItemRow[]> {
  return db
    .selectFrom('cart_item')
    .selectAll()
    .where('cart_id', '=', cartId)
    .orderBy('position')
    .orderBy('created_at')
    .execute();
}

/** Stores a new cart line. */
export async function insertCartItem(db: Executor<EngineDb>, row: CartItemRow): Promise<void> {
  await db.insertInto('cart_item').values(row).execute();
}

/** Sets a line's quantity and returns the line as stored. */
export async function updateCartItemQuantity(
  db: Executor<EngineDb>,
  id: string,
  quantity: number,
  now: string,
): Promise<CartItemRow> {
  return (await db
    .updateTable('cart_item')
    .set({ quantity, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst())!;
}

/** Deletes one cart line. */
export async function deleteCartItem(db: Executor<EngineDb>, id: string): Promise<void> {
  await db.deleteFrom('cart_item').where('id', '=', id).execute();
}

/** Deletes every line of a cart. */
export async function deleteCartItems(db: Executor<EngineDb>, cartId: string): Promise<void> {
  await db.deleteFrom('cart_item').where('cart_id', '=', cartId).execute();
}

// Checkouts -----------------------------------------------------------------------------------------------------

/** Stores a new checkout. */
export async function insertCheckout(db: Executor<EngineDb>, row: CheckoutRow): Promise<void> {
  await db.insertInto('checkout').values(row).execute();
}

/** The checkout with this id in one of `stores`. */
export function findCheckoutInStores(
  db: Executor<EngineDb>,
  stores: readonly string[],
  id: string,
): Promise<CheckoutRow | undefined> {
  return db.selectFrom('checkout').selectAll().where('id', '=', id).where('store_id', 'in', stores).executeTakeFirst();
}

/** The checkout with this id. */
export function findCheckoutById(db: Executor<EngineDb>, id: string): Promise<CheckoutRow | undefined> {
  return db.selectFrom('checkout').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Cancels the checkout while it is `prepared` and returns it; undefined when it was not prepared. */
export function cancelPreparedCheckout(
  db: Executor<EngineDb>,
  id: string,
  now: string,
): Promise<CheckoutRow | undefined> {
  return db
    .updateTable('checkout')
    .set({ status: 'cancelled', updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'prepared')
    .returningAll()
    .executeTakeFirst();
}

/** The status of the checkout with this id, if it exists. */
export async function findCheckoutStatus(db: Executor<EngineDb>, id: string): Promise<string | undefined> {
  return (await db.selectFrom('checkout').select('status').where('id', '=', id).executeTakeFirst())?.status;
}

/** Marks a checkout `completed`. */
export async function completeCheckout(db: Executor<EngineDb>, id: string, now: string): Promise<void> {
  await db.updateTable('checkout').set({ status: 'completed', updated_at: now }).where('id', '=', id).execute();
}
