// The shipped example flow set (issue 13 item 6): a shopping assistant over the linked merchant's catalog. Installed
// by `keel engine flows install shopping-assistant`, run by `keel engine flows run shopping-assistant`.

/** Names the installer gives what it creates in the realm (found again by these on a re-install). */
export const SHOPPING_ASSISTANT = {
  flowName: 'Shopping assistant',
  agentUsername: 'shopping-assistant',
  providerName: 'shopping-assistant-model',
  promptKey: 'shopping-assistant',
  prompt:
    'You are the shopping assistant of this shop. Follow the instructions of each step exactly and answer briefly.',
  /** Carts at or above this total (in the cart's currency) wait for an approval before the checkout handoff. */
  approvalThreshold: 200,
} as const;

const v = (path: string, fallback?: unknown) => ({ var: fallback === undefined ? path : [path, fallback] });

/**
 * search words (model) → catalog_search → does a product match? (ai_decision) → yes: details → cart → high value?
 * → approval → checkout handoff (model summary) | no: a broader word (model) → catalog_search → offer alternatives.
 */
export const SHOPPING_ASSISTANT_DESCRIPTION =
  'Finds a product in the linked catalog, shows its details, puts it in a cart and hands off to checkout; a cart at or above the approval threshold waits for an approval; nothing found → alternatives.';

export const shoppingAssistantConfig = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: { allowed_actions: ['RESPOND', 'CHECKOUT_HANDOFF', 'OFFER_PRODUCT_ALTERNATIVES'] },
  routing: {
    when_to_use: 'find buy order a product add to cart checkout',
    capabilities: ['product search', 'product details', 'cart', 'checkout handoff'],
  },
  contract: {
    input: {
      type: 'object',
      properties: {
        message: { type: 'string', description: "The shopper's request" },
        quantity: { type: 'number', description: 'How many to put in the cart (default 1)' },
        approval_threshold: {
          type: 'number',
          description: `Cart total needing an approval (default ${SHOPPING_ASSISTANT.approvalThreshold})`,
        },
      },
      required: ['message'],
    },
  },
  start: 'terms',
  nodes: [
    {
      id: 'terms',
      type: 'ai',
      label: 'Search words',
      instructions:
        "Extract the product to search for from the shopper's message: reply with one to three words only, no punctuation.",
      input: v('input.message'),
      next: 'search',
    },
    {
      id: 'search',
      type: 'tool',
      label: 'Search the catalog',
      tool: 'catalog_search',
      effect: 'read',
      arguments: { object: { query: { trim: [v('vars.terms', 'product')] }, limit: 5 } },
      next: 'pick',
    },
    {
      id: 'pick',
      type: 'ai_decision',
      label: 'A match?',
      instructions: "Does one of the found products match the shopper's request?",
      input: {
        object: {
          request: v('input.message'),
          products: { map: [v('vars.search.products', []), v('item.name')] },
        },
      },
      choices: [
        { key: 'match', description: 'The first product matches the request' },
        { key: 'none', description: 'No product matches (or none was found)' },
      ],
      minimum_confidence: 0.5,
      fallback_choice: 'none',
      branches: { match: 'details', none: 'broaden' },
    },
    {
      id: 'details',
      type: 'tool',
      label: 'Product details',
      tool: 'catalog_get_product_details',
      effect: 'read',
      arguments: { object: { catalogId: v('vars.search.products.0.catalogId') } },
      next: 'cart',
    },
    {
      id: 'cart',
      type: 'tool',
      label: 'Create the cart',
      tool: 'cart_create',
      effect: 'write',
      arguments: {
        object: {
          storeId: v('vars.details.product.storeId'),
          items: [{ object: { catalogId: v('vars.details.product.catalogId'), quantity: v('input.quantity', 1) } }],
        },
      },
      next: 'high_value',
    },
    {
      id: 'high_value',
      type: 'condition',
      label: 'High-value cart?',
      when: {
        '>=': [
          { number: [v('vars.cart.cart.totalAmount', '0')] },
          v('input.approval_threshold', SHOPPING_ASSISTANT.approvalThreshold),
        ],
      },
      on_true: 'approve',
      on_false: 'checkout',
    },
    {
      id: 'approve',
      type: 'approval',
      label: 'Approve a high-value cart',
      message: 'The cart total is at or above the approval threshold: hand it off to checkout?',
      details: {
        object: { total: v('vars.cart.cart.totalAmount'), currency: v('vars.cart.cart.currency') },
      },
      next: 'checkout',
      on_deny: 'declined',
    },
    {
      id: 'checkout',
      type: 'tool',
      label: 'Checkout handoff',
      tool: 'checkout_prepare',
      effect: 'write',
      arguments: { object: { cartId: v('vars.cart.cart.id') } },
      next: 'summary',
    },
    {
      id: 'summary',
      type: 'ai',
      label: 'Tell the shopper',
      instructions: 'Tell the shopper in one sentence that this cart is ready for checkout.',
      input: {
        object: {
          product: v('vars.details.product.name'),
          quantity: v('input.quantity', 1),
          total: v('vars.checkout.checkout.summary.totalAmount'),
          currency: v('vars.checkout.checkout.summary.currency'),
        },
      },
      next: 'handoff',
    },
    {
      id: 'handoff',
      type: 'output',
      action: 'CHECKOUT_HANDOFF',
      content: v('vars.summary'),
      data: {
        object: {
          checkout_id: v('vars.checkout.checkout.id'),
          handoff_reference: v('vars.checkout.checkout.handoff.reference'),
          total: v('vars.checkout.checkout.summary.totalAmount'),
          currency: v('vars.checkout.checkout.summary.currency'),
        },
      },
    },
    {
      id: 'broaden',
      type: 'ai',
      label: 'A broader search word',
      instructions: 'The shop found nothing matching this request. Reply with one broader search word only.',
      input: v('input.message'),
      next: 'alternatives',
    },
    {
      id: 'alternatives',
      type: 'tool',
      label: 'Search alternatives',
      tool: 'catalog_search',
      effect: 'read',
      arguments: { object: { query: { trim: [v('vars.broaden', 'product')] }, limit: 5 } },
      next: 'offer',
    },
    {
      id: 'offer',
      type: 'output',
      action: 'OFFER_PRODUCT_ALTERNATIVES',
      content: { cat: ['Nothing matched exactly. Shall I show similar products for "', v('vars.broaden'), '"?'] },
      data: {
        object: {
          requested_query: v('vars.terms'),
          applied_query: v('vars.broaden'),
          products: {
            map: [
              v('vars.alternatives.products', []),
              { object: { name: v('item.name'), catalog_id: v('item.catalogId') } },
            ],
          },
        },
      },
    },
    {
      id: 'declined',
      type: 'output',
      action: 'RESPOND',
      content: 'The cart is above the approval threshold and its checkout was not approved.',
    },
  ],
};

