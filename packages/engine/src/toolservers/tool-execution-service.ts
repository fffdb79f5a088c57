import { AppError, fromJsonColumn, toBoolean, toIsoString, withClientSpan } from '@keel/core';
import { type AgentRuntime, loadAgent } from '../agents/agent-service.ts';
import {
  activePolicy,
  admitToolCall,
  checkToolAllowed,
  type GovernancePolicy,
  pinnedPolicy,
} from '../governance/governance-enforcement.ts';
import { allows, checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { checkJson } from '../runtime/json-bounds.ts';
import { nowIso } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { accessSession, effectiveStatus } from '../sessions/session-service.ts';
import { type MeteredUse, recordToolCalls, type UsageSource } from '../usage/usage-service.ts';
import { inTransaction } from '../write.ts';
import { type InteractionCall, type ServerEndpoint, toolResultView } from './mcp-connection.ts';
import {
  type AttemptRecord,
  type CallOutcome,
  decideRoute,
  executeParallel,
  executeWithRetry,
  type RouteCandidate,
  type RouteDecision,
  type RoutingRule,
  retryPolicy,
  ToolCallError,
  validateRoutingRule,
} from './routing/index.ts';
import { argumentProblems, type Impact } from './tool-contract.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import { ToolErrors } from './toolserver-errors.ts';
import { activeEndpoint, isToolEnabled, loadRuleSet, overlapEndpoint } from './toolserver-service.ts';
import {
  countRules,
  deleteRule,
  deleteTracesBefore,
  findRule,
  findServersByIds,
  findSessionContext,
  findToolsByName,
  insertRule,
  insertTraces,
  listRealmEnabledTools,
  listRuleRows,
  listTraceRows,
  type RuleRow,
  type ServerRow,
  saveSessionContext,
  type ToolRow,
  updateRule,
} from './toolserver-store.ts';

/** Impact classes a direct call (execute, proxy, aggregate) never runs: they need a flow with an approval step. */
export const HIGH_IMPACT: readonly Impact[] = ['destructive', 'financial', 'external_message', 'sensitive'];
export const EXECUTION_LIMITS = Object.freeze({
  rulesPerRealm: 500,
  parallelCalls: 16,
  resultBytes: 1_048_576,
  traceRetentionMs: 24 * 60 * 60 * 1000,
});

/** The channel on which rule-set changes are broadcast (every instance drops its cached rule set of the realm). */
const RULES_CHANNEL = 'keel:engine:tool-rules';

/** One server offering the tool: what routing and the call need, loaded once per realm and tool (cached 5 s). */
interface Offer {
  server: ServerRow;
  tool: ToolRow;
  endpoint: ServerEndpoint;
  /** The credential replaced by the last rotation, usable until its overlap window ends. */
  previous: { endpoint: ServerEndpoint; until: number } | undefined;
}

/** Who may reach which servers for this call. */
export interface CallScope {
  realmId: string;
  /** The agent's attached servers; undefined for a developer's direct call without a session (any server of the realm). */
  allowed: readonly string[] | undefined;
  agent: AgentRuntime | undefined;
  sessionId: string | null;
  /** The realm policy that governs the call: the active one, or the version pinned to a flow execution. */
  policy: GovernancePolicy | null;
}

export interface CallContext {
  sessionId?: string | undefined;
  resumeToken?: string | undefined;
  agentId?: string | undefined;
}

/**
 * Resolves who is calling: with a session, its agent's attached servers bound the call (operator+ with the
 * session's resume token, like every session action); without one, the caller must be a developer+ and every
 * server of the realm is reachable (the admin path). An agent id alone (preview) bounds the route to its servers.
 */
export async function resolveScope(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  context: CallContext,
): Promise<CallScope> {
  const realmId = requirePermission(principal, 'runtime:run');
  const policy = await activePolicy(tools.rt, realmId);
  if (context.sessionId) {
    const session = await accessSession(tools.rt, principal, realmId, context.sessionId, context.resumeToken);
    const status = effectiveStatus(session, tools.rt.clock());
    if (status !== 'active') throw RuntimeErrors.sessionNotActive(session.id, status);
    const agent = await loadAgent(tools.rt, realmId, session.agent_id);
    return { realmId, allowed: agent?.allowedMcpServers ?? [], agent, sessionId: session.id, policy };
  }
  if (context.agentId) {
    const agent = await loadAgent(tools.rt, realmId, context.agentId);
    if (!agent) throw RuntimeErrors.notFound('Agent', context.agentId);
    return { realmId, allowed: agent.allowedMcpServers, agent, sessionId: null, policy };
  }
  if (!allows(principal.role, 'config:write'))
    throw RuntimeErrors.forbidden(principal.role ?? 'none', 'tool calls outside a session (send session_id)');
  return { realmId, allowed: undefined, agent: undefined, sessionId: null, policy };
}

/** The servers offering a tool in the realm, with the connection settings of each (cached per realm). */
async function offersOf(tools: ToolRuntime, realmId: string, toolName: string): Promise<Offer[]> {
  return tools.rt.realms.get(realmId, `tool-offers:${toolName}`, async () => {
    const rows = await findToolsByName(tools.rt.db, realmId, toolName);
    const servers = new Map(
      (
        await findServersByIds(
          tools.rt.db,
          realmId,
          rows.map((r) => r.server_id),
        )
      ).map((s) => [s.id, s]),
    );
    const offers: Offer[] = [];
    for (const tool of rows) {
      const server = servers.get(tool.server_id);
      if (server)
        offers.push({
          server,
          tool,
          endpoint: await activeEndpoint(tools, server),
          previous: await overlapEndpoint(tools, server),
        });
    }
    return offers;
  });
}

function impactOf(tool: ToolRow): Impact[] {
  return (fromJsonColumn<Impact[]>(tool.impact) ?? []) as Impact[];
}

function candidateOf(tools: ToolRuntime, offer: Offer): RouteCandidate {
  const view = tools.stats.view(offer.server.id);
  const candidate: RouteCandidate = {
    server_id: offer.server.id,
    enabled: toBoolean(offer.server.is_active),
    tool_approved: isToolEnabled(offer.tool),
    data_handling: fromJsonColumn<string[]>(offer.server.data_handling) ?? [],
    stats: { health: view.health, latency_ms: view.latency_ms, error_rate: view.error_rate },
  };
  if (offer.server.region) candidate.region = offer.server.region;
  if (offer.server.estimated_cost !== null) candidate.estimated_cost = Number(offer.server.estimated_cost);
  return candidate;
}

// Traces are written in batches after the answer (diagnostics never hold a tool call up); reads flush first.
interface TraceBuffer {
  rows: { trace_id: string; realm_id: string; seq: number; trace: string; created_at: string }[];
  timer: NodeJS.Timeout | undefined;
  /** The flush in progress: a later flush (a trace read) waits for it, so it never reads before that commit. */
  writing: Promise<void>;
}
const traceBuffers = new WeakMap<ToolRuntime, TraceBuffer>();

function bufferOf(tools: ToolRuntime): TraceBuffer {
  let buffer = traceBuffers.get(tools);
  if (!buffer) {
    buffer = { rows: [], timer: undefined, writing: Promise.resolve() };
    traceBuffers.set(tools, buffer);
  }
  return buffer;
}

async function flushTraces(tools: ToolRuntime): Promise<void> {
  const buffer = bufferOf(tools);
  if (buffer.timer) clearTimeout(buffer.timer);
  buffer.timer = undefined;
  const batch = buffer.rows.splice(0, buffer.rows.length);
  const previous = buffer.writing;
  if (batch.length === 0) return previous;
  const cutoff = new Date(tools.rt.clock() - EXECUTION_LIMITS.traceRetentionMs).toISOString();
  const writing = previous.then(() =>
    inTransaction(tools.rt.engine, async (trx) => {
      await insertTraces(trx, batch);
      await deleteTracesBefore(trx, cutoff);
    }).catch((error: unknown) => tools.rt.log.warn({ err: error }, 'routing traces not stored')),
  );
  buffer.writing = writing;
  return writing;
}

function recordTrace(tools: ToolRuntime, realmId: string, traceId: string, trace: Record<string, unknown>): void {
  const key = `${realmId}|${traceId}`;
  const seq = (tools.traceSeq.get(key) ?? 0) + 1;
  if (tools.traceSeq.size > 10_000) tools.traceSeq.clear();
  tools.traceSeq.set(key, seq);
  const buffer = bufferOf(tools);
  buffer.rows.push({
    trace_id: traceId,
    realm_id: realmId,
    seq,
    trace: JSON.stringify(trace),
    created_at: nowIso(tools.rt),
  });
  if (buffer.rows.length >= 200) void flushTraces(tools);
  else buffer.timer ??= setTimeout(() => void flushTraces(tools), 200).unref();
}

/** Writes the traces still buffered (trace reads and shutdown). */
export function flushPendingTraces(tools: ToolRuntime): Promise<void> {
  return flushTraces(tools);
}

export interface RouteInput extends CallContext {
  tool_name: string;
  strategy?: 'registry' | 'first_healthy' | 'parallel' | undefined;
}

interface Routed {
  scope: CallScope;
  offers: Map<string, Offer>;
  decision: RouteDecision;
  rule: RoutingRule | undefined;
}

/** Resolves a route for a tool without calling anything; fails closed for an unknown or unapproved tool. */
async function route(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: RouteInput,
  scopeOverride?: CallScope,
): Promise<Routed> {
  return routeIn(tools, scopeOverride ?? (await resolveScope(tools, principal, input)), input);
}

async function routeIn(tools: ToolRuntime, scope: CallScope, input: RouteInput): Promise<Routed> {
  const offers = await offersOf(tools, scope.realmId, input.tool_name);
  if (offers.length === 0)
    throw ToolErrors.toolUnavailable(`No registered server offers the tool ${input.tool_name.slice(0, 128)}`);
  const rules = await loadRuleSet(tools, scope.realmId);
  const request: Parameters<typeof decideRoute>[2] = { tool_name: input.tool_name };
  if (scope.allowed) request.allowed_servers = scope.allowed;
  if (input.strategy) request.strategy = input.strategy;
  if (scope.agent?.settings.provider_region) request.region = scope.agent.settings.provider_region;
  if (scope.agent?.settings.data_handling && scope.agent.settings.data_handling !== 'standard')
    request.data_handling = scope.agent.settings.data_handling;
  const decision = decideRoute(
    rules,
    offers.map((o) => candidateOf(tools, o)),
    request,
  );
  const rule = decision.rule_id ? rules.find((r) => r.id === decision.rule_id) : undefined;
  return { scope, offers: new Map(offers.map((o) => [o.server.id, o])), decision, rule };
}

function failClosed(decision: RouteDecision): never {
  if (decision.reason_code === 'ROUTE_TOOL_UNAVAILABLE')
    throw ToolErrors.toolUnavailable(`The tool ${decision.tool_name} is not approved on any reachable server`);
  throw ToolErrors.routeFailed(
    `${decision.reason_code ?? 'ROUTE_NO_ELIGIBLE_SERVER'}: no eligible server for ${decision.tool_name} (see the decision trace)`,
  );
}

/**
 * Checks what a call may run: no high-impact tool (unless a flow's approval was granted before it), arguments
 * valid against the chosen server's schema.
 */
function checkCall(offer: Offer, args: Record<string, unknown>, approved = false): void {
  const high = impactOf(offer.tool).filter((c) => HIGH_IMPACT.includes(c));
  if (high.length > 0 && !approved) throw ToolErrors.highImpact(offer.tool.name, high.join(', '));
  const schema = (fromJsonColumn<Record<string, unknown>>(offer.tool.input_schema) ?? {}) as Record<string, unknown>;
  const problems = argumentProblems(offer.tool.contract_hash, schema, args);
  if (problems.length > 0)
    throw Object.assign(ToolErrors.invalidArguments(problems.map((p) => p.message).join('; ')), {
      details: problems,
    });
}

/** The servers of the order whose contract accepts the arguments (fallbacks with another schema are left out). */
function compatible(order: readonly string[], offers: Map<string, Offer>, args: Record<string, unknown>): string[] {
  return order.filter((id, index) => {
    const offer = offers.get(id)!;
    if (index === 0) return true;
    const schema = (fromJsonColumn<Record<string, unknown>>(offer.tool.input_schema) ?? {}) as Record<string, unknown>;
    return argumentProblems(offer.tool.contract_hash, schema, args).length === 0;
  });
}

/** Who a call is for: the session (user presence for sampling and elicitation) and the trace of its decision. */
interface CallOrigin {
  sessionId: string | null;
  traceId: string;
}

async function callOne(
  tools: ToolRuntime,
  offer: Offer,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  timeoutMs: number,
  idempotencyKey: string | undefined,
  origin: CallOrigin,
) {
  // Sampling and elicitation requests the server makes during this call are budgeted and audited against it.
  const interaction: InteractionCall = {
    realmId: offer.server.realm_id,
    serverId: offer.server.id,
    toolName: name,
    sessionId: origin.sessionId,
    traceId: origin.traceId,
    signal,
    deadline: Date.now() + timeoutMs,
    used: { requests: 0, tokens: 0, audited: 0 },
  };
  // One CLIENT span per call; the MCP client sends its traceparent with every request of the call.
  const send = (endpoint: ServerEndpoint) =>
    withClientSpan(
      `tools/call ${name}`,
      'tool_server',
      { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name },
      () =>
        tools.connector.use(
          endpoint,
          (client) =>
            client.callTool(
              {
                name,
                arguments: args,
                ...(idempotencyKey ? { _meta: { 'io.keel/idempotency-key': idempotencyKey } } : {}),
              },
              { signal, timeout: timeoutMs } as never,
            ),
          interaction,
        ),
    );
  let result: Awaited<ReturnType<typeof send>>;
  try {
    result = await send(offer.endpoint);
  } catch (error) {
    // Inside the overlap window after a rotation, a refused new credential falls back to the previous one once.
    const previous = offer.previous;
    if (!(error instanceof ToolCallError && error.authFailure && previous && previous.until > tools.rt.clock()))
      throw error;
    result = await send(previous.endpoint);
  }
  const view = toolResultView(result as never);
  if (Buffer.byteLength(JSON.stringify(view)) > EXECUTION_LIMITS.resultBytes)
    throw new ToolCallError('TOOL_RESULT_TOO_LARGE', 'the result exceeds 1 MiB');
  return view;
}

function policyOf(routed: Routed) {
  return retryPolicy({
    ...(routed.decision.timeout_ms !== undefined ? { timeout_ms: routed.decision.timeout_ms } : {}),
    ...(routed.decision.max_retries !== undefined ? { max_retries: routed.decision.max_retries } : {}),
  });
}

function traceOf(routed: Routed, extra: Record<string, unknown>) {
  return { kind: 'execute', session_id: routed.scope.sessionId, decision: routed.decision, ...extra };
}

export interface ExecuteInput extends RouteInput {
  arguments?: Record<string, unknown> | undefined;
  idempotency_key?: string | undefined;
}

/** A failed decision is recorded and answered; nothing is called. */
function requireRoute(tools: ToolRuntime, routed: Routed, traceId: string, extra: Record<string, unknown> = {}): void {
  if (routed.decision.ok) return;
  recordTrace(tools, routed.scope.realmId, traceId, traceOf(routed, { outcome: 'no_route', ...extra }));
  failClosed(routed.decision);
}

/** How a caller bounds its call beyond the route: fewer retries, its own cancellation. */
interface CallBounds {
  maxRetries?: number;
  signal?: AbortSignal;
  /** A flow step reached only through a granted approval: high-impact tools may run. */
  approved?: boolean;
}

/** The call and retry options of one routed tool: the tool's read-only flag decides whether it may be repeated. */
function callPlan(
  tools: ToolRuntime,
  routed: Routed,
  first: Offer,
  input: ExecuteInput,
  traceId: string,
  bounds: CallBounds = {},
) {
  const args = input.arguments ?? {};
  const policy = {
    ...policyOf(routed),
    ...(bounds.maxRetries !== undefined ? { max_retries: bounds.maxRetries } : {}),
  };
  const call = (serverId: string, signal: AbortSignal) =>
    callOne(
      tools,
      routed.offers.get(serverId)!,
      input.tool_name,
      args,
      signal,
      policy.timeout_ms,
      input.idempotency_key,
      { sessionId: routed.scope.sessionId, traceId },
    );
  const options = {
    policy,
    readOnly: toBoolean(first.tool.read_only),
    ...(input.idempotency_key ? { idempotencyKey: input.idempotency_key } : {}),
    ...(bounds.signal ? { signal: bounds.signal } : {}),
    observe: (o: Parameters<ToolRuntime['stats']['record']>[0]) => tools.stats.record(o),
  };
  return { call, options };
}

/** Governance before any call: the realm policy's tool rules, then the tool-call quota (`calls` calls counted). */
async function governCall(
  tools: ToolRuntime,
  realmId: string,
  policy: GovernancePolicy | null,
  toolName: string,
  calls = 1,
): Promise<void> {
  await checkToolAllowed(tools.rt, realmId, policy, toolName);
  await admitToolCall(tools.rt, realmId, calls);
}

/** Whether a tool's answer is an MCP error result (`isError`, shown as `is_error`): the call did not succeed. */
export function isErrorResult(value: unknown): boolean {
  return (value as { is_error?: unknown } | null)?.is_error === true;
}

/** Whether a call succeeded: answered, and not with an MCP error result. */
function succeeded(outcome: CallOutcome<unknown>): boolean {
  return outcome.ok && !isErrorResult(outcome.value);
}

/**
 * The usage of one routed tool call: the server that answered (or the last one tried), and whether it succeeded
 * (an MCP error result is a failed call).
 */
export function toolUse(scope: CallScope, toolName: string, outcome: CallOutcome<unknown>): MeteredUse {
  return {
    type: 'tool',
    toolName,
    serverId: outcome.server_id ?? outcome.attempts.at(-1)?.server_id ?? null,
    agentId: scope.agent?.id ?? null,
    ok: succeeded(outcome),
    attempts: outcome.attempts.length,
  };
}

/** Stores the usage records of calls made for a principal (REST routes and the public tool endpoint). */
function recordUses(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  scope: CallScope,
  source: UsageSource,
  uses: readonly MeteredUse[],
): Promise<void> {
  const context = {
    realmId: scope.realmId,
    source,
    sessionId: scope.sessionId,
    createdBy: principal.identityId,
    at: nowIso(tools.rt),
  };
  return recordToolCalls(
    tools.rt,
    uses.map((use) => ({ use, context })),
  );
}

/** Checks and executes a routed call along the chosen server and its compatible fallbacks; records the trace. */
async function runRoute(
  tools: ToolRuntime,
  routed: Routed,
  input: ExecuteInput,
  traceId: string,
  extra: Record<string, unknown> = {},
  bounds: CallBounds = {},
) {
  requireRoute(tools, routed, traceId, extra);
  const args = input.arguments ?? {};
  const chosen = routed.offers.get(routed.decision.chosen!)!;
  checkCall(chosen, args, bounds.approved);
  await governCall(tools, routed.scope.realmId, routed.scope.policy, input.tool_name);
  const order = compatible([routed.decision.chosen!, ...routed.decision.fallbacks], routed.offers, args);
  const plan = callPlan(tools, routed, chosen, input, traceId, bounds);
  const outcome = await executeWithRetry(order, plan.call, plan.options);
  const outcomeName = outcome.ok ? 'ok' : 'failed';
  recordTrace(
    tools,
    routed.scope.realmId,
    traceId,
    traceOf(routed, { outcome: outcomeName, attempts: outcome.attempts, ...extra }),
  );
  return outcome;
}

/**
 * Routes and executes one approved tool: fails closed before any call; retries only what may be repeated. A call
 * that was made writes one usage record (`source`: `tools` for the REST route, `mcp` for the public tool endpoint).
 */
export async function executeTool(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: ExecuteInput,
  traceId: string,
  source: UsageSource = 'tools',
) {
  const routed = await route(tools, principal, input);
  const outcome = await runRoute(tools, routed, input, traceId);
  await recordUses(tools, principal, routed.scope, source, [toolUse(routed.scope, input.tool_name, outcome)]);
  if (!outcome.ok) throw ToolErrors.callFailed(outcome.error.code, outcome.error.message);
  return {
    mcp_server_id: outcome.server_id,
    tool_name: input.tool_name,
    result: outcome.value,
    trace_id: traceId,
    attempts: outcome.attempts,
  };
}

/** The scope of a flow execution's tool calls: only its agent's attached servers (none without an agent). */
export async function flowCallScope(
  tools: ToolRuntime,
  realmId: string,
  agentId: string | null,
  policyVersionId: string | null,
): Promise<CallScope> {
  const agent = agentId === null ? undefined : await loadAgent(tools.rt, realmId, agentId);
  const policy = await pinnedPolicy(tools.rt, realmId, policyVersionId);
  return { realmId, allowed: agent?.allowedMcpServers ?? [], agent, sessionId: null, policy };
}

/**
 * One tool call of a flow step, gated like `executeTool` (routed within the agent's attached servers, approved and
 * enabled tools only, arguments valid against the stored schema; a high-impact tool only when `approved`: the step
 * is reached only through a granted approval of the flow) but made once per node attempt: the flow repeats a retryable failure under the agent's `max_node_retries` with the step's idempotency
 * key, and the node deadline (`signal`) bounds it. Refusals throw before anything is called; a failed call is
 * answered as the outcome (with whether it may be retried).
 */
export async function executeForFlow(
  tools: ToolRuntime,
  scope: CallScope,
  input: ExecuteInput,
  bounds: { signal: AbortSignal; approved: boolean },
  traceId: string,
) {
  const routed = await routeIn(tools, scope, input);
  return runRoute(tools, routed, input, traceId, { kind: 'flow' }, { maxRetries: 0, ...bounds });
}

/** Runs several approved tools at once (each routed on its own), bounded by the agent's dependency concurrency. */
export async function executeParallelTools(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: CallContext & { calls: ExecuteInput[] },
  traceId: string,
) {
  const scope = await resolveScope(tools, principal, input);
  const limit = scope.agent?.settings.max_dependency_concurrency ?? 4;
  const results: Record<string, unknown>[] = new Array(input.calls.length);
  const uses: MeteredUse[] = [];
  let next = 0;
  const worker = async () => {
    while (next < input.calls.length) {
      const index = next++;
      const call = input.calls[index]!;
      try {
        const outcome = await runRoute(tools, await route(tools, principal, call, scope), call, traceId, { index });
        uses.push(toolUse(scope, call.tool_name, outcome));
        results[index] = outcome.ok
          ? { ok: true, tool_name: call.tool_name, mcp_server_id: outcome.server_id, result: outcome.value }
          : { ok: false, tool_name: call.tool_name, mcp_server_id: outcome.server_id, error: outcome.error };
      } catch (error) {
        // Refusals (unknown tool, no route, invalid arguments, high impact) fail this call only; anything else fails the request.
        if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
        results[index] = {
          ok: false,
          tool_name: call.tool_name,
          mcp_server_id: null,
          error: { code: error.code, message: error.message, retryable: false },
        };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, input.calls.length) }, worker));
  } finally {
    // The calls made are recorded even when another call failed the request.
    await recordUses(tools, principal, scope, 'tools', uses);
  }
  return {
    trace_id: traceId,
    succeeded: results.filter((r) => r.ok).length,
    failed: results.filter((r) => !r.ok).length,
    results,
  };
}

