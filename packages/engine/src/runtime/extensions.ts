import type { AgentRuntime } from '../agents/agent-service.ts';
import type { ProductView } from '../catalog/product-schemas.ts';
import type { DetailsQuery } from '../catalog/product-service.ts';
import type { DeferredRow, FlowToolInvoker } from '../executions/execution-port.ts';
import type { ExecutionRow } from '../executions/execution-store.ts';
import type { RunOneResult } from '../executions/execution-worker.ts';
import type { CatalogProduct, ProductQuery } from '../flows/flow-continuation.ts';
import type { GovernancePolicy } from '../governance/governance-enforcement.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import type { ChatTurn } from '../providers/model-clients.ts';
import type { SessionRecord } from '../sessions/session-service.ts';
import type { ClientCapabilities, NormalizedAction } from './actions.ts';
import type { RunBudget } from './run-budget.ts';

/** What a flow (or any later orchestration) gets to work with for one run. */
export interface RunContext {
  realmId: string;
  principal: RuntimePrincipal;
  agent: AgentRuntime;
  session: SessionRecord | null;
  /** The new user input of this turn. */
  message: string;
  /** Earlier turns of the session (oldest first), bounded. */
  history: ChatTurn[];
  channel: string | null;
  locale: string | null;
  metadata: Record<string, unknown>;
  clientCapabilities: ClientCapabilities | undefined;
  /** The agent's settings bounds for this run: deadline, node timeouts and retries, tool calls, parallelism, depth, cost. */
  budget: RunBudget;
  traceId: string;
  /** The realm policy version pinned to the run (null: the realm has none active). */
  policy: GovernancePolicy | null;
}

export interface FlowSelection {
  flowId: string;
  version: number;
  /** How it was chosen: named in the request, pinned to the session, the agent default, or routed by intent. */
  source: 'explicit' | 'session' | 'agent_default' | 'routed';
  /** Whether the session should pin it for later turns. */
  pin: boolean;
  /**
   * A product continuation of the session instead of a flow run: the accepted alternatives offer (the bounded
   * broader query) or a product-detail request about the products shown recently.
   */
  continuation?: 'alternatives' | 'details' | undefined;
}

export interface FlowOutcome {
  action: NormalizedAction;
  usage?: { inputTokens: number; outputTokens: number; costPicos: bigint } | undefined;
  /** Added to the response's routing diagnostics (e.g. the flow execution id and its state). */
  diagnostics?: Record<string, unknown> | undefined;
}

/** What the answer to `mode: async` is built from. */
export interface QueuedExecution {
  id: string;
  state: string;
  flow_id: string;
  flow_version: number;
  trace_id: string;
  created_at: string;
}

/** A durable execution queued by `mode: async` (the `respond` body). */
export interface QueuedRun {
  statusCode: number;
  body: unknown;
  replayed: boolean;
}

/** The flow engine: validates flow ids, selects a flow for a turn and runs it under the budget. */
export interface FlowEngine {
  exists(realmId: string, flowId: string): Promise<boolean>;
  /**
   * The flow to run for this turn (undefined: a direct agent answer through its provider) and the routing
   * diagnostics of the decision (candidates, scores, chosen, why).
   */
  select(
    run: RunContext,
    requested: string | null,
  ): Promise<{ selection: FlowSelection | undefined; diagnostics: Record<string, unknown> }>;
  run(selection: FlowSelection, run: RunContext): Promise<FlowOutcome>;
  /** Queues the selected flow as a durable execution (`mode: async`); idempotent by key over `payload`. */
  queue(
    selection: FlowSelection,
    run: RunContext,
    idempotency: {
      key: string | undefined;
      payload: unknown;
      /** The stored (and replayed) answer, from the queued execution's view. */
      respond: (view: QueuedExecution) => unknown;
    },
  ): Promise<QueuedRun>;
}

/**
 * Products for chat continuations (the broader query of RENDER_PRODUCT_ALTERNATIVES, RENDER_PRODUCT_DETAILS): the
 * realm's catalog through the realm↔merchant link (`productCatalog` over the CatalogPort); a realm without a linked
 * merchant finds nothing, and details show the product as it was last shown.
 */
export interface ProductCatalog {
  search(realmId: string, query: ProductQuery, limit: number): Promise<CatalogProduct[]>;
  details(realmId: string, catalogId: string): Promise<CatalogProduct | undefined>;
}

/** The tool-server registry (a later issue): which server ids exist in a realm (agent allowed_mcp_servers). */
export interface ToolServerRegistry {
  exists(realmId: string, serverId: string): Promise<boolean>;
}

/**
 * The catalog of the merchant linked to a realm (`keel engine realms link`), in-process, for chat paths: active products
 * by text (best match first, `limit` 1–50, default 10) and one product by catalogId, productId, sku or externalId.
 * Both answer undefined when the realm has no linked (active) merchant; `details` also when nothing matches.
 */
export interface CatalogPort {
  search(
    realmId: string,
    query: string,
    options?: { limit?: number | undefined; storeId?: string | undefined },
  ): Promise<ProductView[] | undefined>;
  details(realmId: string, ref: DetailsQuery): Promise<ProductView | undefined>;
}

/**
 * Where later issues plug into the runtime. With nothing registered, a flow id or tool-server id is unknown
 * (404, fail closed) and every turn is a direct agent answer.
 */
export interface RuntimeExtensions {
  flows?: FlowEngine | undefined;
  toolServers?: ToolServerRegistry | undefined;
  /** The catalog products of a realm for chat continuations (see ProductCatalog; built on `catalog`). */
  products?: ProductCatalog | undefined;
  /** Tool and resource calls of flow executions (the tool-server registry plugs in here; none: tools fail closed). */
  flowTools?: FlowToolInvoker | undefined;
  /** The linked merchant's catalog (search, details); registered with the runtime. */
  catalog?: CatalogPort | undefined;
  /**
   * The durable-execution worker of this process: woken when an execution is queued or continued, and running a
   * synchronous execute in the requesting process (`runOne`; with `deferred`, it must store the row, see
   * `DeferredRow`).
   */
  executions?:
    | {
        wake(): void;
        runOne(executionId: string, created?: ExecutionRow, deferred?: DeferredRow): Promise<RunOneResult>;
        leaseFor(now: number): { owner: string; until: string };
      }
    | undefined;
}

export function createExtensionRegistry(): RuntimeExtensions {
  return {};
}
