import type { OperationExamples } from '@keel/core';
import { EXAMPLE_CONFIG } from './flows/flow-api-schemas.ts';

/**
 * Ids and secrets the examples use for things a caller creates first (`keel engine bootstrap` prints stores,
 * merchant keys and a runtime key pair; the other ids come from the create operations). The replay test
 * (test/openapi-examples.test.ts) maps each to the one it created.
 */
export const EXAMPLE_IDS = {
  merchant: '01a2184a-6a78-750a-8295-16cd9b7f44fd',
  store: '01a2184a-6a86-7751-a3b1-51a91dfa835e',
  merchantKey: '01a21850-0a11-7b22-8c33-d44e55f66a01',
  otherMerchantKey: '01a21850-0a11-7b22-8c33-d44e55f66a02',
  product: '01a21850-1b22-7c33-9d44-e55f66a77b01',
  catalogId: '4820175531',
  otherCatalogId: '4820175548',
  cart: '01a21850-2c33-7d44-8e55-f66a77b88c01',
  checkout: 'chk_8f2c1d9e4b7a4c3f',
  order: 'ord_5d1e8a2b9c7f4e60',
  destination: '01a21850-3d44-7e55-9f66-a77b88c99d01',
  destinationUrl: 'https://hooks.acme-outdoor.com/keel/catalog',
  supplier: '01a21850-4e55-7f66-8a77-b88c99daae01',
  inventoryItem: '01a21850-5f66-7a77-9b88-c99daaebbf01',
  procurementOrder: '01a21850-6a77-7b88-8c99-daaebbfcca01',
  realm: '01a2184a-6a87-751d-af77-eeb1a3d930bc',
  accessKey: 'eak_esMeIQMXuLnSluulOLo7jQho',
  secretKey: 'esk_QztTCjLLgOCXFBxFy7SNMtZ7mxzQRcq9',
  keyPair: '01a21851-7b88-7c99-9daa-ebbfccdd0e01',
  serviceIdentity: '01a21851-8c99-7daa-8ebb-fccdd0ee1f01',
  agent: '01a2184a-6dd3-7fb2-8f88-50f3dbca49d2',
  provider: '01a2184a-6d2a-7bce-bd07-c28a072a24c2',
  providerBaseUrl: 'https://api.openai.com/v1',
  prompt: '01a21851-9daa-7ebb-9fcc-dd0ee1ff2a01',
  session: '01a2184a-6f0a-7a2f-972e-34c457de603c',
  resumeToken: 'srt_oOWSsLXF6eDo57mRinKetowsvwwg5A4t',
  knowledge: '01a21851-aebb-7fcc-8dd0-ee1ff2aa3b01',
  flow: '01a21852-0b11-7c22-8d33-e44f55a66b01',
  execution: '01a21852-2d33-7e44-8f55-a66b77c88d01',
  approval: 'apr_5f0c2a9e8b7d4c3a1f6e2d90',
  toolServer: '01a21852-3e44-7f55-9a66-b77c88d99e01',
  toolServerUrl: 'https://tools.example.com/mcp',
  toolServerHost: 'tools.example.com',
  tool: '01a21852-4f55-7a66-8b77-c88d99eaaf01',
  proposal: '01a21852-5a66-7b77-9c88-d99eaafbba01',
  routingRule: '01a21852-6b77-7c88-8d99-eaafbbcccb01',
  trace: '4f1d7c2a-9b3e-4e8a-a1c6-0d5b7e9f2a31',
  observedTrace: '4bf92f3577b34da6a3ce929d0e0e4736',
  trigger: '01a21852-7c88-7d99-8eaa-fbbcccdd0c01',
  integrationClient: '01a21853-1c22-7d33-8e44-f55a66b77c01',
  runtimeWebhook: '01a21853-2d33-7e44-9f55-a66b77c88d01',
  runtimeWebhookUrl: 'https://hooks.acme-outdoor.com/keel/runtime',
  policy: '01a21853-1a22-7b33-8c44-d55e66f77a01',
  allowlistRequest: '01a21853-2b33-7c44-9d55-e66f77a88b01',
  dataset: '01a21853-3c44-7d55-8e66-f77a88b99c01',
  evaluationRun: '01a21853-4d55-7e66-9f77-a88b99caad01',
} as const;

const E = EXAMPLE_IDS;
const storeId = E.store;
const address = {
  line1: '1200 Harbor Blvd',
  line2: 'Suite 4',
  city: 'Portland',
  region: 'OR',
  country: 'US',
  postalCode: '97201',
};
const customer = { name: 'Jane Doe', email: 'jane.doe@example.org' };
const productBody = (sku: string, name: string, price: number, inventoryQuantity: number) => ({
  storeId,
  sku,
  name,
  price,
  currency: 'USD',
  status: 'active',
  inventoryQuantity,
  productUrl: `https://www.acme-outdoor.com/p/${sku.toLowerCase()}`,
  imageUrl: `https://cdn.acme-outdoor.com/img/${sku.toLowerCase()}.jpg`,
});
const productLookup = { query: { catalogId: E.catalogId, storeId } };
const orderBody = {
  checkoutId: E.checkout,
  customer,
  shippingAddress: address,
  payment: { id: 'pi_3PqR8s2eZvKYlo2C1x9T', status: 'captured', provider: 'stripe' },
};
const idempotent = (key: string) => ({ headers: { 'idempotency-key': key } });
const session = { params: { sessionId: E.session }, headers: { 'x-resume-token': E.resumeToken } };
const inboundProduct = {
  event: 'product.upserted',
  source: 'shopify',
  product: { ...productBody('TENT-TH2-GRN', 'Trailhead 2 tent, forest green', 249, 18) },
};
const sessionUpdate = { label: 'Order 4821: delivery question', channel: 'web', ttl_seconds: 86_400 };
const userUpdate = { display_name: 'Checkout assistant service', metadata: { team: 'growth' }, status: 'active' };
const providerBody = {
  type: 'openai_compatible',
  name: 'OpenAI',
  base_url: E.providerBaseUrl,
  api_key: 'sk-proj-your-openai-key',
  text_model: 'gpt-4o-mini',
  input_price_per_million: 0.15,
  output_price_per_million: 0.6,
  is_default: true,
  settings: { temperature: 0.3, max_tokens: 600 },
};
const promptBody = {
  key: 'shop-assistant',
  name: 'Shop assistant',
  content: 'You are the shop assistant of {{ brand }}. Answer in two sentences, in {{ locale }}.',
  variables: ['brand', 'locale'],
  is_active: true,
};
const identity = (username: string, display_name: string) => ({
  username,
  display_name,
  role: 'developer',
  issue_credentials: true,
});