/** Calls one tool on every eligible server of a parallel route and aggregates the successful per-server results. */
export async function aggregateTool(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: ExecuteInput,
  traceId: string,
) {
  const routed = await route(tools, principal, { ...input, strategy: 'parallel' });
  requireRoute(tools, routed, traceId);
  const args = input.arguments ?? {};
  const servers = routed.decision.parallel.length > 0 ? routed.decision.parallel : [routed.decision.chosen!];
  const first = routed.offers.get(servers[0]!)!;
  checkCall(first, args);
  const eligible = compatible(servers, routed.offers, args);
  await governCall(tools, routed.scope.realmId, routed.scope.policy, input.tool_name, eligible.length);
  const plan = callPlan(tools, routed, first, input, traceId);
  const aggregate = await executeParallel(eligible, plan.call, plan.options);
  const agentId = routed.scope.agent?.id ?? null;
  await recordUses(
    tools,
    principal,
    routed.scope,
    'tools',
    [
      ...aggregate.results.map((r) => ({ server_id: r.server_id, ok: !isErrorResult(r.result) })),
      ...aggregate.failures.map((f) => ({ server_id: f.server_id, ok: false })),
      ...Array.from({ length: aggregate.failures_omitted }, () => ({ server_id: null, ok: false })),
    ].map(
      (call): MeteredUse => ({
        type: 'tool',
        toolName: input.tool_name,
        serverId: call.server_id,
        agentId,
        ok: call.ok,
      }),
    ),
  );
  recordTrace(
    tools,
    routed.scope.realmId,
    traceId,
    traceOf(routed, { outcome: 'aggregate', succeeded: aggregate.succeeded, failed: aggregate.failed }),
  );
  return {
    tool_name: input.tool_name,
    trace_id: traceId,
    results: aggregate.results.map((r) => ({ mcp_server_id: r.server_id, result: r.result })),
    failures: aggregate.failures.map(({ server_id, ...failure }) => ({ mcp_server_id: server_id, ...failure })),
    succeeded: aggregate.succeeded,
    failed: aggregate.failed,
    failures_omitted: aggregate.failures_omitted,
  };
}

