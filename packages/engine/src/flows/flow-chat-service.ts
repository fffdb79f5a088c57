import { fromJsonColumn } from '@keel/core';
import { createExecution, executeFlow, executionAction } from '../executions/execution-service.ts';
import type { NormalizedAction } from '../runtime/actions.ts';
import type { FlowEngine, FlowOutcome, FlowSelection, RunContext } from '../runtime/extensions.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { inTransaction } from '../write.ts';
import { deleteSessionContext, findSessionContext, saveSessionContext } from './flow-chat-store.ts';
import {
  ALTERNATIVES_LIMIT,
  acceptsOffer,
  broaderQueries,
  type CatalogProduct,
  type ProductQuery,
  parseProducts,
  parseQuery,
  RECENT_PRODUCTS,
  resolveProductReference,
} from './flow-continuation.ts';
import { FlowErrors } from './flow-errors.ts';
import { type RouteDecision, routeMessage } from './flow-router.ts';
import { routingState } from './flow-routing-service.ts';
import { loadPublishedPlan } from './flow-service.ts';
import { findFlow } from './flow-store.ts';

/** The alternatives offer a session holds until its next turn. */
interface Offer {
  flow_id: string;
  requested_query: ProductQuery;
}

interface SessionContext {
  flowId: string | null;
  offer: Offer | null;
  products: CatalogProduct[];
}

async function loadContext(rt: RuntimeContext, realmId: string, sessionId: string): Promise<SessionContext> {
  const row = await findSessionContext(rt.db, realmId, sessionId);
  return {
    flowId: row?.flow_id ?? null,
    offer: row?.offer ? fromJsonColumn<Offer>(row.offer) : null,
    products: row?.products ? parseProducts(fromJsonColumn<unknown>(row.products)) : [],
  };
}

async function saveContext(rt: RuntimeContext, realmId: string, sessionId: string, context: SessionContext) {
  await inTransaction(rt.engine, (trx) =>
    context.offer === null && context.products.length === 0
      ? deleteSessionContext(trx, sessionId)
      : saveSessionContext(trx, {
          session_id: sessionId,
          realm_id: realmId,
          flow_id: context.flowId,
          offer: context.offer === null ? null : JSON.stringify(context.offer),
          products: JSON.stringify(context.products.slice(0, RECENT_PRODUCTS)),
          updated_at: new Date(rt.clock()).toISOString(),
        }),
  );
}

/**
 * The input a chat turn gives a flow: `{message}`, unless the flow's input contract has no `message` field and
 * exactly one required field, a string: then the message fills that field (a search flow's `query`). Any other
 * contract needs its fields from an execution or a tool call (the turn is a 400 naming the missing field).
 */
async function chatInput(rt: RuntimeContext, realmId: string, selection: FlowSelection, message: string) {
  const contract = (await loadPublishedPlan(rt, realmId, selection.flowId, selection.version))?.contract.input;
  if (!contract || Object.hasOwn(contract.properties, 'message')) return { message };
  const required = contract.required ?? [];
  const only = required.length === 1 ? contract.properties[required[0]!] : undefined;
  return only?.type === 'string' ? { [required[0]!]: message } : { message };
}

/** The routing diagnostics of a decision as the response shows them. */
function decisionView(decision: RouteDecision) {
  return {
    strategy: decision.strategy,
    chosen: decision.chosen,
    why: decision.why,
    candidates: decision.candidates.map((candidate) => ({
      flow_id: candidate.flow_id,
      name: candidate.name,
      score: candidate.score,
      eligible: candidate.eligible,
      minimum_confidence: candidate.minimum_confidence,
      reason: candidate.reason,
    })),
    canary: decision.canary,
  };
}

/**
 * Which flow answers a turn, in order: the request's `flow_id` (it must be an active flow, else 409
 * FLOW_NOT_ACTIVE); a product continuation of the session (an accepted alternatives offer, or a product-detail
 * request about the products shown recently); the flow pinned to the session while it stays active; automatic
 * intent routing (realm policy, routing profiles, canary); the agent's default flow; else none (a direct answer).
 */
