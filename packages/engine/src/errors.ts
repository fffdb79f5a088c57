import { createError } from '@keel/core';

/** The engine's catalog error codes; services throw these, each transport maps them in one place. */
export const EngineErrors = {
  invalidId: createError('CATALOG_INVALID_ID', '%s must be a UUID', 400),
  invalidField: createError('CATALOG_INVALID_FIELD', '%s', 400),
  invalidState: createError('CATALOG_INVALID_STATE', '%s', 400),
  paymentData: createError(
    'CATALOG_PAYMENT_DATA_REJECTED',
    'Card numbers, verification codes and payment authentication data are never accepted (found at %s)',
    400,
  ),
  eventIdRequired: createError(
    'WEBHOOK_EVENT_ID_REQUIRED',
    'The X-Webhook-Event-ID header is required (1 to 255 characters)',
    400,
  ),
  unknownEvent: createError('WEBHOOK_UNKNOWN_EVENT', 'Unknown event %s', 400),
  unauthorized: createError('CATALOG_UNAUTHORIZED', 'A valid merchant key is required', 401),
  storeForbidden: createError('CATALOG_STORE_FORBIDDEN', 'The key scope does not include store %s', 403),
  noStoreAccess: createError('CATALOG_NO_STORE_ACCESS', 'The key has no store access', 403),
  scopeForbidden: createError('CATALOG_SCOPE_FORBIDDEN', 'This operation needs a key with scope %s', 403),
  productNotFound: createError('CATALOG_PRODUCT_NOT_FOUND', '%s', 404),
  cartNotFound: createError('CATALOG_CART_NOT_FOUND', 'Cart %s not found', 404),
  cartItemNotFound: createError('CATALOG_CART_ITEM_NOT_FOUND', 'The cart has no item %s', 404),
  checkoutNotFound: createError('CATALOG_CHECKOUT_NOT_FOUND', 'Checkout %s not found', 404),
  orderNotFound: createError('CATALOG_ORDER_NOT_FOUND', 'Order %s not found', 404),
  storeNotFound: createError('CATALOG_STORE_NOT_FOUND', 'Store %s not found', 404),
  keyNotFound: createError('CATALOG_KEY_NOT_FOUND', 'Key %s not found', 404),
  destinationNotFound: createError('WEBHOOK_DESTINATION_NOT_FOUND', 'Webhook destination %s not found', 404),
  supplierNotFound: createError('PROCUREMENT_SUPPLIER_NOT_FOUND', 'Supplier %s not found', 404),
  inventoryItemNotFound: createError('PROCUREMENT_INVENTORY_ITEM_NOT_FOUND', 'Inventory item %s not found', 404),
  procurementOrderNotFound: createError('PROCUREMENT_ORDER_NOT_FOUND', 'Procurement order %s not found', 404),
  identityConflict: createError(
    'CATALOG_IDENTITY_CONFLICT',
    'sku and externalId identify different products in store %s',
    409,
  ),
  productUnavailable: createError('CATALOG_PRODUCT_UNAVAILABLE', 'Product %s is not active', 409),
  outOfStock: createError('CATALOG_OUT_OF_STOCK', 'Product %s is out of stock', 409),
  insufficientInventory: createError(
    'CATALOG_INSUFFICIENT_INVENTORY',
    'Quantity %d of product %s exceeds the inventory',
    409,
  ),
  currencyMismatch: createError('CATALOG_CURRENCY_MISMATCH', 'Product %s is priced in %s but the cart is in %s', 409),
  cartNotOpen: createError('CATALOG_CART_NOT_OPEN', 'Cart %s is %s: its items cannot change', 409),
  cartHasCheckout: createError('CATALOG_CART_HAS_CHECKOUT', 'Cart %s already has a checkout id and cannot be %s', 409),
  cartEmpty: createError('CATALOG_CART_EMPTY', 'Cart %s has no items', 409),
  cartLimit: createError('CATALOG_CART_LIMIT', '%s', 409),
  checkoutCompleted: createError(
    'CATALOG_CHECKOUT_COMPLETED',
    'Checkout %s is already completed; it is never replayed as a new order',
    409,
  ),
  checkoutNotPrepared: createError('CATALOG_CHECKOUT_NOT_PREPARED', 'Checkout %s is %s', 409),
  orderTransition: createError('CATALOG_ORDER_TRANSITION', 'Order %s is %s and cannot become %s', 409),
  keyNotRevoked: createError('CATALOG_KEY_NOT_REVOKED', '%s', 409),
  realmLinkConflict: createError('CATALOG_REALM_LINK_CONFLICT', '%s', 409),
  procurementTransition: createError('PROCUREMENT_ORDER_TRANSITION', '%s', 409),
} as const;

/** A list's `cursor` that is not one of its `nextCursor`s (for core's `decodeCursor`): 400 `CATALOG_INVALID_FIELD`. */
export const invalidCursor = () => EngineErrors.invalidField('cursor is not a cursor this list returned');