/** Resolves a route without executing (tools/route and routing/preview); the decision is recorded as a trace. */
export async function previewRoute(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: RouteInput & { realm_id?: string | undefined; intent?: string | undefined },
  traceId: string,
) {
  checkRealmField(principal, input.realm_id);
  const toolName = input.tool_name || (await toolForIntent(tools, principal, input.intent ?? ''));
  const routed = await route(tools, principal, { ...input, tool_name: toolName });
  recordTrace(tools, routed.scope.realmId, traceId, {
    kind: 'preview',
    session_id: routed.scope.sessionId,
    decision: routed.decision,
  });
  return { trace_id: traceId, ...routed.decision };
}

/** The enabled tool of the realm whose name equals the intent, else shares the most words with it. */
async function toolForIntent(tools: ToolRuntime, principal: RuntimePrincipal, intent: string): Promise<string> {
  const realmId = requirePermission(principal, 'runtime:run');
  const words = new Set(
    intent
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 2),
  );
  if (words.size === 0) throw RuntimeErrors.invalid('Send tool_name, or an intent with at least one word');
  let best: { name: string; score: number } | undefined;
  for (const tool of await listRealmEnabledTools(tools.rt.db, realmId)) {
    const text = `${tool.name.replace(/[_.-]+/g, ' ')} ${tool.description ?? ''}`.toLowerCase();
    const score = [...words].filter((w) => text.includes(w)).length;
    if (score > 0 && (!best || score > best.score || (score === best.score && tool.name < best.name)))
      best = { name: tool.name, score };
  }
  if (!best) throw ToolErrors.toolUnavailable('No approved tool matches the intent');
  return best.name;
}

