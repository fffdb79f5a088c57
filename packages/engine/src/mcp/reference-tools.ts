import { Type } from 'typebox';
import { AddLineSchema, CatalogId, Quantity } from '../catalog/cart-schemas.ts';
import {
  addCartItems,
  archiveCart,
  cancelCheckout,
  clearCart,
  closeCart,
  createCart,
  getCart,
  getCheckout,
  prepareCheckout,
  removeCartItems,
  updateCartItems,
} from '../catalog/cart-service.ts';
import type { EngineContext } from '../context.ts';
import { JsonObject, Uuid } from '../http/schemas.ts';

import {
  args,
  CartId,
  CheckoutId,
  IdempotencyKey,
  OptionalIdempotencyKey,
  PERMISSION,
  readOnly,
  type Tool,
  toolHelpers,
  toolWrite,
  write,
} from './mcp-tool-kit.ts';

/** The merchant commerce reference contract (`cart_*`, `checkout_*`), on the same services as REST. */
export function referenceContractTools(ctx: EngineContext): Tool[] {
  const { tool, lineRef } = toolHelpers(ctx);
  return [
    tool({
      name: 'cart_create',
      description: 'Create an open cart (no checkout yet) in a store of the key, optionally with items.',
      inputSchema: args({
        storeId: Uuid(),
        items: Type.Optional(Type.Array(AddLineSchema, { maxItems: 50 })),
        metadata: Type.Optional(JsonObject('Cart integration data')),
        idempotencyKey: OptionalIdempotencyKey,
      }),
      permission: PERMISSION,
      annotations: write(),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'cart_create', input, async (trx, sink) => ({
          cart: await createCart(trx, sink, call.principal, input, 'mcp', { withCheckout: false }),
        })),
    }),
    tool({
      name: 'cart_get',
      description: 'One cart with its items and totals.',
      inputSchema: args({ cartId: CartId }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => ({ cart: await getCart(ctx, call.principal, input.cartId) }),
    }),
    ...(['add', 'update', 'remove'] as const).flatMap((action) => {
      const run = action === 'add' ? addCartItems : action === 'update' ? updateCartItems : removeCartItems;
      const line =
        action === 'add'
          ? { catalogId: CatalogId, quantity: Quantity }
          : action === 'update'
            ? { ...lineRef, quantity: Quantity }
            : lineRef;
      return [
        tool({
          name: `cart_${action}_item`,
          description: `${action === 'add' ? 'Add one line' : action === 'update' ? 'Set the quantity of one line' : 'Remove one line'} (emits cart.item.${action === 'add' ? 'added' : action === 'update' ? 'updated' : 'removed'}). idempotencyKey is required.`,
          inputSchema: args({ cartId: CartId, ...line, idempotencyKey: IdempotencyKey }),
          permission: PERMISSION,
          annotations: write(action === 'remove'),
          run: async (input, call) =>
            toolWrite(ctx, call.principal, `cart_${action}_item`, input, async (trx, sink) => {
              const { cartId, idempotencyKey: _key, ...lineInput } = input as Record<string, unknown>;
              return { cart: await run(trx, sink, call.principal, cartId as string, [lineInput] as never, 'mcp') };
            }),
        }),
        tool({
          name: `cart_${action}_bundle`,
          description: `${action === 'add' ? 'Add' : action === 'update' ? 'Set quantities of' : 'Remove'} several lines atomically (emits cart.bundle.${action === 'add' ? 'added' : action === 'update' ? 'updated' : 'removed'}). idempotencyKey is required.`,
          inputSchema: args({
            cartId: CartId,
            items: Type.Array(Type.Object(line, { additionalProperties: false }), { minItems: 1, maxItems: 50 }),
            idempotencyKey: IdempotencyKey,
          }),
          permission: PERMISSION,
          annotations: write(action === 'remove'),
          run: async (input, call) =>
            toolWrite(ctx, call.principal, `cart_${action}_bundle`, input, async (trx, sink) => {
              const lines = (input as { items: object[] }).items;
              const cart = await run(
                trx,
                sink,
                call.principal,
                (input as { cartId: string }).cartId,
                lines as never,
                'mcp',
              );
              return { cart };
            }),
        }),
      ];
    }),
    tool({
      name: 'cart_archive',
      description: 'Archive a cart permanently (a prepared checkout is cancelled).',
      inputSchema: args({ cartId: CartId, idempotencyKey: OptionalIdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'cart_archive', input, async (trx, sink) => ({
          cart: await archiveCart(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'cart_clear',
      description: 'Empty a cart without a checkout (emits cart.cleared). idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'cart_clear', input, async (trx, sink) => ({
          cart: await clearCart(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'cart_close',
      description: 'Close an open cart that has no checkout (emits cart.closed). idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'cart_close', input, async (trx, sink) => ({
          cart: await closeCart(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'checkout_prepare',
      description:
        'Prepare the checkout of a cart: returns the authoritative summary (items, totals) and an awaiting-payment handoff reference. Accepts no card data, CVV, one-time codes, payment tokens, addresses or payment-authentication state. idempotencyKey is required.',
      inputSchema: args({ cartId: CartId, idempotencyKey: IdempotencyKey }),
      permission: PERMISSION,
      annotations: write(false, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'checkout_prepare', input, async (trx, sink) => ({
          checkout: await prepareCheckout(trx, sink, call.principal, input.cartId, 'mcp'),
        })),
    }),
    tool({
      name: 'checkout_get',
      description: 'A checkout with its current summary and handoff reference.',
      inputSchema: args({ checkoutId: CheckoutId }),
      permission: PERMISSION,
      annotations: readOnly,
      run: async (input, call) => ({ checkout: await getCheckout(ctx, call.principal, input.checkoutId) }),
    }),
    tool({
      name: 'checkout_cancel',
      description:
        'Cancel a prepared checkout; the cart is open again without a checkout id (emits checkout.cancelled).',
      inputSchema: args({ checkoutId: CheckoutId, idempotencyKey: OptionalIdempotencyKey }),
      permission: PERMISSION,
      annotations: write(true, true),
      run: async (input, call) =>
        toolWrite(ctx, call.principal, 'checkout_cancel', input, async (trx, sink) => ({
          checkout: await cancelCheckout(trx, sink, call.principal, input.checkoutId, 'mcp'),
        })),
    }),
  ];
}
