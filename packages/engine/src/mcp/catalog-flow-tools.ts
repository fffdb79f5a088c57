import { AppError, isDatabaseUnavailable, readableIssues } from '@keel/core';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { getProductDetails, listProductsFor } from '../catalog/product-service.ts';
import type { EngineContext } from '../context.ts';
import type { ExecutionScope, FlowToolInvoker } from '../executions/execution-port.ts';
import type { CatalogProduct } from '../flows/flow-continuation.ts';
import { FlowPortError, type ToolCall } from '../flows/index.ts';
import { realmCatalogPrincipal } from '../merchants/realm-link-service.ts';
import type { CatalogPort, ProductCatalog } from '../runtime/extensions.ts';
import { catalogTools } from './catalog-mcp.ts';
import type { Tool } from './mcp-tool-kit.ts';

/**
 * The catalog tools a flow's `tool` node may call in-process (issue 13 item 2): search and product details, carts,
 * and the checkout handoff (`checkout_prepare` answers an awaiting-payment handoff reference; completing an order or
 * writing products is not a flow's business). Each is the MCP tool of the same name, so arguments, rules and answers
 * are exactly those of the public tool endpoint and REST.
 */
export const FLOW_CATALOG_TOOLS: readonly string[] = [
  'catalog_search',
  'catalog_search_products',
  'catalog_get_product',
  'catalog_get_product_details',
  'cart_create',
  'cart_get',
  'cart_add_item',
  'cart_update_item',
  'cart_remove_item',
  'cart_clear',
  'checkout_prepare',
  'checkout_get',
  'checkout_cancel',
];

/** A catalog failure as the flow port's error: business refusals (4xx) keep their code and are not retried. */
function portError(error: unknown): unknown {
  if (error instanceof FlowPortError) return error;
  if (isDatabaseUnavailable(error)) return new FlowPortError('CATALOG_UNAVAILABLE', 'the catalog is unavailable', true);
  if (error instanceof AppError)
    return new FlowPortError(error.code, error.message, error.statusCode >= 500 || error.statusCode === 429);
  return error;
}

/**
 * The flows' tool invoker with the catalog in front: a tool named in `FLOW_CATALOG_TOOLS` runs in-process against the
 * merchant linked to the execution's realm (`realm_merchant_link`; scope `merchant`: its own stores only), every other
 * tool goes to `next` (the tool-server registry). An unlinked realm's catalog call fails closed with
 * `CATALOG_NOT_LINKED`. Writes carry the step's idempotency key as the tool's `idempotencyKey` (whatever the node's
 * arguments say), scoped to the realm, so a retried or resumed step applies its effect once.
 */
export function createCatalogFlowTools(ctx: EngineContext, next: FlowToolInvoker | undefined): FlowToolInvoker {
  const byName = new Map<string, { tool: Tool; check: ReturnType<typeof Compile> }>();
  for (const tool of catalogTools(ctx))
    if (FLOW_CATALOG_TOOLS.includes(tool.name)) byName.set(tool.name, { tool, check: Compile(tool.inputSchema) });
  const unavailable = (what: string) =>
    new FlowPortError('TOOL_UNAVAILABLE', `${what} is not available to this realm's flows`, false);
  return {
    async callTool(scope: ExecutionScope, call: ToolCall) {
      const entry = byName.get(call.tool);
      if (!entry) {
        if (!next) throw unavailable(`tool ${call.tool}`);
        return next.callTool(scope, call);
      }
      const raw = call.arguments;
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new FlowPortError('TOOL_ARGUMENTS_INVALID', `the arguments of ${call.tool} must be an object`, false);
      const withKey =
        'idempotencyKey' in entry.tool.inputSchema.properties
          ? { ...(raw as Record<string, unknown>), idempotencyKey: call.idempotencyKey }
          : raw;
      const args = Value.Default(entry.tool.inputSchema, structuredClone(withKey));
      if (!entry.check.Check(args)) {
        const issues = [...entry.check.Errors(args)].map((e) => ({
          keyword: e.keyword,
          instancePath: e.instancePath,
          params: e.params as Record<string, unknown>,
          message: e.message,
        }));
        const summary = readableIssues(issues, 'argument', args)
          .slice(0, 5)
          .map((issue) => issue.text)
          .join('; ');
        throw new FlowPortError('TOOL_ARGUMENTS_INVALID', `invalid arguments for ${call.tool}: ${summary}`, false);
      }
      call.signal.throwIfAborted();
      try {
        const principal = await realmCatalogPrincipal(ctx.db, scope.realmId);
        if (!principal)
          throw new FlowPortError(
            'CATALOG_NOT_LINKED',
            'this realm is not linked to an active catalog merchant (keel engine realms link)',
            false,
          );
        const result = await entry.tool.run(args as never, {
          principal,
          traceId: scope.executionId,
          request: undefined as never,
        });
        return { output: result as never };
      } catch (error) {
        throw portError(error);
      }
    },
    readResource: (scope, call) =>
      next ? next.readResource(scope, call) : Promise.reject(unavailable(`resource ${call.resource}`)),
  };
}

/**
 * The runtime's catalog port (`rt.extensions.catalog`): product search and details of the merchant linked to a realm,
 * for chat paths. Both answer undefined when the realm is not linked (or its merchant is inactive); `details` also
 * when no product matches the reference.
 */
export function createCatalogPort(ctx: EngineContext): CatalogPort {
  return {
    async search(realmId, query, options = {}) {
      const principal = await realmCatalogPrincipal(ctx.db, realmId);
      if (!principal) return undefined;
      const page = await listProductsFor(ctx, principal, {
        q: query,
        storeId: options.storeId,
        status: 'active',
        limit: Math.min(Math.max(options.limit ?? 10, 1), 50),
      });
      return page.data;
    },
    async details(realmId, ref) {
      const principal = await realmCatalogPrincipal(ctx.db, realmId);
      if (!principal) return undefined;
      try {
        return await getProductDetails(ctx, principal, ref);
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 404) return undefined;
        throw error;
      }
    },
  };
}

/** Catalog searches read this many products before a query's filters narrow them. */
const FILTERED_SEARCH_WINDOW = 50;

/** A product's value for a query filter: a product field, or a key of its `metadata` or `otherDetails`. */
function filterValue(product: Record<string, unknown>, key: string): unknown {
  if (key in product) return product[key];
  for (const bag of [product.metadata, product.otherDetails])
    if (bag && typeof bag === 'object' && key in bag) return (bag as Record<string, unknown>)[key];
  return undefined;
}

function matches(product: Record<string, unknown>, filters: Record<string, string | number | boolean>): boolean {
  return Object.entries(filters).every(([key, wanted]) => {
    const value = filterValue(product, key);
    return typeof wanted === 'string' && typeof value === 'string'
      ? value.toLowerCase() === wanted.toLowerCase()
      : value === wanted;
  });
}

/**
 * Chat continuations' products (`rt.extensions.products`) over the catalog port: a query's text is the catalog's
 * text search and its filters must equal a product field or a `metadata`/`otherDetails` key (strings without
 * regard to case); details by catalog id. A realm without a linked merchant finds nothing.
 */
export function productCatalog(port: CatalogPort): ProductCatalog {
  return {
    async search(realmId, query, limit) {
      const found = await port.search(realmId, query.text, { limit: FILTERED_SEARCH_WINDOW });
      return (found ?? [])
        .filter((product) => matches(product as Record<string, unknown>, query.filters))
        .slice(0, limit) as CatalogProduct[];
    },
    async details(realmId, catalogId) {
      return (await port.details(realmId, { catalogId })) as CatalogProduct | undefined;
    },
  };
}
