import { claimIdempotencyKey, type IdempotencyClaim, type IdempotentResponse } from '@keel/core';
import { estimateTokens, ModelCallError } from '@keel/models';
import { type AgentRuntime, loadAgent, resolveAgent } from '../agents/agent-service.ts';
import { prepareOwnAnonymousEvents, writeOwnAnonymousEvents } from '../anonymous/anonymous-service.ts';
import {
  actionAllowed,
  activePolicy,
  admitRun,
  chargeRun,
  checkProviderAllowed,
  pinOf,
} from '../governance/governance-enforcement.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { realmHasKnowledge, searchKnowledgeRows } from '../knowledge/knowledge-service.ts';
import { loadActivePrompt } from '../prompts/prompt-service.ts';
import { renderPrompt } from '../prompts/render.ts';
import type { ChatTurn, ProviderRecord } from '../providers/model-clients.ts';
import { costPicos, picosText } from '../providers/pricing.ts';
import { loadProvider } from '../providers/provider-service.ts';
import { appendMessages, recentTurns, stateVariables, userContextValues } from '../sessions/session-data-service.ts';
import { accessSession, effectiveStatus, type SessionRecord, toSessionRecord } from '../sessions/session-service.ts';
import { updateSessionRow } from '../sessions/session-store.ts';
import { recordTurnUsage } from '../usage/usage-service.ts';
import { inTransaction } from '../write.ts';
import {
  type ActionType,
  type ClientCapabilities,
  downgradeForClient,
  type NormalizedAction,
  sanitizeHandoff,
} from './actions.ts';
import { insertExecution } from './execution-store.ts';
import type { FlowSelection, RunContext } from './extensions.ts';
import { checkJson } from './json-bounds.ts';
import { BudgetExceeded, createRunBudget, type RunBudget } from './run-budget.ts';
import type { RuntimeContext } from './runtime-context.ts';
import { RuntimeErrors } from './runtime-errors.ts';
import { asksForSensitiveData } from './sensitive-data.ts';

/** A run's claim older than this is taken as abandoned (its process died): runs call a model and may be slow. */
const RUN_ABANDONED_MS = 10 * 60 * 1000;
/** A turn's concurrency slot is leased for the agent's max_latency_ms plus this (a dead instance's slot then ends). */
const TURN_SLOT_GRACE_MS = 30_000;

/** The runtime execute contract version; omitted means this one, any other pinned value is a 400. */
export const CONTRACT_VERSION = '2026-08-22';

export interface RunRequest {
  kind: 'chat' | 'execute';
  version?: string | undefined;
  agentId?: string | undefined;
  flowId?: string | undefined;
  sessionId?: string | undefined;
  resumeToken?: string | undefined;
  channel?: string | undefined;
  locale?: string | undefined;
  /** The caller's new turns (execute: one user turn); the last one is the user's message. */
  messages: ChatTurn[];
  /** JSON paths of `messages` in the request body, for error messages. */
  messagePath: (index: number) => string;
  clientCapabilities?: ClientCapabilities | undefined;
  metadata?: Record<string, unknown> | undefined;
  idempotencyKey?: string | undefined;
  mode?: 'sync' | 'async' | undefined;
  /** The request body as sent, for idempotency. */
  payload: unknown;
}

export interface RunResult {
  version: string;
  execution_id: string;
  session_id: string | null;
  trace_id: string;
  status: 'succeeded' | 'failed';
  agent_id: string;
  flow_id: string | null;
  content: string | null;
  message: { role: 'assistant'; content: string } | null;
  action: NormalizedAction;
  data: Record<string, unknown> | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cost: string;
    currency: string;
    cost_limit_exceeded: boolean;
  } | null;
  routing: Record<string, unknown>;
  created_at: string;
}

/** The answer of `mode: async`: the durable execution queued for the turn (follow it under /runtime/executions). */
export interface QueuedRunResult {
  version: string;
  execution_id: string;
  session_id: string | null;
  trace_id: string;
  status: 'queued';
  state: string;
  agent_id: string;
  flow_id: string;
  flow_version: number;
  routing: Record<string, unknown>;
  created_at: string;
}