async function selectFlow(
  rt: RuntimeContext,
  run: RunContext,
  requested: string | null,
): Promise<{ selection: FlowSelection | undefined; diagnostics: Record<string, unknown> }> {
  const { candidates, policy } = await routingState(rt, run.realmId);
  const session = run.session;
  const canaryKey = session?.id ?? (run.principal.identityId || undefined);
  const pin = session !== null;
  const route = (flowId?: string) =>
    routeMessage(run.realmId, policy, candidates, { message: run.message, flowId, canaryKey });
  const chosen = (decision: RouteDecision, source: FlowSelection['source']): FlowSelection | undefined =>
    decision.chosen ? { flowId: decision.chosen.flow_id, version: decision.chosen.version, source, pin } : undefined;

  if (requested) {
    const decision = route(requested);
    const selection = chosen(decision, 'explicit');
    if (!selection) throw FlowErrors.notActive(requested);
    return { selection, diagnostics: { flow_routing: decisionView(decision) } };
  }
  if (session) {
    const context = await loadContext(rt, run.realmId, session.id);
    const continuing = context.flowId ?? session.flowId;
    const active = continuing ? candidates.find((candidate) => candidate.flowId === continuing) : undefined;
    if (active && context.offer && acceptsOffer(run.message))
      return {
        selection: { ...chosen(route(active.flowId), 'session')!, continuation: 'alternatives' },
        diagnostics: { flow_routing: { strategy: 'continuation', why: 'the user accepted the alternatives offer' } },
      };
    if (active && context.products.length > 0 && resolveProductReference(run.message, context.products).kind !== 'none')
      return {
        selection: { ...chosen(route(active.flowId), 'session')!, continuation: 'details' },
        diagnostics: {
          flow_routing: { strategy: 'continuation', why: 'a product-detail request about the products shown recently' },
        },
      };
    if (context.offer) await saveContext(rt, run.realmId, session.id, { ...context, offer: null });
    if (session.flowId) {
      const decision = route(session.flowId);
      const selection = chosen(decision, 'session');
      if (selection)
        return {
          selection,
          diagnostics: { flow_routing: { ...decisionView(decision), why: 'the flow pinned to the session' } },
        };
    }
  }
  const decision = route();
  const routed = chosen(decision, 'routed');
  if (routed) return { selection: routed, diagnostics: { flow_routing: decisionView(decision) } };
  const fallback = run.agent.defaultFlowId ? chosen(route(run.agent.defaultFlowId), 'agent_default') : undefined;
  return {
    selection: fallback,
    diagnostics: {
      flow_routing: {
        ...decisionView(decision),
        ...(fallback
          ? {
              chosen: { flow_id: fallback.flowId, version: fallback.version },
              why: `${decision.why}: the agent's default flow`,
            }
          : {}),
      },
    },
  };
}

function action(type: NormalizedAction['type'], content: string | null, data: Record<string, unknown> | null) {
  return { type, content, data, metadata: {} } satisfies NormalizedAction;
}

/** Runs the bounded broader query: the first relaxation that finds products, or none of them. */
async function broaderSearch(rt: RuntimeContext, realmId: string, requested: ProductQuery) {
  const steps = broaderQueries(requested);
  for (const step of steps) {
    const products = rt.extensions.products
      ? (await rt.extensions.products.search(realmId, step.query, ALTERNATIVES_LIMIT)).slice(0, ALTERNATIVES_LIMIT)
      : [];
    if (products.length > 0) return { ...step, products, searches: steps.indexOf(step) + 1 };
  }
  const last = steps.at(-1) ?? { query: requested, relaxed: [] };
  return { ...last, products: [] as CatalogProduct[], searches: steps.length };
}

function alternativesAction(requested: ProductQuery, found: Awaited<ReturnType<typeof broaderSearch>>) {
  return action(
    'RENDER_PRODUCT_ALTERNATIVES',
    found.products.length > 0
      ? `Nothing matched exactly; here are close alternatives (relaxed: ${found.relaxed.join(', ')}).`
      : 'Nothing close to that was found either.',
    {
      requested_query: requested,
      applied_query: found.query,
      relaxed_constraints: found.relaxed,
      products: found.products,
    },
  );
}

