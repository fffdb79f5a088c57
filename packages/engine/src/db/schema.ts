import type { IdempotencyKeyTable, OutboxAttemptTable, OutboxMessageTable } from '@keel/core';
import type { Generated } from 'kysely';

type Timestamp = string | Date;
type Bool = boolean | number;

export interface MerchantTable {
  id: string;
  name: string;
  /** The direct parent merchant (a network of one level: a merchant and its direct sub-merchants). */
  parent_id: string | null;
  /** `active` or `inactive`; keys of an inactive merchant are refused (401). */
  status: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface StoreTable {
  id: string;
  merchant_id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MerchantKeyTable {
  id: string;
  merchant_id: string;
  name: string;
  /** `merchant`, `store`, `merchant_network` or `custom`. */
  scope: string;
  /** JSON array of store ids for `store` (one) and `custom` keys; `[]` otherwise. */
  store_ids: string;
  /** The first characters of the key, to recognise it in lists; the key itself is never stored. */
  key_prefix: string;
  key_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

export interface ProductTable {
  /** Integer row key: the full-text index refers to rows by it. */
  seq: Generated<number>;
  id: string;
  catalog_id: string;
  merchant_id: string;
  store_id: string;
  sku: string | null;
  external_id: string | null;
  name: string;
  description: string | null;
  /** Price in the currency's minor units (ISO 4217 exponent): exact, never a float. */
  price_minor: number;
  currency: string;
  status: string;
  in_stock: Bool;
  inventory_quantity: number;
  image_url: string | null;
  image_urls: unknown;
  product_url: string | null;
  metadata: unknown;
  other_details: unknown;
  variants: unknown;
  /** The searchable text of `other_details` (its values, flattened), maintained with the row. */
  search_text: string;
  source: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CartTable {
  id: string;
  merchant_id: string;
  store_id: string;
  status: string;
  checkout_id: string | null;
  currency: string | null;
  total_quantity: number;
  total_minor: number;
  metadata: unknown;
  other_details: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CartItemTable {
  id: string;
  cart_id: string;
  product_id: string;
  catalog_id: string;
  quantity: number;
  unit_price_minor: number;
  currency: string;
  product_snapshot: unknown;
  metadata: unknown;
  other_details: unknown;
  position: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CheckoutTable {
  id: string;
  cart_id: string;
  merchant_id: string;
  store_id: string;
  /** `prepared`, `cancelled` or `completed`. */
  status: string;
  handoff_reference: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SalesOrderTable {
  id: string;
  order_id: string;
  merchant_id: string;
  store_id: string;
  cart_id: string;
  /** Unique: one order per checkout, enforced by the database. */
  checkout_id: string;
  status: string;
  payment: unknown;
  customer: unknown;
  shipping_address: unknown;
  billing_address: unknown;
  items: unknown;
  total_quantity: number;
  total_minor: number;
  currency: string;
  metadata: unknown;
  other_details: unknown;
  source: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
  cancelled_at: Timestamp | null;
}

export interface WebhookDestinationTable {
  id: string;
  merchant_id: string;
  url: string;
  description: string | null;
  /** JSON array of event names (or `["*"]`). */
  events: string;
  /** AES-256-GCM sealed `x-webhook-secret` value, when one is configured. */
  secret_sealed: string | null;
  /** AES-256-GCM sealed Standard Webhooks signing secret. */
  signing_secret_sealed: string;
  active: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookReceiptTable {
  key_id: string;
  event_id: string;
  response: string;
  created_at: Timestamp;
}

export interface SupplierTable {
  id: string;
  merchant_id: string;
  store_id: string;
  external_id: string | null;
  name: string;
  email: string | null;
  phone: string | null;
  status: string;
  metadata: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InventoryItemTable {
  id: string;
  merchant_id: string;
  store_id: string;
  supplier_id: string | null;
  sku: string | null;
  name: string;
  quantity: number;
  reorder_level: number;
  unit_cost_minor: number | null;
  currency: string;
  metadata: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProcurementOrderTable {
  id: string;
  merchant_id: string;
  store_id: string;
  supplier_id: string | null;
  status: string;
  items: unknown;
  notes: string | null;
  source: string;
  sent_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProcurementQuoteTable {
  id: string;
  order_id: string;
  merchant_id: string;
  supplier_id: string | null;
  items: unknown;
  total_minor: number;
  currency: string;
  notes: string | null;
  valid_until: Timestamp | null;
  created_at: Timestamp;
}

export interface EngineDb {
  merchant: MerchantTable;
  store: StoreTable;
  merchant_key: MerchantKeyTable;
  product: ProductTable;
  cart: CartTable;
  cart_item: CartItemTable;
  checkout: CheckoutTable;
  sales_order: SalesOrderTable;
  webhook_destination: WebhookDestinationTable;
  webhook_receipt: WebhookReceiptTable;
  supplier: SupplierTable;
  inventory_item: InventoryItemTable;
  procurement_order: ProcurementOrderTable;
  procurement_quote: ProcurementQuoteTable;
  idempotency_key: IdempotencyKeyTable;
  outbox_message: OutboxMessageTable;
  outbox_attempt: OutboxAttemptTable;
}