const SAFE_COLLECTION_TEXT =
  "I can't take card details, security or one-time codes, passwords or full addresses in this chat. Checkout and payment happen on a secure page.";

const POLICY = `Runtime policy: never ask for, repeat or store payment card numbers, CVV/CVC, one-time or 3-D Secure codes, passwords, access tokens or full postal addresses; checkout and payment happen outside the chat.
Answer in plain text. When one specific detail from the user is missing, you may instead answer with exactly one JSON object {"type":"CLARIFY","content":"<question>","options":["<choice>"]}; to hand over to a human, {"type":"ESCALATE","content":"<reason>"}.`;

const MODEL_ACTIONS = new Set<ActionType>(['RESPOND', 'CLARIFY', 'ESCALATE']);

/** A model answer as an action: a lone JSON object naming CLARIFY/RESPOND/ESCALATE, else RESPOND with the text. */
export function parseModelAnswer(raw: string): NormalizedAction {
  const text = raw.trim();
  const unfenced = text.replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  if (unfenced.startsWith('{') && unfenced.endsWith('}') && unfenced.length < 20_000) {
    try {
      const parsed = JSON.parse(unfenced) as { type?: unknown; content?: unknown; options?: unknown };
      if (
        typeof parsed.type === 'string' &&
        MODEL_ACTIONS.has(parsed.type as ActionType) &&
        typeof parsed.content === 'string'
      ) {
        const options = Array.isArray(parsed.options)
          ? parsed.options
              .filter((o): o is string => typeof o === 'string')
              .slice(0, 10)
              .map((o) => o.slice(0, 200))
          : [];
        return {
          type: parsed.type as ActionType,
          content: parsed.content,
          data: options.length > 0 ? { options } : null,
          metadata: {},
        };
      }
    } catch {
      // Not a protocol object: the text is the answer.
    }
  }
  return { type: 'RESPOND', content: raw, data: null, metadata: {} };
}

function errorAction(code: string, message: string, retryable: boolean): NormalizedAction {
  return { type: 'ERROR', content: message, data: { code, retryable }, metadata: {} };
}

export interface Outcome {
  action: NormalizedAction;
  status: 'succeeded' | 'failed';
  errorCode: string | null;
  usage: { inputTokens: number; outputTokens: number; costPicos: bigint; currency: string } | null;
  flow: FlowSelection | null;
  diagnostics: Record<string, unknown>;
}

async function promptValues(
  rt: RuntimeContext,
  realmId: string,
  declared: readonly string[],
  request: Pick<RunRequest, 'metadata' | 'channel' | 'locale'>,
  agent: AgentRuntime,
  session: SessionRecord | null,
): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {
    channel: request.channel ?? session?.channel ?? null,
    locale: request.locale ?? null,
    agent_name: agent.name,
    date: new Date(rt.clock()).toISOString().slice(0, 10),
  };
  const fromRequest = request.metadata?.variables;
  if (fromRequest && typeof fromRequest === 'object' && !Array.isArray(fromRequest)) Object.assign(values, fromRequest);
  const missing = () => declared.some((name) => values[name] === undefined);
  if (session && missing()) {
    const state = await stateVariables(rt.db, session.id);
    for (const [key, value] of Object.entries(state)) if (values[key] === undefined) values[key] = value;
  }
  if (session && session.subjectType !== 'anonymous' && missing()) {
    const context = await userContextValues(rt.db, realmId, session.subjectId);
    for (const [key, value] of Object.entries(context)) if (values[key] === undefined) values[key] = value;
  }
  return values;
}

function requireUsableProvider(agent: AgentRuntime, provider: ProviderRecord | undefined): ProviderRecord {
  if (!provider)
    throw RuntimeErrors.agentNotReady(
      agent.id,
      'no provider (set ai_provider_id or mark a provider as the realm default)',
    );
  if (!provider.isActive) throw RuntimeErrors.agentNotReady(agent.id, `provider ${provider.id} is inactive`);
  if (!provider.supportsText)
    throw RuntimeErrors.agentNotReady(agent.id, `provider ${provider.id} has no text capability`);
  const region = agent.settings.provider_region;
  if (region !== null && provider.settings.region !== region)
    throw RuntimeErrors.agentNotReady(agent.id, `provider_region ${region} is not the provider's region`);
  if (agent.settings.data_handling === 'no_retention' && provider.settings.zero_data_retention !== true)
    throw RuntimeErrors.agentNotReady(
      agent.id,
      'data_handling no_retention needs a provider with settings.zero_data_retention',
    );
  return provider;
}