const product = { catalogId: '1000000001', storeId: '00000000-0000-4000-8000-000000000001', name: 'Trail tent' };
const cart = { id: '00000000-0000-4000-8000-000000000002', totalAmount: '120.00', currency: 'USD' };
const checkout = {
  id: 'chk_fixture',
  summary: { totalAmount: '120.00', currency: 'USD' },
  handoff: { type: 'payment', status: 'awaiting_payment', reference: 'hof_fixture' },
};

/** The catalog's answers when the product is found. */
const foundTools = {
  catalog_search: { products: [product] },
  catalog_get_product_details: { product },
  cart_create: { cart },
  checkout_prepare: { checkout },
};

/** Fixtures replayed by `POST …/test` before activation (mocked catalog and model; deterministic). */
export const shoppingAssistantFixtures = [
  {
    name: 'found, below the threshold: checkout handoff',
    input: { message: 'I need a tent' },
    mocks: {
      tools: foundTools,
      generate: { terms: 'tent', summary: 'Your Trail tent is ready for checkout.' },
      decisions: { pick: { choice: 'match', confidence: 0.9 } },
    },
    expect: {
      state: 'succeeded',
      action_type: 'CHECKOUT_HANDOFF',
      tool_calls: ['catalog_search', 'catalog_get_product_details', 'cart_create', 'checkout_prepare'],
    },
  },
  {
    name: 'high-value cart: approved, then the handoff',
    input: { message: 'I need a tent', quantity: 2, approval_threshold: 100 },
    mocks: {
      tools: foundTools,
      generate: { terms: 'tent', summary: 'Your tents are ready for checkout.' },
      decisions: { pick: { choice: 'match', confidence: 0.9 } },
      approvals: { approve: true },
    },
    expect: { state: 'succeeded', action_type: 'CHECKOUT_HANDOFF' },
  },
  {
    name: 'nothing found: alternatives are offered',
    input: { message: 'a unicorn saddle' },
    mocks: {
      tools: { catalog_search: { products: [] } },
      generate: { terms: 'unicorn saddle', broaden: 'saddle' },
      decisions: { pick: { choice: 'none', confidence: 0.95 } },
    },
    expect: {
      state: 'succeeded',
      action_type: 'OFFER_PRODUCT_ALTERNATIVES',
      tool_calls: ['catalog_search', 'catalog_search'],
    },
  },
];

/** Demo products for a first try (`--demo-products`): upserted by sku into the linked merchant's first store. */
export const DEMO_PRODUCTS = [
  { sku: 'DEMO-TENT-2', name: 'Trail tent for two', price: '149.00', description: 'Light two-person tent' },
  { sku: 'DEMO-TENT-4', name: 'Family tent for four', price: '329.00', description: 'Roomy tent with two cabins' },
  { sku: 'DEMO-BAG-1', name: 'Down sleeping bag', price: '189.00', description: 'Comfort to -5 °C' },
  { sku: 'DEMO-STOVE-1', name: 'Camping stove', price: '45.00', description: 'Compact gas stove' },
].map((p) => ({ ...p, currency: 'USD', inventoryQuantity: 50, status: 'active' as const }));
