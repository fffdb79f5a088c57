import { columnTypes, createIdempotencyTable, createOutboxTables, dialectOf } from '@keel/core';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  const postgres = dialectOf(db) === 'postgres';
  const money = postgres ? 'bigint' : 'integer';

  await db.schema
    .createTable('merchant')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('parent_id', 'varchar(36)', (c) => c.references('merchant.id'))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merchant_parent').on('merchant').column('parent_id').execute();

  await db.schema
    .createTable('store')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull().references('merchant.id'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('store_merchant').on('store').column('merchant_id').execute();

  await db.schema
    .createTable('merchant_key')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull().references('merchant.id'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('scope', 'varchar(32)', (c) => c.notNull())
    .addColumn('store_ids', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp)
    .addColumn('revoked_at', t.timestamp)
    .addColumn('last_used_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('merchant_key_merchant')
    .on('merchant_key')
    .columns(['merchant_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('product')
    .addColumn('seq', t.serial, (c) => (t.autoIncrement ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('catalog_id', 'varchar(10)', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull().references('store.id'))
    .addColumn('sku', 'varchar(120)')
    .addColumn('external_id', 'varchar(255)')
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('price_minor', money, (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('in_stock', 'boolean', (c) => c.notNull())
    .addColumn('inventory_quantity', 'integer', (c) => c.notNull())
    .addColumn('image_url', 'text')
    .addColumn('image_urls', t.json, (c) => c.notNull())
    .addColumn('product_url', 'text')
    .addColumn('metadata', t.json)
    .addColumn('other_details', t.json)
    .addColumn('variants', t.json, (c) => c.notNull())
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('source', 'varchar(120)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  // Identity: storeId + sku and storeId + externalId each name at most one product (NULLs never collide).
  await db.schema.createIndex('product_store_sku').on('product').columns(['store_id', 'sku']).unique().execute();
  await db.schema
    .createIndex('product_store_external_id')
    .on('product')
    .columns(['store_id', 'external_id'])
    .unique()
    .execute();
  await db.schema.createIndex('product_store_seq').on('product').columns(['store_id', 'seq']).execute();

  // Full-text search over name, description and otherDetails: the one place the engines differ.
  if (postgres) {
    await sql`alter table product add column search_vector tsvector generated always as (
      setweight(to_tsvector('english', coalesce(name, '')), 'A') ||
      setweight(to_tsvector('english', coalesce(search_text, '')), 'B') ||
      setweight(to_tsvector('english', coalesce(description, '')), 'C')
    ) stored`.execute(db);
    await sql`create index product_search on product using gin (search_vector)`.execute(db);
  } else {
    await sql`create virtual table product_fts using fts5(
      name, description, search_text, content='product', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2'
    )`.execute(db);
    await sql`create trigger product_fts_insert after insert on product begin
      insert into product_fts(rowid, name, description, search_text) values (new.seq, new.name, new.description, new.search_text);
    end`.execute(db);
    await sql`create trigger product_fts_delete after delete on product begin
      insert into product_fts(product_fts, rowid, name, description, search_text) values ('delete', old.seq, old.name, old.description, old.search_text);
    end`.execute(db);
    await sql`create trigger product_fts_update after update of name, description, search_text on product begin
      insert into product_fts(product_fts, rowid, name, description, search_text) values ('delete', old.seq, old.name, old.description, old.search_text);
      insert into product_fts(rowid, name, description, search_text) values (new.seq, new.name, new.description, new.search_text);
    end`.execute(db);
  }

  await db.schema
    .createTable('cart')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull().references('store.id'))
    .addColumn('status', 'varchar(32)', (c) => c.notNull())
    .addColumn('checkout_id', 'varchar(64)')
    .addColumn('currency', 'varchar(3)')
    .addColumn('total_quantity', 'integer', (c) => c.notNull())
    .addColumn('total_minor', money, (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('other_details', t.json)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cart_store_created').on('cart').columns(['store_id', 'created_at']).execute();

  await db.schema
    .createTable('cart_item')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cart_id', 'varchar(36)', (c) => c.notNull().references('cart.id'))
    .addColumn('product_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('catalog_id', 'varchar(10)', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('unit_price_minor', money, (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('product_snapshot', t.json, (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('other_details', t.json)
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('cart_item_cart_catalog')
    .on('cart_item')
    .columns(['cart_id', 'catalog_id'])
    .unique()
    .execute();

  await db.schema
    .createTable('checkout')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('cart_id', 'varchar(36)', (c) => c.notNull().references('cart.id'))
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('handoff_reference', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('checkout_cart').on('checkout').column('cart_id').execute();

  await db.schema
    .createTable('sales_order')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('cart_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('checkout_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('status', 'varchar(32)', (c) => c.notNull())
    .addColumn('payment', t.json, (c) => c.notNull())
    .addColumn('customer', t.json)
    .addColumn('shipping_address', t.json)
    .addColumn('billing_address', t.json)
    .addColumn('items', t.json, (c) => c.notNull())
    .addColumn('total_quantity', 'integer', (c) => c.notNull())
    .addColumn('total_minor', money, (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('other_details', t.json)
    .addColumn('source', 'varchar(120)', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addColumn('completed_at', t.timestamp)
    .addColumn('cancelled_at', t.timestamp)
    .execute();
  await db.schema
    .createIndex('sales_order_store_created')
    .on('sales_order')
    .columns(['store_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_destination')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull().references('merchant.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text')
    .addColumn('signing_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_destination_merchant').on('webhook_destination').column('merchant_id').execute();

  await db.schema
    .createTable('webhook_receipt')
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_receipt_pk', ['key_id', 'event_id'])
    .execute();

  await db.schema
    .createTable('supplier')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull().references('store.id'))
    .addColumn('external_id', 'varchar(255)')
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(320)')
    .addColumn('phone', 'varchar(64)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('supplier_store_external')
    .on('supplier')
    .columns(['store_id', 'external_id'])
    .unique()
    .execute();

  await db.schema
    .createTable('inventory_item')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull().references('store.id'))
    .addColumn('supplier_id', 'varchar(36)')
    .addColumn('sku', 'varchar(120)')
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('reorder_level', 'integer', (c) => c.notNull())
    .addColumn('unit_cost_minor', money)
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('metadata', t.json)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('inventory_item_store_sku')
    .on('inventory_item')
    .columns(['store_id', 'sku'])
    .unique()
    .execute();

  await db.schema
    .createTable('procurement_order')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('store_id', 'varchar(36)', (c) => c.notNull().references('store.id'))
    .addColumn('supplier_id', 'varchar(36)')
    .addColumn('status', 'varchar(32)', (c) => c.notNull())
    .addColumn('items', t.json, (c) => c.notNull())
    .addColumn('notes', 'text')
    .addColumn('source', 'varchar(120)', (c) => c.notNull())
    .addColumn('sent_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('procurement_order_store')
    .on('procurement_order')
    .columns(['store_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('procurement_quote')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(36)', (c) => c.notNull().references('procurement_order.id'))
    .addColumn('merchant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('supplier_id', 'varchar(36)')
    .addColumn('items', t.json, (c) => c.notNull())
    .addColumn('total_minor', money, (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('notes', 'text')
    .addColumn('valid_until', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('procurement_quote_order').on('procurement_quote').column('order_id').execute();

  await createIdempotencyTable(db);
  await createOutboxTables(db);
}