/** Calls one tool on one named server (admin, developer+): the same gating as execute, no agent restriction. */
export async function proxyCall(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  input: {
    server_id: string;
    tool_name: string;
    arguments?: Record<string, unknown> | undefined;
    idempotency_key?: string | undefined;
  },
  traceId: string,
) {
  const realmId = requirePermission(principal, 'config:write');
  const offers = await offersOf(tools, realmId, input.tool_name);
  const offer = offers.find((o) => o.server.id === input.server_id.toLowerCase());
  if (!offer) {
    const servers = await findServersByIds(tools.rt.db, realmId, [input.server_id.toLowerCase()]);
    if (servers.length === 0) throw RuntimeErrors.notFound('Tool server', input.server_id);
    throw ToolErrors.toolUnavailable(`Tool server ${input.server_id} offers no tool ${input.tool_name.slice(0, 128)}`);
  }
  if (!toBoolean(offer.server.is_active)) throw ToolErrors.serverDisabled(offer.server.id);
  if (!isToolEnabled(offer.tool))
    throw ToolErrors.notEnabled(
      `Tool ${offer.tool.name} is ${offer.tool.review_status} (contract ${offer.tool.contract_status})`,
    );
  const args = input.arguments ?? {};
  checkCall(offer, args);
  await governCall(tools, realmId, await activePolicy(tools.rt, realmId), input.tool_name);
  const policy = retryPolicy({});
  const outcome = await executeWithRetry(
    [offer.server.id],
    (_id, signal) =>
      callOne(tools, offer, input.tool_name, args, signal, policy.timeout_ms, input.idempotency_key, {
        sessionId: null,
        traceId,
      }),
    {
      policy,
      readOnly: toBoolean(offer.tool.read_only),
      ...(input.idempotency_key ? { idempotencyKey: input.idempotency_key } : {}),
      observe: (o) => tools.stats.record(o),
    },
  );
  await recordUses(
    tools,
    principal,
    { realmId, allowed: undefined, agent: undefined, sessionId: null, policy: null },
    'tools',
    [
      {
        type: 'tool',
        toolName: input.tool_name,
        serverId: offer.server.id,
        agentId: null,
        ok: succeeded(outcome),
        attempts: outcome.attempts.length,
      },
    ],
  );
  recordTrace(tools, realmId, traceId, {
    kind: 'proxy',
    server_id: offer.server.id,
    tool_name: input.tool_name,
    outcome: outcome.ok ? 'ok' : 'failed',
    attempts: outcome.attempts,
  });
  if (!outcome.ok) throw ToolErrors.callFailed(outcome.error.code, outcome.error.message);
  return {
    mcp_server_id: offer.server.id,
    tool_name: input.tool_name,
    result: outcome.value,
    trace_id: traceId,
    attempts: outcome.attempts as AttemptRecord[],
  };
}