/** A product answer of a flow under its unavailable-result behaviour, and the session's context after it. */
async function productAnswer(
  rt: RuntimeContext,
  run: RunContext,
  selection: FlowSelection,
  produced: NormalizedAction,
): Promise<{ action: NormalizedAction; context?: SessionContext; behaviour?: string }> {
  if (produced.type !== 'RENDER_PRODUCTS') return { action: produced };
  const products = parseProducts(produced.data?.products);
  const query = parseQuery(produced.data?.query);
  if (products.length > 0) return { action: produced, context: { flowId: selection.flowId, offer: null, products } };
  const plan = await loadPublishedPlan(rt, run.realmId, selection.flowId, selection.version);
  const behaviour = plan?.unavailableResult ?? 'offer_first';
  if (!query || behaviour === 'disabled') return { action: produced, behaviour };
  if (behaviour === 'show_immediately') {
    const found = await broaderSearch(rt, run.realmId, query);
    return {
      action: alternativesAction(query, found),
      context: { flowId: selection.flowId, offer: null, products: found.products },
      behaviour,
    };
  }
  return {
    action: action('OFFER_PRODUCT_ALTERNATIVES', 'Nothing matched exactly. Shall I look for close alternatives?', {
      requested_query: query,
    }),
    context: { flowId: selection.flowId, offer: { flow_id: selection.flowId, requested_query: query }, products: [] },
    behaviour,
  };
}

/** An accepted offer: the bounded broader query of the offered request, once. */
async function continueAlternatives(rt: RuntimeContext, run: RunContext, context: SessionContext) {
  const requested = context.offer!.requested_query;
  const found = await broaderSearch(rt, run.realmId, requested);
  await saveContext(rt, run.realmId, run.session!.id, { ...context, offer: null, products: found.products });
  return { action: alternativesAction(requested, found), diagnostics: { catalog_searches: found.searches } };
}

/** A product-detail request: one product by ordinal, full name or catalog id; else CLARIFY. */
async function continueDetails(rt: RuntimeContext, run: RunContext, context: SessionContext) {
  const reference = resolveProductReference(run.message, context.products);
  if (reference.kind === 'found') {
    const fresh = await rt.extensions.products?.details(run.realmId, reference.product.catalogId);
    const product = fresh ?? reference.product;
    return {
      action: action('RENDER_PRODUCT_DETAILS', product.name, { product }),
      diagnostics: { product_reference: reference.by, catalog_id: product.catalogId },
    };
  }
  const options = (reference.kind === 'ambiguous' ? reference.options : context.products).slice(0, 10);
  return {
    action: action(
      'CLARIFY',
      reference.kind === 'ambiguous' ? 'Which of these products do you mean?' : 'Which product do you mean?',
      { options: options.map((product) => product.name), catalog_ids: options.map((product) => product.catalogId) },
    ),
    diagnostics: { product_reference: reference.kind },
  };
}

async function runSelected(rt: RuntimeContext, selection: FlowSelection, run: RunContext): Promise<FlowOutcome> {
  if (selection.continuation && run.session) {
    const context = await loadContext(rt, run.realmId, run.session.id);
    return selection.continuation === 'alternatives'
      ? continueAlternatives(rt, run, context)
      : continueDetails(rt, run, context);
  }
  const executed = await executeFlow(
    rt,
    run.principal,
    selection.flowId,
    {
      version: selection.version,
      agent_id: run.agent.id,
      input: await chatInput(rt, run.realmId, selection, run.message),
      session_id: run.session?.id,
    },
    undefined,
    // The chat turn is the request: the orchestrator counted it in the realm quota already.
    { admitted: true },
  );
  const view = executed.body as Parameters<typeof executionAction>[0] & { id: string };
  const produced = executionAction(view);
  const answer = await productAnswer(rt, run, selection, produced);
  if (run.session && answer.context) await saveContext(rt, run.realmId, run.session.id, answer.context);
  return {
    action: answer.action,
    diagnostics: {
      flow_execution_id: view.id,
      flow_execution_state: view.state,
      ...(answer.behaviour ? { unavailable_result: answer.behaviour } : {}),
    },
  };
}

/** The runtime's flow engine: chat and execute through flows (registered in `rt.extensions.flows`). */
export function createFlowChatEngine(rt: RuntimeContext): FlowEngine {
  return {
    exists: async (realmId, flowId) => (await findFlow(rt.db, realmId, flowId.toLowerCase())) !== undefined,
    select: (run, requested) => selectFlow(rt, run, requested),
    run: (selection, run) => runSelected(rt, selection, run),
    queue: async (selection, run, idempotency) =>
      createExecution(
        rt,
        run.principal,
        {
          flow_id: selection.flowId,
          version: selection.version,
          agent_id: run.agent.id,
          input: await chatInput(rt, run.realmId, selection, run.message),
          session_id: run.session?.id,
        },
        idempotency.key,
        {
          operation: 'POST /api/v1/runtime/execute',
          payload: idempotency.payload,
          respond: idempotency.respond,
          admitted: true,
        },
      ),
  };
}