/**
 * A turn answered by the agent's provider with its system prompt, the session history and allowed knowledge; it
 * writes nothing (the caller stores what it keeps), so governance evaluations answer their cases through it too.
 */
export async function answerDirectly(
  rt: RuntimeContext,
  run: RunContext,
  request: Pick<RunRequest, 'messages' | 'metadata' | 'channel' | 'locale'>,
): Promise<Outcome> {
  const { agent, session, budget } = run;
  const provider = requireUsableProvider(agent, await loadProvider(rt, run.realmId, agent.aiProviderId));
  await checkProviderAllowed(rt, run.realmId, run.policy, provider.type);
  if (run.policy?.rules.data_handling === 'no_retention' && provider.settings.zero_data_retention !== true)
    throw RuntimeErrors.agentNotReady(
      agent.id,
      `the realm policy (version ${run.policy.version}) requires data_handling no_retention: the provider needs settings.zero_data_retention`,
    );
  let prompt: Awaited<ReturnType<typeof loadActivePrompt>>;
  if (agent.systemPromptId) {
    prompt = await loadActivePrompt(rt, run.realmId, agent.systemPromptId);
    if (!prompt) throw RuntimeErrors.agentNotReady(agent.id, 'its system prompt has no active version');
  }
  const system: string[] = [];
  if (prompt)
    system.push(
      renderPrompt(prompt.content, await promptValues(rt, run.realmId, prompt.variables, request, agent, session)),
    );
  else system.push('You are a helpful assistant.');
  system.push(POLICY);
  if (run.locale) system.push(`The user's locale is ${run.locale}.`);
  const knowledge: { id: string; title: string | null; score: number }[] = [];
  if (await realmHasKnowledge(rt, run.realmId)) {
    const found = await searchKnowledgeRows(
      rt.db,
      run.realmId,
      run.message,
      {
        agentId: agent.id,
        sessionId: session?.id,
        userId: session && session.subjectType !== 'anonymous' ? session.subjectId : undefined,
      },
      3,
      new Date(rt.clock()).toISOString(),
    );
    if (found.length > 0) {
      system.push(
        `Knowledge you may use (cite as [n]):\n${found
          .map(
            (entry, i) =>
              `[${i + 1}] ${entry.row.title ? `${entry.row.title}: ` : ''}${(entry.row.content ?? '').slice(0, 1500)}`,
          )
          .join('\n')}`,
      );
      for (const entry of found)
        knowledge.push({ id: entry.row.id, title: entry.row.title, score: Math.round(entry.score * 1000) / 1000 });
    }
  }
  if (session?.summary && session.messageCount > run.history.length)
    system.push(`Summary of the earlier conversation: ${session.summary}`);
  const turns: ChatTurn[] = [{ role: 'system', content: system.join('\n\n') }, ...run.history, ...request.messages];

  const maxOutput = typeof provider.settings.max_tokens === 'number' ? provider.settings.max_tokens : 1024;
  const estimate = costPicos(provider.prices, {
    inputTokens: estimateTokens(turns.map((t) => t.content).join('\n')),
    outputTokens: maxOutput,
  });
  const diagnostics: Record<string, unknown> = {
    provider_id: provider.id,
    provider_type: provider.type,
    prompt: prompt ? { id: prompt.id, key: prompt.key, version: prompt.version } : null,
    knowledge,
  };
  try {
    budget.checkCost(estimate);
  } catch (error) {
    if (!(error instanceof BudgetExceeded)) throw error;
    return {
      action: errorAction('EXECUTION_COST_LIMIT', 'This request would exceed the cost limit of the assistant.', false),
      status: 'failed',
      errorCode: 'EXECUTION_COST_LIMIT',
      usage: null,
      flow: null,
      diagnostics: { ...diagnostics, estimated_cost: picosText(estimate), currency: provider.currency },
    };
  }

  const started = performance.now();
  let answer: Awaited<ReturnType<RuntimeContext['models']['complete']>>;
  try {
    answer = await budget.retry(
      () => rt.models.complete(provider, turns, { timeoutMs: budget.nodeTimeoutMs(), signal: budget.signal }),
      (error) => error instanceof ModelCallError && error.retryable,
    );
  } catch (error) {
    if (error instanceof BudgetExceeded || budget.remainingMs() <= 0 || budget.signal.aborted)
      throw RuntimeErrors.latencyExceeded(`max_latency_ms ${agent.settings.max_latency_ms}`);
    if (error instanceof ModelCallError)
      throw RuntimeErrors.providerFailed(`${error.message} (after ${budget.attempts} attempt(s))`);
    throw error;
  }
  diagnostics.provider_ms = Math.round((performance.now() - started) * 100) / 100;
  diagnostics.model = answer.model;
  const spent = costPicos(provider.prices, { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens });
  budget.addCost(spent);
  let action = parseModelAnswer(answer.content);
  if (action.content && (asksForSensitiveData(action.content) || rt.scanner.scanText(action.content, 'stored'))) {
    action = {
      type: 'RESPOND',
      content: SAFE_COLLECTION_TEXT,
      data: null,
      metadata: { policy: 'sensitive_data_blocked' },
    };
  }
  let overCap = false;
  try {
    budget.checkCost(0n);
  } catch {
    overCap = true;
  }
  return {
    action,
    status: 'succeeded',
    errorCode: null,
    usage: {
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      costPicos: spent,
      currency: provider.currency,
    },
    flow: null,
    diagnostics: { ...diagnostics, cost_limit_exceeded: overCap },
  };
}