export async function getTrace(tools: ToolRuntime, principal: RuntimePrincipal, traceId: string) {
  const realmId = requirePermission(principal, 'config:read');
  await flushPendingTraces(tools);
  const rows = await listTraceRows(tools.rt.db, realmId, traceId);
  if (rows.length === 0) throw RuntimeErrors.notFound('Routing trace', traceId.slice(0, 128));
  return { trace_id: traceId, decisions: rows.map((r) => fromJsonColumn<Record<string, unknown>>(r.trace)) };
}

// Routing rules ------------------------------------------------------------------------------------------------------

function toRuleView(row: RuleRow) {
  return {
    id: row.id,
    ...(fromJsonColumn<Record<string, unknown>>(row.rule) ?? {}),
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
  };
}

async function validatedRule(tools: ToolRuntime, realmId: string, id: string, body: unknown): Promise<RoutingRule> {
  const checked = validateRoutingRule(id, body);
  if (!checked.ok)
    throw Object.assign(RuntimeErrors.invalid(checked.problems.map((p) => p.message).join('; ')), {
      details: checked.problems,
    });
  const servers = (checked.rule.servers ?? []).map((s) => s.toLowerCase());
  if (servers.length > 0) {
    const found = await findServersByIds(tools.rt.db, realmId, servers);
    const missing = servers.find((s) => !found.some((f) => f.id === s));
    if (missing) throw RuntimeErrors.notFound('Tool server', missing);
  }
  return { ...checked.rule, ...(servers.length > 0 ? { servers } : {}) };
}