/** The shopping-assistant flow of the flow examples: look products up in the catalog, then show them. */
const shoppingFlowConfig = {
  ...EXAMPLE_CONFIG,
  routing: { enabled: true, when_to_use: 'The shopper asks for a tent, a sleeping bag or other gear by name' },
};
const flow = { params: { id: E.flow } };
const execution = { params: { id: E.execution } };
const toolServer = { params: { id: E.toolServer } };
const stockLookup = { tool_name: 'lookup_stock', arguments: { sku: 'TENT-TH2-GRN' } };
const serverBody = {
  name: 'Acme Outdoor inventory',
  url: E.toolServerUrl,
  type: 'http',
  description: 'Stock levels per warehouse and supplier lookups',
  api_key: 'tk_live_acme_inventory_4f9c2e',
  capabilities: ['inventory'],
  auto_discover: true,
};

/** One realistic request per operation of the REST listener (`:8083`), shown by `/docs` and replayed by the tests. */
export const ENGINE_REST_EXAMPLES: OperationExamples = {
  'POST /api/v1/catalog/stores': { body: { name: 'Acme Outdoor EU', merchantId: E.merchant } },
  'GET /api/v1/catalog/keys': { query: { limit: 20 } },
  'POST /api/v1/catalog/keys': {
    body: { name: 'Storefront search', scope: 'store', storeIds: [storeId], expiresAt: '2027-06-30T00:00:00Z' },
  },
  'GET /api/v1/catalog/keys/{keyId}': { params: { keyId: E.merchantKey } },
  'DELETE /api/v1/catalog/keys/{keyId}': { params: { keyId: E.merchantKey } },
  'POST /api/v1/catalog/keys/{keyId}/revoke': { params: { keyId: E.merchantKey } },
  'POST /api/v1/catalog/keys/bulk-revoke': { body: { ids: [E.otherMerchantKey] } },
  'POST /api/v1/catalog/keys/bulk-delete': { body: { ids: [E.otherMerchantKey] } },
  'GET /api/v1/catalog/products': { query: { storeId, q: 'tent', status: 'active', limit: 20 } },
  'POST /api/v1/catalog/products': {
    ...idempotent('product-tent-th2-org-2026-11-25'),
    body: productBody('TENT-TH2-ORG', 'Trailhead 2 tent, orange', 229, 40),
  },
  'GET /api/v1/catalog/search': { query: { storeId, q: 'waterproof tent', limit: 10 } },
  'GET /catalog/search': { query: { storeId, q: 'sleeping bag', limit: 10 } },
  'POST /api/v1/catalog/product': { body: productBody('BAG-ALP-0C', 'Alpine 0 °C sleeping bag', 139.5, 25) },
  'GET /api/v1/catalog/product': productLookup,
  'POST /catalog/product': { body: productBody('PAD-AIR-R4', 'AirRest R4 sleeping pad', 89, 60) },
  'GET /catalog/product': productLookup,
  'GET /api/v1/catalog/product-details': productLookup,
  'GET /api/v1/catalog/products/{productId}': { params: { productId: E.product } },
  'PATCH /api/v1/catalog/products/{productId}': {
    params: { productId: E.product },
    body: { price: 219, inventoryQuantity: 55 },
  },
  'DELETE /api/v1/catalog/products/{productId}': { params: { productId: E.product } },
  'GET /api/v1/catalog/carts': { query: { storeId, status: 'checkout_created', limit: 20 } },
  'POST /api/v1/catalog/carts': {
    ...idempotent('cart-web-4821'),
    body: { storeId, items: [{ catalogId: E.catalogId, quantity: 2 }], metadata: { channel: 'web' } },
  },
  'GET /api/v1/catalog/carts/{cartId}': { params: { cartId: E.cart } },
  'POST /api/v1/catalog/carts/items': {
    ...idempotent('cart-4821-add-1'),
    body: { cartId: E.cart, items: [{ catalogId: E.otherCatalogId, quantity: 1 }] },
  },
  'PATCH /api/v1/catalog/carts/items': {
    ...idempotent('cart-4821-update-1'),
    body: { cartId: E.cart, items: [{ catalogId: E.otherCatalogId, quantity: 2 }] },
  },
  'DELETE /api/v1/catalog/carts/items': {
    ...idempotent('cart-4821-remove-1'),
    body: { cartId: E.cart, items: [{ catalogId: E.otherCatalogId }] },
  },
  'POST /api/v1/catalog/carts/clear': { query: { cartId: E.cart } },
  'POST /api/v1/catalog/carts/archive': { query: { cartId: E.cart } },
  'POST /api/v1/catalog/orders': { ...idempotent('order-chk-8f2c1d9e'), body: orderBody },
  'GET /api/v1/catalog/orders': { query: { storeId, status: 'completed', limit: 20 } },
  'POST /api/v1/catalog/orders/complete': { body: orderBody },
  'POST /catalog/orders/complete': { body: orderBody },
  'GET /api/v1/catalog/orders/{orderId}': { params: { orderId: E.order } },
  'PATCH /api/v1/catalog/orders/{orderId}': {
    params: { orderId: E.order },
    body: { customer: { name: 'Jane Doe', email: 'jane@doe-family.example' }, billingAddress: address },
  },
  'POST /api/v1/catalog/webhooks/destinations': {
    body: {
      url: E.destinationUrl,
      events: ['product.updated', 'order.completed'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  },
  'GET /api/v1/catalog/webhooks/destinations/{destinationId}': { params: { destinationId: E.destination } },
  'PATCH /api/v1/catalog/webhooks/destinations/{destinationId}': {
    params: { destinationId: E.destination },
    body: { events: ['product.updated', 'product.inventory.updated', 'order.completed'] },
  },
  'DELETE /api/v1/catalog/webhooks/destinations/{destinationId}': { params: { destinationId: E.destination } },
  'POST /api/v1/catalog/webhooks/destinations/{destinationId}/rotate-signing-secret': {
    params: { destinationId: E.destination },
  },
  'GET /api/v1/catalog/webhooks/destinations/{destinationId}/deliveries': {
    params: { destinationId: E.destination },
    query: { status: 'delivered', limit: 20 },
  },
  'GET /api/v1/catalog/procurement/suppliers': { query: { storeId, limit: 20 } },
  'POST /api/v1/catalog/procurement/suppliers': {
    body: {
      storeId,
      name: 'Nordic Textiles AB',
      externalId: 'SUP-0042',
      email: 'orders@nordic-textiles.example',
      phone: '+46 8 123 456 78',
      status: 'active',
    },
  },
  'GET /api/v1/catalog/procurement/suppliers/{id}': { params: { id: E.supplier } },
  'PATCH /api/v1/catalog/procurement/suppliers/{id}': {
    params: { id: E.supplier },
    body: { email: 'purchasing@nordic-textiles.example' },
  },
  'DELETE /api/v1/catalog/procurement/suppliers/{id}': { params: { id: E.supplier } },
  'GET /api/v1/catalog/procurement/inventory-items': { query: { storeId, limit: 20 } },
  'POST /api/v1/catalog/procurement/inventory-items': {
    body: {
      storeId,
      name: 'Ripstop nylon 20D, forest green (metre)',
      sku: 'FAB-RIP20-GRN',
      supplierId: E.supplier,
      quantity: 340,
      reorderLevel: 100,
      unitCost: '4.85',
      currency: 'EUR',
    },
  },
  'GET /api/v1/catalog/procurement/inventory-items/{id}': { params: { id: E.inventoryItem } },
  'PATCH /api/v1/catalog/procurement/inventory-items/{id}': {
    params: { id: E.inventoryItem },
    body: { quantity: 290, reorderLevel: 120 },
  },
  'DELETE /api/v1/catalog/procurement/inventory-items/{id}': { params: { id: E.inventoryItem } },
  'GET /api/v1/catalog/procurement/orders': { query: { storeId, status: 'requested', limit: 20 } },
  'POST /api/v1/catalog/procurement/orders': {
    body: {
      storeId,
      supplierId: E.supplier,
      items: [{ name: 'Ripstop nylon 20D, forest green (metre)', quantity: 500, inventoryItemId: E.inventoryItem }],
      notes: 'Deliver to the Gothenburg warehouse before 15 January',
    },
  },
  'GET /api/v1/catalog/procurement/orders/{id}': { params: { id: E.procurementOrder } },
  'POST /api/v1/catalog/procurement/orders/{id}/send': { params: { id: E.procurementOrder } },
  'GET /api/v1/catalog/procurement/orders/{id}/quotes': { params: { id: E.procurementOrder } },
  'POST /api/v1/catalog/procurement/orders/{id}/quotes': {
    params: { id: E.procurementOrder },
    body: {
      supplierId: E.supplier,
      items: [{ name: 'Ripstop nylon 20D, forest green (metre)', quantity: 500, unitPrice: '4.60' }],
      currency: 'EUR',
      validUntil: '2027-01-31T00:00:00Z',
    },
  },
  'POST /api/webhooks/catalog': {
    headers: { 'x-webhook-event-id': 'evt_shopify_7d1f0c2a9b' },
    body: inboundProduct,
  },

  'POST /api/v1/auth/register': { body: { username: 'jane.cooper', user_type: 'user' } },
  'POST /api/v1/auth/token': { body: { access_key: E.accessKey, secret_key: E.secretKey } },
  'POST /api/v1/auth/keys': { body: { name: 'CI deploys', realm_id: E.realm, expires_at: '2027-06-30T00:00:00Z' } },
  'DELETE /api/v1/auth/keys/{id}': { params: { id: E.keyPair } },
  'GET /api/v1/users/{id}': { params: { id: E.serviceIdentity } },
  'PUT /api/v1/users/{id}': { params: { id: E.serviceIdentity }, body: userUpdate },
  'PATCH /api/v1/users/{id}': { params: { id: E.serviceIdentity }, body: { display_name: 'Checkout assistant' } },
  'POST /api/v1/users/{id}': { params: { id: E.serviceIdentity }, body: { metadata: { team: 'checkout' } } },
  'DELETE /api/v1/users/{id}': { params: { id: E.serviceIdentity } },
  'POST /api/v1/realms': { body: { name: 'Acme Outdoor staging' } },
  'GET /api/v1/realms/{id}/members': { params: { id: E.realm }, query: { limit: 20 } },
  'POST /api/v1/realms/{id}/members': { params: { id: E.realm }, body: { username: 'jane.cooper', role: 'operator' } },
  'POST /api/v1/realms/{id}/agents': {
    params: { id: E.realm },
    body: { username: 'shop-assistant', display_name: 'Shop assistant', role: 'operator' },
  },
  'POST /api/v1/realms/{id}/services': {
    params: { id: E.realm },
    body: identity('checkout-service', 'Checkout service'),
  },
  'POST /api/v1/realms/{id}/identities/services': {
    params: { id: E.realm },
    body: identity('catalog-sync', 'Catalog sync job'),
  },
  'GET /api/v1/realms/{id}/theme': { params: { id: E.realm } },
  'PUT /api/v1/realms/{id}/theme': {
    params: { id: E.realm },
    body: {
      brand_name: 'Acme Outdoor',
      logo_url: 'https://cdn.acme-outdoor.com/brand/logo.svg',
      primary_color: '#1F6F43',
      accent_color: '#F2A541',
      font_family: 'Inter, sans-serif',
      border_radius_px: 8,
      mode: 'auto',
      welcome_message: 'Hi! Ask me about tents, sleeping bags or your order.',
    },
  },
  'GET /api/v1/runtime/providers/templates/{type}': { params: { type: 'openai_compatible' } },
  'GET /api/v1/runtime/providers': { query: { type: 'openai_compatible', limit: 20 } },
  'POST /api/v1/runtime/providers': { body: providerBody },
  'GET /api/v1/runtime/providers/{id}': { params: { id: E.provider } },
  'PUT /api/v1/runtime/providers/{id}': {
    params: { id: E.provider },
    body: { ...providerBody, settings: { temperature: 0.2, max_tokens: 800 } },
  },
  'DELETE /api/v1/runtime/providers/{id}': { params: { id: E.provider } },
  'PATCH /api/v1/runtime/providers/{id}/toggle': { params: { id: E.provider }, body: { is_active: true } },
  'GET /api/v1/runtime/prompts': { query: { key: 'shop-assistant', limit: 20 } },
  'POST /api/v1/runtime/prompts': { body: promptBody },
  'GET /api/v1/runtime/prompts/{id}': { params: { id: E.prompt } },
  'PUT /api/v1/runtime/prompts/{id}': {
    params: { id: E.prompt },
    body: { ...promptBody, name: 'Shop assistant (two sentences)' },
  },
  'DELETE /api/v1/runtime/prompts/{id}': { params: { id: E.prompt } },
  'POST /api/v1/runtime/prompts/{id}/activate': { params: { id: E.prompt } },
  'GET /api/v1/runtime/configuration/schema': {},
  'GET /api/v1/runtime/configuration/export': {},
  'POST /api/v1/runtime/configuration/deploy': {
    body: {
      dry_run: false,
      bundle: {
        format: 'keel.engine.config/v1',
        providers: [
          {
            name: 'Support model',
            type: 'openai_compatible',
            description: 'Answers support questions',
            base_url: E.providerBaseUrl,
            supports_text: true,
            supports_image: false,
            text_model: 'gpt-4o-mini',
            image_model: null,
            input_price_per_million: 0.15,
            output_price_per_million: 0.6,
            image_price: 0,
            currency: 'USD',
            is_default: false,
            is_active: true,
            settings: { temperature: 0.2 },
            credential: 'api_key',
          },
        ],
        prompts: [
          {
            key: 'support-triage',
            active_version: 1,
            versions: [
              { version: 1, name: 'Support triage', content: 'Sort the request of {{ brand }}.', variables: ['brand'] },
            ],
          },
        ],
      },
      credentials: { 'providers/Support model': 'sk-proj-your-openai-key' },
    },
  },
  'GET /api/v1/runtime/agents/{agentId}/config': { params: { agentId: E.agent } },
  'PUT /api/v1/runtime/agents/{agentId}/config': {
    params: { agentId: E.agent },
    body: {
      system_prompt_id: E.prompt,
      ai_provider_id: E.provider,
      is_default: true,
      settings: { max_latency_ms: 20_000, quality_tier: 'standard' },
    },
  },
  'GET /api/v1/runtime/sessions': { query: { agent_id: E.agent, status: 'active', limit: 20 } },
  'POST /api/v1/runtime/sessions': {
    body: {
      agent_id: E.agent,
      subject_type: 'external',
      subject_id: 'customer-4821',
      channel: 'web',
      label: 'Order 4821',
      ttl_seconds: 86_400,
    },
  },
  'GET /api/v1/runtime/sessions/{sessionId}': session,
  'PUT /api/v1/runtime/sessions/{sessionId}': { ...session, body: sessionUpdate },
  'PATCH /api/v1/runtime/sessions/{sessionId}': { ...session, body: { label: 'Order 4821: delivered late' } },
  'DELETE /api/v1/runtime/sessions/{sessionId}': session,
  'GET /api/v1/runtime/sessions/{sessionId}/messages': { ...session, query: { limit: 50 } },
  'POST /api/v1/runtime/sessions/{sessionId}/messages': {
    ...session,
    body: { role: 'user', content: 'My order 4821 has not arrived yet.' },
  },
  'POST /api/v1/runtime/sessions/{sessionId}/complete': session,
  'POST /api/v1/runtime/sessions/{sessionId}/cancel': session,
  'POST /api/v1/runtime/sessions/{sessionId}/reset': session,
  'POST /api/v1/runtime/sessions/{sessionId}/resume-token/refresh': {
    params: { sessionId: E.session },
    body: { resume_token: E.resumeToken, label: 'Order 4821 (mobile app)' },
  },
  'POST /api/v1/runtime/sessions/{sessionId}/resume-token/recover': { params: { sessionId: E.session } },
  'GET /api/v1/runtime/sessions/{sessionId}/status': { params: { sessionId: E.session } },
  'GET /api/v1/runtime/sessions/{sessionId}/state': session,
  'PUT /api/v1/runtime/sessions/{sessionId}/state': {
    ...session,
    body: { state: { order_id: '4821', preferred_carrier: 'UPS' } },
  },
  'DELETE /api/v1/runtime/sessions/{sessionId}/state/{key}': {
    ...session,
    params: { sessionId: E.session, key: 'preferred_carrier' },
  },
  'POST /api/v1/runtime/sessions/{sessionId}/summarize': { ...session, body: { max_length: 600 } },
  'GET /api/v1/runtime/users/{userId}/context': { params: { userId: 'customer-4821' } },
  'PUT /api/v1/runtime/users/{userId}/context': {
    params: { userId: 'customer-4821' },
    body: { context: { first_name: 'Jane', loyalty_tier: 'gold', preferred_language: 'en' } },
  },
  'GET /api/v1/runtime/knowledge': { query: { scope: 'realm', tag: 'shipping', limit: 20 } },
  'POST /api/v1/runtime/knowledge': {
    body: {
      title: 'Shipping to Norway',
      content: 'We ship tents to Norway in 3 to 5 working days with UPS; duties are included in the price.',
      scope: 'realm',
      tags: ['shipping', 'norway'],
      source: { type: 'url', uri: 'https://www.acme-outdoor.com/help/shipping', name: 'Shipping help page' },
      confidence: 0.9,
    },
  },
  'POST /api/v1/runtime/knowledge/search': { body: { query: 'shipping to Norway', tags: ['shipping'], limit: 5 } },
  'DELETE /api/v1/runtime/knowledge/{id}': { params: { id: E.knowledge } },
  'POST /api/v1/data/events': {
    body: {
      type: 'product_view',
      subject_id: 'customer-4821',
      session_id: 'web-7f3a',
      properties: { product_sku: 'TENT-2P', list: 'search', position: 3 },
      idempotency_key: 'view-7f3a-0001',
    },
  },
  'POST /api/v1/data/events/batch': {
    body: {
      events: [
        { type: 'search', session_id: 'web-7f3a', properties: { query: 'two person tent', results: 12 } },
        { type: 'cart_created', session_id: 'web-7f3a', properties: { items: 1 }, idempotency_key: 'cart-7f3a' },
      ],
    },
  },
  'GET /api/v1/data/query': { query: { type: 'product_view', limit: 20 } },
  'GET /api/v1/observability/logs': { query: { level: 'info', kind: 'request', limit: 20 } },
  'GET /api/v1/observability/traces/{trace_id}': { params: { trace_id: E.observedTrace } },
  'GET /api/v1/observability/metrics': { query: { window_seconds: 300 } },
  'GET /api/v1/observability/alerts': { query: { limit: 20 } },
  'POST /api/v1/observability/alerts': {
    body: { name: 'Error rate above 5%', metric: 'error_rate', operator: 'gt', threshold: 0.05, window_seconds: 300 },
  },
  'GET /api/v1/data/summary': { query: { bucket: 'day', type: 'product_view' } },
  'POST /api/v1/runtime/ai/usage': {
    body: {
      provider_id: E.provider,
      agent_id: E.agent,
      model: 'gpt-4o-mini',
      input_tokens: 1200,
      output_tokens: 350,
      metadata: { job: 'nightly-catalog-summaries' },
    },
  },
  'GET /api/v1/runtime/ai/usage/stats': { query: { agent_id: E.agent } },
  'GET /api/v1/usages': { query: { type: 'ai', limit: 20 } },
  'POST /api/v1/usages': {
    body: {
      type: 'tool',
      name: 'geocode_address',
      quantity: 3,
      agent_id: E.agent,
      cost: 0.015,
      currency: 'USD',
      metadata: { vendor: 'maps-api' },
    },
  },
  'GET /api/v1/usages/summary': { query: { type: 'ai' } },
  'GET /api/v1/usages/tools/summary': { query: { agent_id: E.agent } },
  'POST /api/v1/usages/export': { body: { format: 'csv', type: 'ai' } },
  'POST /api/v1/runtime/webhooks': {
    body: {
      url: E.runtimeWebhookUrl,
      events: [
        'execution.succeeded',
        'execution.failed',
        'flow_execution.waiting_for_approval',
        'usage.threshold_reached',
      ],
      description: 'Order desk notifications',
    },
  },
  'GET /api/v1/runtime/webhooks': { query: { limit: 20 } },
  'GET /api/v1/runtime/webhooks/{id}': { params: { id: E.runtimeWebhook } },
  'DELETE /api/v1/runtime/webhooks/{id}': { params: { id: E.runtimeWebhook } },
  'GET /api/v1/runtime/webhooks/{id}/deliveries': { params: { id: E.runtimeWebhook }, query: { limit: 20 } },
  'GET /api/v1/integrations/clients': { query: { limit: 20 } },
  'POST /api/v1/integrations/clients': {
    body: { name: 'ERP order sync', description: 'Exports completed orders every night', role: 'operator' },
  },
  'GET /api/v1/integrations/clients/{id}': { params: { id: E.integrationClient } },
  'DELETE /api/v1/integrations/clients/{id}': { params: { id: E.integrationClient } },
  'POST /api/v1/integrations/clients/{id}/rotate-secret': {
    params: { id: E.integrationClient },
    body: { overlap_seconds: 3600 },
  },
  'GET /api/v1/governance': {},
  'POST /api/v1/governance/policies': {
    ...idempotent('policy-storefront-v2'),
    body: {
      name: 'Storefront policy',
      description: 'Storefront agents answer, clarify, show products and hand over to checkout; stock lookups only',
      rules: {
        allowed_actions: ['RESPOND', 'CLARIFY', 'ESCALATE', 'RENDER_PRODUCTS', 'CHECKOUT_HANDOFF', 'ERROR'],
        allowed_tools: ['lookup_stock'],
        allowed_provider_types: ['openai_compatible'],
        data_handling: 'standard',
      },
    },
  },
  'POST /api/v1/governance/policies/{id}/activate': { params: { id: E.policy } },
  'POST /api/v1/governance/allowlist': {
    body: { scope: 'tool', value: 'reserve_stock', reason: 'Checkout flow reserves stock before payment (CHG-2231)' },
  },
  'POST /api/v1/governance/allowlist/{id}/decision': {
    params: { id: E.allowlistRequest },
    body: { decision: 'approve', note: 'Reviewed with the checkout team' },
  },
  'PUT /api/v1/governance/quotas': {
    body: {
      window_seconds: 3600,
      max_requests: 50_000,
      max_tokens: 20_000_000,
      max_cost: '250.00',
      max_tool_calls: 100_000,
      notify_at_percent: [80, 100],
    },
  },
  'POST /api/v1/governance/evaluation-datasets': {
    ...idempotent('dataset-shipping-v1'),
    body: {
      name: 'Shipping questions',
      kind: 'synthetic',
      cases: [
        { input: 'Do you ship tents to Norway?', expected_action: 'RESPOND', expected_contains: ['Oslo'] },
        {
          input: 'Reserve two tents for me',
          tool_call: { tool_name: 'reserve_stock', arguments: { sku: 'TENT-2P', quantity: 2 } },
        },
      ],
    },
  },
  'POST /api/v1/governance/evaluation-runs': {
    body: { dataset_id: E.dataset, agent_id: E.agent, mode: 'offline' },
  },
  'GET /api/v1/governance/evaluation-runs/{id}': { params: { id: E.evaluationRun } },
  'POST /api/v1/governance/deployment-profiles': {
    ...idempotent('deployment-eu-prod'),
    body: {
      name: 'EU storefront',
      environment: 'production',
      owner: 'Commerce platform team',
      region: 'eu-west-1',
      data_residency: 'EU',
      data_handling: 'no_retention',
      retention_days: 30,
      controls: ['transcripts off', 'zero-data-retention providers', 'quarterly access review'],
    },
  },
  'POST /api/v1/governance/support-access': {
    ...idempotent('support-ticket-88213'),
    body: {
      support_engineer: 'Keel support, engineer 17',
      reason: 'Ticket 88213: chat turns fail with RUNTIME_PROVIDER_FAILED',
      scope: ['configuration', 'executions', 'logs'],
      customer_approval: { approved_by: 'Realm owner', reference: 'Ticket 88213' },
      duration_minutes: 120,
    },
  },
  'GET /api/v1/governance/support-access': { query: { status: 'active', limit: 20 } },
  'POST /api/v1/governance/lawful-requests': {
    ...idempotent('lawful-2026-0142'),
    body: {
      authority: 'District court of Amsterdam',
      jurisdiction: 'NL',
      request_type: 'preservation',
      reference: 'Case 2026/0142',
      received_at: '2026-11-20T09:30:00Z',
      due_at: '2026-12-04T17:00:00Z',
      status: 'under_review',
      data_categories: ['session metadata', 'execution records'],
    },
  },
  'POST /api/v1/runtime/execute': {
    body: {
      session_id: E.session,
      resume_token: E.resumeToken,
      channel: 'web',
      locale: 'en-US',
      input: { message: 'Do you ship the Trailhead 2 tent to Norway?' },
      metadata: { variables: { brand: 'Acme Outdoor', locale: 'English' } },
    },
  },
  'GET /api/v1/runtime/flows': { query: { status: 'published', is_active: true, limit: 20 } },
  'POST /api/v1/runtime/flows': {
    body: {
      name: 'Shopping assistant',
      description: 'Finds tents, sleeping bags and other gear by name and shows them',
      config: shoppingFlowConfig,
    },
  },
  'GET /api/v1/runtime/flows/{id}': flow,
  'PUT /api/v1/runtime/flows/{id}': {
    ...flow,
    body: {
      name: 'Shopping assistant',
      description: 'Finds gear by name and shows up to four products',
      config: { ...shoppingFlowConfig, runtime: { max_tool_calls: 6 } },
    },
  },
  'DELETE /api/v1/runtime/flows/{id}': flow,
  'GET /api/v1/runtime/flows/{id}/versions': { ...flow, query: { limit: 20 } },
  'POST /api/v1/runtime/flows/{id}/publish': { ...flow, body: {} },
  'POST /api/v1/runtime/flows/{id}/activate': { ...flow, body: {} },
  'POST /api/v1/runtime/flows/{id}/rollback': { ...flow, body: {} },
  'POST /api/v1/runtime/flows/{id}/archive': flow,
  'POST /api/v1/runtime/flows/{id}/preview': { ...flow, body: { config: shoppingFlowConfig } },
  'GET /api/v1/runtime/flows/{id}/fixtures': { ...flow, query: { limit: 20 } },
  'POST /api/v1/runtime/flows/{id}/fixtures': {
    ...flow,
    body: {
      name: 'finds the Trailhead 2 tent',
      input: { query: 'two person tent' },
      mocks: {
        tools: {
          catalog_search: {
            products: [{ catalogId: E.catalogId, name: 'Trailhead 2 tent, forest green', price: 249 }],
          },
        },
      },
      expect: { state: 'succeeded', action_type: 'RENDER_PRODUCTS', tool_calls: ['catalog_search'] },
    },
  },
  'POST /api/v1/runtime/flows/{id}/test': { ...flow, body: {} },
  'POST /api/v1/runtime/flows/{id}/promote': {
    ...flow,
    body: { environment: 'development', note: 'Fixtures pass; ready for QA' },
  },
  'GET /api/v1/runtime/flows/{id}/promotions': { ...flow, query: { limit: 20 } },
  'GET /api/v1/runtime/flow-routing-profiles': { query: { limit: 20 } },
  'GET /api/v1/runtime/flows/{id}/routing-profile': flow,
  'PUT /api/v1/runtime/flows/{id}/routing-profile': {
    ...flow,
    body: {
      enabled: true,
      when_to_use: 'The shopper looks for a tent, a sleeping bag or other gear by name or kind',
      when_not_to_use: 'Order status, returns or refunds',
      capabilities: ['product search'],
      examples: ['do you have a two person tent', 'show me sleeping bags for zero degrees'],
      minimum_confidence: 0.25,
      priority: 10,
    },
  },
  'PUT /api/v1/runtime/flow-routing-policy': {
    body: { mode: 'automatic', compatibility_fallback: true, fallback_flow_id: E.flow, canary_percentage: 10 },
  },
  'POST /api/v1/runtime/flow-routing-preview': {
    body: { intent: 'do you have a two person tent', subject_id: 'customer-4821' },
  },
  'POST /api/v1/governance/flow-routing-evaluations': {
    body: {
      dataset: [
        { message: 'do you have a two person tent', expected_flow_id: E.flow },
        { message: 'where is my order 4821', expected_flow_id: null },
      ],
    },
  },
  'POST /api/v1/runtime/flows/draft': {
    body: {
      goal: 'Help shoppers find a tent or sleeping bag by name and show it',
      channel: 'web',
      name: 'Gear finder',
    },
  },
  'GET /api/v1/runtime/flows/{id}/triggers': { ...flow, query: { limit: 20 } },
  'POST /api/v1/runtime/flows/{id}/triggers': {
    ...flow,
    body: {
      kind: 'event',
      name: 'Order paid',
      event: 'order.paid',
      agent_id: E.agent,
      input: { query: 'two person tent' },
    },
  },
  'POST /api/v1/runtime/flows/{id}/triggers/{triggerId}/fire': {
    params: { id: E.flow, triggerId: E.trigger },
    body: { event_id: 'order-4821-paid', payload: { query: 'sleeping bag' } },
  },
  'DELETE /api/v1/runtime/flows/{id}/triggers/{triggerId}': { params: { id: E.flow, triggerId: E.trigger } },
  'GET /api/v1/runtime/executions': { query: { state: 'succeeded', flow_id: E.flow, limit: 20 } },
  'POST /api/v1/runtime/executions': {
    ...idempotent('execution-web-7f3a-0001'),
    body: { flow_id: E.flow, agent_id: E.agent, input: { query: 'two person tent' }, max_retries: 3 },
  },
  'POST /api/v1/runtime/flows/{id}/execute': {
    ...flow,
    ...idempotent('execute-web-7f3a-0002'),
    body: { agent_id: E.agent, input: { query: 'sleeping bag' } },
  },
  'GET /api/v1/runtime/executions/{id}': execution,
  'POST /api/v1/runtime/executions/{id}/cancel': execution,
  'POST /api/v1/runtime/executions/{id}/retry': execution,
  'POST /api/v1/runtime/executions/{id}/resume': {
    ...execution,
    body: { event: 'payment.confirmed', payload: { reference: 'pi_3PqR8s2eZvKYlo2C1x9T' } },
  },
  'POST /api/v1/runtime/executions/{id}/approvals/{approvalId}/approve': {
    params: { id: E.execution, approvalId: E.approval },
    body: { reason: 'Refund checked against order 4821' },
  },
  'POST /api/v1/runtime/executions/{id}/approvals/{approvalId}/deny': {
    params: { id: E.execution, approvalId: E.approval },
    body: { reason: 'Order 4821 was already refunded' },
  },
  'GET /api/v1/runtime/executions/{id}/events': { ...execution, query: { after: 0, limit: 100 } },
  'GET /api/v1/runtime/executions/{id}/actions': execution,
  'GET /api/v1/runtime/mcp/servers': { query: { is_active: true, limit: 20 } },
  'POST /api/v1/runtime/mcp/servers': { body: serverBody },
  'GET /api/v1/runtime/mcp/servers/{id}': toolServer,
  'PUT /api/v1/runtime/mcp/servers/{id}': {
    ...toolServer,
    body: { ...serverBody, api_key: 'tk_live_acme_inventory_8b1d7a', auto_discover: false },
  },
  'DELETE /api/v1/runtime/mcp/servers/{id}': toolServer,
  'PATCH /api/v1/runtime/mcp/servers/{id}/toggle': { ...toolServer, body: { is_active: true } },
  'POST /api/v1/runtime/mcp/servers/{id}/test': toolServer,
  'POST /api/v1/runtime/mcp/servers/{id}/probe': toolServer,
  'POST /api/v1/runtime/mcp/servers/{id}/discover': toolServer,
  'POST /api/v1/runtime/mcp/servers/{id}/contract-test': toolServer,
  'PUT /api/v1/runtime/mcp/servers/{id}/profile': {
    ...toolServer,
    body: {
      transport: 'streamable_http',
      auth: { type: 'bearer' },
      egress: { allowed_hosts: [E.toolServerHost] },
      region: 'eu',
      data_handling: ['standard', 'no_retention'],
      estimated_cost: 2000,
    },
  },
  'GET /api/v1/runtime/mcp/servers/{id}/credentials': toolServer,
  'POST /api/v1/runtime/mcp/servers/{id}/credentials/{version}/rollback': {
    params: { id: E.toolServer, version: 1 },
  },
  'GET /api/v1/runtime/mcp/servers/{id}/tools': toolServer,
  'PUT /api/v1/runtime/mcp/tools/{toolId}/review': {
    params: { toolId: E.tool },
    body: { decision: 'approve', note: 'Read-only stock lookup, checked by the platform team' },
  },
  'GET /api/v1/runtime/mcp/servers/{id}/resources': toolServer,
  'GET /api/v1/runtime/mcp/servers/{id}/resource-templates': toolServer,
  'POST /api/v1/runtime/mcp/servers/{id}/resources/read': {
    ...toolServer,
    body: { uri: 'inventory://warehouses/main' },
  },
  'GET /api/v1/runtime/mcp/tool-proposals': { query: { limit: 20 } },
  'POST /api/v1/runtime/mcp/tool-proposals/generate': { body: { server_id: E.toolServer, max_proposals: 3 } },
  'POST /api/v1/runtime/mcp/tool-proposals/{proposalId}/review': {
    params: { proposalId: E.proposal },
    body: { decision: 'reject', note: 'Covered by lookup_stock' },
  },
  'POST /api/v1/runtime/mcp/tools/execute': { body: { ...stockLookup, strategy: 'first_healthy' } },
  'POST /api/v1/runtime/mcp/tools/execute-parallel': {
    body: {
      calls: [stockLookup, { tool_name: 'lookup_stock', arguments: { sku: 'BAG-ALP-0C' } }],
    },
  },
  'POST /api/v1/runtime/mcp/tools/aggregate': { body: stockLookup },
  'POST /api/v1/runtime/mcp/tools/route': { body: { tool_name: 'lookup_stock' } },
  'POST /api/v1/runtime/mcp/routing/preview': { body: { tool_name: 'lookup_stock' } },
  'POST /api/v1/runtime/mcp/proxy': { body: { server_id: E.toolServer, ...stockLookup } },
  'GET /api/v1/runtime/mcp/routing/trace/{traceId}': { params: { traceId: E.trace } },
  'GET /api/v1/runtime/mcp/routing/rules': {},
  'POST /api/v1/runtime/mcp/routing/rules': {
    body: { tool_name: 'lookup_stock', strategy: 'first_healthy', priority: 10, timeout_ms: 5000, max_retries: 1 },
  },
  'GET /api/v1/runtime/mcp/routing/rules/{id}': { params: { id: E.routingRule } },
  'PUT /api/v1/runtime/mcp/routing/rules/{id}': {
    params: { id: E.routingRule },
    body: { tool_name: 'lookup_stock', strategy: 'first_healthy', priority: 20, timeout_ms: 3000, max_retries: 2 },
  },
  'DELETE /api/v1/runtime/mcp/routing/rules/{id}': { params: { id: E.routingRule } },
  'GET /api/v1/runtime/mcp/sessions/{sessionId}/context': { params: { sessionId: E.session } },
  'PUT /api/v1/runtime/mcp/sessions/{sessionId}/context': {
    params: { sessionId: E.session },
    body: { context: { preferred_warehouse: 'main', last_sku: 'TENT-TH2-GRN' }, resume_token: E.resumeToken },
  },
  'GET /api/v1/runtime/mcp/interaction-policy': {},
  'PUT /api/v1/runtime/mcp/interaction-policy': {
    body: {
      sampling: { enabled: true, provider_id: E.provider, max_requests_per_call: 2, max_tokens_per_request: 512 },
      elicitation: { mode: 'session_context' },
      window_seconds: 3600,
    },
  },
  'GET /api/v1/runtime/mcp/interactions': { query: { limit: 20, kind: 'sampling' } },
  'POST /api/v1/runtime/agents/{agentId}/mcp-servers': {
    params: { agentId: E.agent },
    body: { server_id: E.toolServer },
  },
  'DELETE /api/v1/runtime/agents/{agentId}/mcp-servers/{serverId}': {
    params: { agentId: E.agent, serverId: E.toolServer },
  },
  'POST /api/v1/runtime/agents/{agentId}/flows/{flowId}/select': { params: { agentId: E.agent, flowId: E.flow } },
  'POST /api/v1/runtime/ai/chat': {
    body: {
      agent_id: E.agent,
      session_id: E.session,
      resume_token: E.resumeToken,
      messages: [{ role: 'user', content: 'How long does delivery to Oslo take?' }],
      metadata: { variables: { brand: 'Acme Outdoor', locale: 'English' } },
    },
  },
};

const mcpToolsList = { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } };

/** The MCP listener (`:8084`): a JSON-RPC request on each of its two paths. */
export const ENGINE_MCP_EXAMPLES: OperationExamples = {
  'POST /': mcpToolsList,
  'POST /mcp': {
    body: {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'catalog_search_products', arguments: { storeId, q: 'tent', status: 'active', limit: 5 } },
    },
  },
};

/** The webhook ingress listener (`:8085`). */
export const ENGINE_WEBHOOK_EXAMPLES: OperationExamples = {
  'POST /webhooks/catalog': { headers: { 'x-webhook-event-id': 'evt_shopify_9a4c2e7b1d' }, body: inboundProduct },
  'POST /webhooks/procurement': {
    headers: { 'x-webhook-event-id': 'evt_erp_supplier_20261125_0042' },
    body: {
      event: 'supplier.updated',
      source: 'erp',
      supplier: {
        storeId,
        name: 'Nordic Textiles AB',
        externalId: 'SUP-0042',
        email: 'orders@nordic-textiles.example',
      },
    },
  },
};