/** Runs a flow selected by the flow engine (a later issue) under the same budget. */
async function runFlow(rt: RuntimeContext, selection: FlowSelection, run: RunContext): Promise<Outcome> {
  const leave = run.budget.enter();
  try {
    const outcome = await rt.extensions.flows!.run(selection, run);
    return {
      action: outcome.action,
      status: outcome.action.type === 'ERROR' ? 'failed' : 'succeeded',
      errorCode: outcome.action.type === 'ERROR' ? String(outcome.action.data?.code ?? 'FLOW_ERROR') : null,
      usage: outcome.usage
        ? {
            inputTokens: outcome.usage.inputTokens,
            outputTokens: outcome.usage.outputTokens,
            costPicos: outcome.usage.costPicos,
            currency: 'USD',
          }
        : null,
      flow: selection,
      diagnostics: { flow_version: selection.version, ...outcome.diagnostics },
    };
  } catch (error) {
    if (!(error instanceof BudgetExceeded)) throw error;
    if (error.limit === 'latency')
      throw RuntimeErrors.latencyExceeded(`max_latency_ms ${run.agent.settings.max_latency_ms}`);
    const code = {
      tool_calls: 'TOOL_CALL_LIMIT',
      orchestration_depth: 'ORCHESTRATION_DEPTH_LIMIT',
      execution_cost: 'EXECUTION_COST_LIMIT',
    }[error.limit];
    return {
      action: errorAction(code, `The assistant stopped: ${error.message}.`, false),
      status: 'failed',
      errorCode: code,
      usage: null,
      flow: selection,
      diagnostics: { flow_version: selection.version, limit: error.limit },
    };
  } finally {
    leave();
  }
}

/**
 * One synchronous turn (chat or execute): contract version and input checks, sensitive-data rejection,
 * idempotency, session access (resume token), agent resolution (request, session, profile rules, realm
 * default), the flow slot, the agent's settings bounds, the model call, the normalized action with client
 * downgrades, and one transaction writing the execution, the transcript and the idempotent answer.
 */