export async function rulesChanged(tools: ToolRuntime, realmId: string): Promise<void> {
  tools.rules.delete(realmId);
  await tools.rt.cache.publish(RULES_CHANNEL, realmId);
}

/** Drops a realm's cached rule set when another instance changed it. */
export async function subscribeRuleChanges(tools: ToolRuntime): Promise<void> {
  await tools.rt.cache.subscribe(RULES_CHANNEL, (realmId) => {
    if (realmId === '*') tools.rules.clear();
    else tools.rules.delete(realmId);
  });
}

export async function listRules(tools: ToolRuntime, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:read');
  return { data: (await listRuleRows(tools.rt.db, realmId)).map(toRuleView) };
}

export async function createRule(tools: ToolRuntime, principal: RuntimePrincipal, body: Record<string, unknown>) {
  const realmId = requirePermission(principal, 'config:write');
  const id = newId();
  const rule = await validatedRule(tools, realmId, id, body);
  if ((await countRules(tools.rt.db, realmId)) >= EXECUTION_LIMITS.rulesPerRealm)
    throw RuntimeErrors.limit(`A realm holds at most ${EXECUTION_LIMITS.rulesPerRealm} routing rules`);
  const now = nowIso(tools.rt);
  const { id: _id, ...stored } = rule;
  await inTransaction(tools.rt.engine, (trx) =>
    insertRule(trx, { id, realm_id: realmId, rule: JSON.stringify(stored), created_at: now, updated_at: now }),
  );
  await rulesChanged(tools, realmId);
  return getRule(tools, principal, id);
}

