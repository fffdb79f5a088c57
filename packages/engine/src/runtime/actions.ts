/** The normalized actions a client renders. */
export const ACTION_TYPES = [
  'RESPOND',
  'CLARIFY',
  'RENDER_PRODUCTS',
  'OFFER_PRODUCT_ALTERNATIVES',
  'RENDER_PRODUCT_ALTERNATIVES',
  'RENDER_PRODUCT_DETAILS',
  'DATA_RESULT',
  'APPROVAL_REQUIRED',
  'ERROR',
  'ORDER_SUMMARY',
  'ACTION_REQUIRED',
  'ESCALATE',
  'CHECKOUT_HANDOFF',
  'OPEN_WIDGET',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const ACTION_DESCRIPTIONS: Record<ActionType, string> = {
  RESPOND: 'Show the assistant text',
  CLARIFY: 'Ask the user the question in `content`; `data.options` may list choices',
  RENDER_PRODUCTS: 'Render the products in `data.products`',
  OFFER_PRODUCT_ALTERNATIVES: 'Offer to look for alternatives (the exact request found nothing); falls back to RESPOND',
  RENDER_PRODUCT_ALTERNATIVES: 'Render broader results with the requested and applied query; falls back to DATA_RESULT',
  RENDER_PRODUCT_DETAILS: 'Render one product in detail; falls back to DATA_RESULT',
  DATA_RESULT: 'Structured data in `data` (generic rendering)',
  APPROVAL_REQUIRED: 'A tool action waits for approval',
  ERROR: 'The execution could not answer; `data.code` says why, `data.retryable` whether to retry',
  ORDER_SUMMARY: 'Show the order summary in `data`',
  ACTION_REQUIRED: 'The user must do something outside the chat',
  ESCALATE: 'Hand the conversation to a human',
  CHECKOUT_HANDOFF: 'Open the checkout; opaque checkout metadata only',
  OPEN_WIDGET: 'Open a client surface; opaque surface metadata only',
};

export interface NormalizedAction {
  type: ActionType;
  content: string | null;
  data: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
}

export interface ClientCapabilities {
  vision?: boolean | undefined;
  /** Action types the client renders; when absent, every action is assumed supported. */
  actions?: readonly string[] | undefined;
}

/**
 * Applies the client's declared capabilities exactly as the contract lists: an unsupported
 * OFFER_PRODUCT_ALTERNATIVES becomes RESPOND; an unsupported RENDER_PRODUCT_ALTERNATIVES or
 * RENDER_PRODUCT_DETAILS becomes DATA_RESULT with the intended type in `metadata.original_type`. Every other
 * action is returned as it is.
 */
export function downgradeForClient(
  action: NormalizedAction,
  capabilities: ClientCapabilities | undefined,
): NormalizedAction {
  const supported = capabilities?.actions;
  if (!supported || supported.includes(action.type)) return action;
  if (action.type === 'OFFER_PRODUCT_ALTERNATIVES')
    return { ...action, type: 'RESPOND', metadata: { ...action.metadata, original_type: action.type } };
  if (action.type === 'RENDER_PRODUCT_ALTERNATIVES' || action.type === 'RENDER_PRODUCT_DETAILS')
    return { ...action, type: 'DATA_RESULT', metadata: { ...action.metadata, original_type: action.type } };
  return action;
}

/** Keys a handoff action may never carry (addresses, contact and payment details). */
const HANDOFF_FORBIDDEN =
  /^(?:address|addresses|shipping_?address|billing_?address|street|line1|line2|postal_?code|zip|zip_?code|city|email|e_?mail|phone|phone_?number|mobile|telephone|card|card_?number|pan|cvv|cvc|expiry|expiration|payment|payment_?method|payment_?details|iban|account_?number|customer|name|first_?name|last_?name)$/i;

function stripHandoff(value: unknown, depth: number): unknown {
  if (depth > 6) return undefined;
  if (Array.isArray(value)) return value.map((item) => stripHandoff(item, depth + 1));
  if (value && typeof value === 'object') {
    const kept: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value))
      if (!HANDOFF_FORBIDDEN.test(key.replace(/[-\s]/g, '_'))) kept[key] = stripHandoff(child, depth + 1);
    return kept;
  }
  return value;
}

/** CHECKOUT_HANDOFF and OPEN_WIDGET carry only opaque checkout and surface metadata: personal and payment fields are removed. */
export function sanitizeHandoff(action: NormalizedAction): NormalizedAction {
  if (action.type !== 'CHECKOUT_HANDOFF' && action.type !== 'OPEN_WIDGET') return action;
  return {
    ...action,
    data: action.data === null ? null : (stripHandoff(action.data, 0) as Record<string, unknown>),
    metadata: stripHandoff(action.metadata, 0) as Record<string, unknown>,
  };
}