export async function runTurn(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  request: RunRequest,
  traceId: string,
): Promise<IdempotentResponse<RunResult | QueuedRunResult>> {
  const realmId = requirePermission(principal, 'runtime:run');
  if (request.version !== undefined && request.version !== CONTRACT_VERSION)
    throw RuntimeErrors.unsupportedVersion(JSON.stringify(request.version.slice(0, 40)));
  const last = request.messages.at(-1);
  if (last?.role !== 'user') throw RuntimeErrors.invalid('The last message must have role user');
  request.messages.forEach((turn, index) => {
    rt.scanner.reject(turn.content, request.messagePath(index), 'conversation');
  });
  checkJson(request.metadata, 'metadata');
  rt.scanner.reject(request.metadata, 'body/metadata', 'conversation');

  let claim: IdempotencyClaim | undefined;
  // mode async: the queued execution and its idempotent answer are one write (the flow engine's queue).
  if (request.idempotencyKey !== undefined && request.mode !== 'async') {
    // The claim is its own statement: the model call runs outside any transaction, and a run may take minutes.
    const claimed = await claimIdempotencyKey(
      rt.db,
      {
        scope: `rt:${realmId}:${principal.identityId}:${request.kind}`,
        key: request.idempotencyKey,
        payload: request.payload,
      },
      { abandonAfterMs: RUN_ABANDONED_MS, now: rt.clock },
    );
    if ('replay' in claimed) return claimed.replay as IdempotentResponse<RunResult>;
    claim = claimed.claim;
  }
  try {
    return await execute(rt, principal, realmId, request, traceId, claim);
  } catch (error) {
    await claim?.fail(error);
    throw error;
  }
}