export async function getRule(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findRule(tools.rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Routing rule', id);
  return toRuleView(row);
}

export async function replaceRule(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  id: string,
  body: Record<string, unknown>,
) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await findRule(tools.rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Routing rule', id);
  const { id: _id, ...stored } = await validatedRule(tools, realmId, row.id, body);
  await inTransaction(tools.rt.engine, (trx) =>
    updateRule(trx, row.id, { rule: JSON.stringify(stored), updated_at: nowIso(tools.rt) }),
  );
  await rulesChanged(tools, realmId);
  return getRule(tools, principal, row.id);
}

export async function removeRule(tools: ToolRuntime, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const row = await findRule(tools.rt.db, realmId, id);
  if (!row) throw RuntimeErrors.notFound('Routing rule', id);
  await inTransaction(tools.rt.engine, (trx) => deleteRule(trx, row.id));
  await rulesChanged(tools, realmId);
}

/** Reloads the realm's active rule set from the store, on every instance. */
export async function reloadRules(tools: ToolRuntime, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:write');
  await rulesChanged(tools, realmId);
  const rules = await loadRuleSet(tools, realmId);
  return {
    rules: rules.length,
    enabled: rules.filter((r) => r.enabled !== false).length,
    reloaded_at: nowIso(tools.rt),
  };
}

// Tool session context -----------------------------------------------------------------------------------------------

function toContextView(sessionId: string, row: Awaited<ReturnType<typeof findSessionContext>>) {
  return {
    session_id: sessionId,
    context: row ? (fromJsonColumn<Record<string, unknown>>(row.context) ?? {}) : {},
    version: row ? Number(row.version) : 0,
    updated_at: row ? toIsoString(row.updated_at) : null,
  };
}

/** The session's tool context (`{}` until written); the session's resume token is needed like for every session read. */
export async function getSessionContext(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
) {
  const realmId = requirePermission(principal, 'config:read');
  const session = await accessSession(tools.rt, principal, realmId, sessionId, resumeToken);
  return toContextView(session.id, await findSessionContext(tools.rt.db, realmId, session.id));
}

/** Replaces the session's tool context (an object of at most 16 KiB, no sensitive data). */
export async function putSessionContext(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  sessionId: string,
  resumeToken: string | undefined,
  context: Record<string, unknown>,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const session = await accessSession(tools.rt, principal, realmId, sessionId, resumeToken);
  const text = checkJson(context, 'context', { maxDepth: 8, maxBytes: 16_384 }) ?? '{}';
  tools.rt.scanner.reject(context, 'body/context', 'stored');
  await inTransaction(tools.rt.engine, (trx) =>
    saveSessionContext(trx, {
      session_id: session.id,
      realm_id: realmId,
      context: text,
      updated_by: principal.identityId,
      updated_at: nowIso(tools.rt),
    }),
  );
  return toContextView(session.id, await findSessionContext(tools.rt.db, realmId, session.id));
}