async function execute(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  realmId: string,
  request: RunRequest,
  traceId: string,
  claim: IdempotencyClaim | undefined,
): Promise<IdempotentResponse<RunResult | QueuedRunResult>> {
  const started = performance.now();
  const now = rt.clock();
  let sessionRow: Awaited<ReturnType<typeof accessSession>> | undefined;
  if (request.sessionId !== undefined) {
    sessionRow = await accessSession(rt, principal, realmId, request.sessionId, request.resumeToken);
    const status = effectiveStatus(sessionRow, now);
    if (status !== 'active') throw RuntimeErrors.sessionNotActive(sessionRow.id, status);
  }
  const session = sessionRow ? toSessionRecord(sessionRow) : null;
  const metadata = request.metadata ?? {};
  const channel = request.channel ?? session?.channel ?? null;

  let agentId: string;
  let agentSource: string;
  let matchedPriority: number | null = null;
  if (request.agentId !== undefined) {
    agentId = request.agentId.toLowerCase();
    agentSource = 'request';
    if (session && session.agentId !== agentId)
      throw RuntimeErrors.conflict(`Session ${session.id} belongs to agent ${session.agentId}`);
  } else if (session) {
    agentId = session.agentId;
    agentSource = 'session';
  } else {
    const resolved = await resolveAgent(rt, realmId, { channel, capabilities: request.clientCapabilities, metadata });
    agentId = resolved.agentId;
    agentSource = resolved.source;
    matchedPriority = resolved.priority;
  }
  const agent = await loadAgent(rt, realmId, agentId);
  if (!agent) throw RuntimeErrors.notFound('Agent', agentId);
  if (agent.status !== 'active') throw RuntimeErrors.agentNotReady(agent.id, 'the agent identity is disabled');

  const requestedFlow = request.flowId?.toLowerCase() ?? null;
  if (requestedFlow && !(await rt.extensions.flows?.exists(realmId, requestedFlow)))
    throw RuntimeErrors.notFound('Flow', requestedFlow);

  // The realm policy active now is pinned to this run; the quota counts it before any work.
  const policy = await activePolicy(rt, realmId);
  await admitRun(rt, realmId);
  // One of the agent's max_concurrency turn slots (across instances with Redis), leased past the turn's deadline so
  // an instance that dies mid-turn frees it.
  const slot = await rt.turns.acquire(
    agent.id,
    agent.settings.max_concurrency,
    agent.settings.max_latency_ms + TURN_SLOT_GRACE_MS,
  );
  if (!('release' in slot))
    throw Object.assign(RuntimeErrors.concurrency(agent.id, slot.held), { headers: { 'retry-after': '1' } });
  const budget: RunBudget = createRunBudget(agent.settings, rt.clock);
  try {
    const history = session
      ? session.messageCount > 0
        ? await recentTurns(rt.db, session.id, rt.config.historyMessages)
        : []
      : request.messages.slice(0, -1);
    const run: RunContext = {
      realmId,
      principal,
      agent,
      session,
      message: request.messages.at(-1)!.content,
      history,
      channel,
      locale: request.locale ?? null,
      metadata,
      clientCapabilities: request.clientCapabilities,
      budget,
      traceId,
      policy,
    };
    const turnRequest = session ? request : { ...request, messages: request.messages.slice(-1) };
    const { selection, diagnostics: routed } = rt.extensions.flows
      ? await rt.extensions.flows.select(run, requestedFlow)
      : { selection: undefined, diagnostics: {} };
    if (request.mode === 'async') {
      if (!selection || selection.continuation) throw RuntimeErrors.modeUnsupported();
      const routing = {
        agent_source: agentSource,
        matched_priority: matchedPriority,
        flow_source: selection.source,
        ...routed,
      };
      const queued = await rt.extensions.flows!.queue(selection, run, {
        key: request.idempotencyKey,
        payload: request.payload,
        respond: (view) => ({
          version: CONTRACT_VERSION,
          execution_id: view.id,
          session_id: session?.id ?? null,
          trace_id: view.trace_id,
          status: 'queued',
          state: view.state,
          agent_id: agent.id,
          flow_id: view.flow_id,
          flow_version: view.flow_version,
          routing,
          created_at: view.created_at,
        }),
      });
      if (session && selection.pin && !queued.replayed)
        await inTransaction(rt.engine, (trx) => updateSessionRow(trx, session.id, { flow_id: selection.flowId }));
      return queued as IdempotentResponse<QueuedRunResult>;
    }
    const answered = selection ? await runFlow(rt, selection, run) : await answerDirectly(rt, run, turnRequest);
    const outcome: Outcome = actionAllowed(policy, answered.action.type)
      ? answered
      : {
          ...answered,
          action: errorAction(
            'POLICY_ACTION_BLOCKED',
            `The assistant's answer (${answered.action.type}) is not allowed by the realm policy.`,
            false,
          ),
          status: 'failed',
          errorCode: 'POLICY_ACTION_BLOCKED',
          diagnostics: { ...answered.diagnostics, blocked_action: answered.action.type },
        };
    if (outcome.usage)
      await chargeRun(rt, realmId, {
        tokens: outcome.usage.inputTokens + outcome.usage.outputTokens,
        costPicos: outcome.usage.costPicos,
      });

    const intended = sanitizeHandoff(outcome.action);
    const action = downgradeForClient(intended, request.clientCapabilities);
    const executionId = newId();
    const createdAt = new Date(rt.clock()).toISOString();
    const result: RunResult = {
      version: CONTRACT_VERSION,
      execution_id: executionId,
      session_id: session?.id ?? null,
      trace_id: traceId,
      status: outcome.status,
      agent_id: agent.id,
      flow_id: outcome.flow?.flowId ?? null,
      content: action.content,
      message:
        action.content !== null && outcome.status === 'succeeded'
          ? { role: 'assistant', content: action.content }
          : null,
      action,
      data: action.data,
      usage: outcome.usage
        ? {
            input_tokens: outcome.usage.inputTokens,
            output_tokens: outcome.usage.outputTokens,
            cost: picosText(outcome.usage.costPicos),
            currency: outcome.usage.currency,
            cost_limit_exceeded: outcome.diagnostics.cost_limit_exceeded === true,
          }
        : null,
      routing: {
        agent_source: agentSource,
        matched_priority: matchedPriority,
        flow_source: outcome.flow?.source ?? 'none',
        downgraded_from: action.type !== intended.type ? intended.type : null,
        attempts: budget.attempts,
        ...routed,
        ...outcome.diagnostics,
        latency_ms: Math.round((performance.now() - started) * 100) / 100,
      },
      created_at: createdAt,
    };
    const retain = agent.settings.data_handling === 'standard' && policy?.rules.data_handling !== 'no_retention';
    // Anonymous events of the turn (issue 15): the session's user and assistant messages, by role and action only.
    const anonymous = session
      ? await prepareOwnAnonymousEvents(rt, realmId, 'runtime', [
          ...turnRequest.messages
            .filter((turn) => turn.role === 'user')
            .map(() => ({
              type: 'session_user_message',
              session_id: session.id,
              properties: { agent_id: agent.id, channel },
            })),
          ...(action.content !== null && outcome.status === 'succeeded'
            ? [
                {
                  type: 'session_assistant_message',
                  session_id: session.id,
                  properties: { agent_id: agent.id, action_type: action.type },
                },
              ]
            : []),
        ])
      : [];
    await inTransaction(rt.engine, async (trx, sink) => {
      await writeOwnAnonymousEvents(trx, anonymous);
      await insertExecution(trx, {
        id: executionId,
        realm_id: realmId,
        agent_id: agent.id,
        session_id: session?.id ?? null,
        flow_id: result.flow_id,
        kind: request.kind,
        mode: 'sync',
        status: outcome.status,
        trace_id: traceId,
        action_type: action.type,
        result: JSON.stringify(
          retain ? result : { ...result, content: null, message: null, action: { ...action, content: null } },
        ),
        usage: result.usage ? JSON.stringify(result.usage) : null,
        pinned: JSON.stringify({
          contract_version: CONTRACT_VERSION,
          prompt: outcome.diagnostics.prompt ?? null,
          provider_id: outcome.diagnostics.provider_id ?? null,
          flow: outcome.flow ? { id: outcome.flow.flowId, version: outcome.flow.version } : null,
          policy: pinOf(policy),
        }),
        policy_version_id: policy?.id ?? null,
        error_code: outcome.errorCode,
        created_by: principal.identityId,
        created_at: createdAt,
        completed_at: createdAt,
      });
      sink.emitRuntime({
        event: outcome.status === 'succeeded' ? 'execution.succeeded' : 'execution.failed',
        realmId,
        data: {
          execution_id: executionId,
          kind: request.kind,
          status: outcome.status,
          agent_id: agent.id,
          session_id: session?.id ?? null,
          flow_id: result.flow_id,
          trace_id: traceId,
          action_type: action.type,
          error_code: outcome.errorCode,
          usage: result.usage,
          created_at: createdAt,
        },
      });
      if (outcome.usage)
        await recordTurnUsage(trx, {
          realmId,
          executionId,
          kind: request.kind,
          status: outcome.status,
          agentId: agent.id,
          sessionId: session?.id ?? null,
          providerId: (outcome.diagnostics.provider_id as string | undefined) ?? null,
          model: (outcome.diagnostics.model as string | undefined) ?? null,
          inputTokens: outcome.usage.inputTokens,
          outputTokens: outcome.usage.outputTokens,
          costPicos: outcome.usage.costPicos,
          currency: outcome.usage.currency,
          createdBy: principal.identityId,
          at: createdAt,
        });
      if (session) {
        const expiresAt = new Date(rt.clock() + session.ttlSeconds * 1000).toISOString();
        if (retain && outcome.status === 'succeeded')
          await appendMessages(
            trx,
            { id: session.id, realm_id: realmId },
            [
              ...turnRequest.messages.map((turn) => ({ role: turn.role, content: turn.content })),
              ...(action.content !== null
                ? [{ role: 'assistant', content: action.content, execution_id: executionId, action_type: action.type }]
                : []),
            ],
            createdAt,
            expiresAt,
          );
        else await updateSessionRow(trx, session.id, { expires_at: expiresAt, updated_at: createdAt });
        if (outcome.flow?.pin) await updateSessionRow(trx, session.id, { flow_id: outcome.flow.flowId });
      }
      await claim?.complete(trx, 200, result);
    });
    return { statusCode: 200, body: result, replayed: false };
  } finally {
    budget.dispose();
    await slot.release();
  }
}
