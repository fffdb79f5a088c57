// Sampling and elicitation requests of MCP servers during tool calls: the realm's policy (off by default), bounded
// budgets per call and per window, one audit record per request. Sampling goes through the realm's model provider;
// elicitation is declined or answered from the session's tool context, per policy.
import { fromJsonColumn, toIsoString } from '@keel/core';
import { type CreateMessageResult, type ElicitResult, ProtocolError } from '@modelcontextprotocol/client';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { loadProvider } from '../providers/provider-service.ts';
import { nowIso } from '../runtime/runtime-context.ts';
import { cursorAfterId, idPage } from '../runtime/runtime-cursor.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import {
  INTERACTION_REFUSED,
  type InteractionCall,
  type InteractionRequest,
  type ServerEndpoint,
} from './mcp-connection.ts';
import {
  findInteractionPolicy,
  type InteractionRow,
  insertInteraction,
  listInteractionRows,
  saveInteractionPolicy,
  updateInteraction,
  windowUsage,
} from './tool-interaction-store.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import { findSessionContext } from './toolserver-store.ts';

export type InteractionOutcome = 'pending' | 'served' | 'accepted' | 'declined' | 'refused' | 'failed';

export const ELICITATION_MODES = ['off', 'decline', 'session_context'] as const;
export type ElicitationMode = (typeof ELICITATION_MODES)[number];

export interface SamplingPolicy {
  enabled: boolean;
  /** The realm's provider that answers (null: the realm's default provider). */
  provider_id: string | null;
  max_requests_per_call: number;
  max_tokens_per_request: number;
  max_tokens_per_call: number;
  max_requests_per_window: number;
  max_tokens_per_window: number;
}

export interface ElicitationPolicy {
  mode: ElicitationMode;
  max_requests_per_call: number;
  max_requests_per_window: number;
}

export interface InteractionPolicy {
  sampling: SamplingPolicy;
  elicitation: ElicitationPolicy;
  window_seconds: number;
}

/** Bounds of every policy number: [min, max, default]. */
export const POLICY_BOUNDS = Object.freeze({
  sampling: {
    max_requests_per_call: [1, 20, 3],
    max_tokens_per_request: [1, 32_000, 1024],
    max_tokens_per_call: [1, 128_000, 4096],
    max_requests_per_window: [1, 100_000, 100],
    max_tokens_per_window: [1, 10_000_000, 100_000],
  },
  elicitation: { max_requests_per_call: [1, 20, 3], max_requests_per_window: [1, 100_000, 100] },
  window_seconds: [60, 86_400, 3600],
} as const);

/** Messages of one sampling request, all text parts together, at most this many characters. */
const MAX_SAMPLING_CHARS = 65_536;
/** Fields of one elicitation form at most (the MCP form schema is flat). */
const MAX_ELICITATION_FIELDS = 50;
/** Audit records per tool call at most (a server that keeps asking is still refused, no longer recorded). */
const MAX_AUDITED_PER_CALL = 25;
const MAX_SAMPLING_TIMEOUT_MS = 60_000;

const defaults = <T extends Record<string, readonly [number, number, number]>>(bounds: T) =>
  Object.fromEntries(Object.entries(bounds).map(([key, [, , d]]) => [key, d])) as { [K in keyof T]: number };

/** The policy of a realm that never set one: both off. */
export function defaultPolicy(): InteractionPolicy {
  return {
    sampling: { enabled: false, provider_id: null, ...defaults(POLICY_BOUNDS.sampling) },
    elicitation: { mode: 'off', ...defaults(POLICY_BOUNDS.elicitation) },
    window_seconds: POLICY_BOUNDS.window_seconds[2],
  };
}

async function loadPolicy(tools: ToolRuntime, realmId: string): Promise<InteractionPolicy> {
  return tools.rt.realms.get(realmId, 'tool-interaction-policy', async () => {
    const row = await findInteractionPolicy(tools.rt.db, realmId);
    return row ? mergePolicy(defaultPolicy(), fromJsonColumn<PolicyInput>(row.policy) ?? {}) : defaultPolicy();
  });
}

export interface PolicyInput {
  sampling?: Partial<SamplingPolicy> | undefined;
  elicitation?: Partial<ElicitationPolicy> | undefined;
  window_seconds?: number | undefined;
}

function mergePolicy(base: InteractionPolicy, input: PolicyInput): InteractionPolicy {
  return {
    sampling: { ...base.sampling, ...input.sampling },
    elicitation: { ...base.elicitation, ...input.elicitation },
    window_seconds: input.window_seconds ?? base.window_seconds,
  };
}

function policyView(policy: InteractionPolicy, updatedAt: string | null) {
  return { ...policy, updated_at: updatedAt };
}

export async function getInteractionPolicy(tools: ToolRuntime, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:read');
  const row = await findInteractionPolicy(tools.rt.db, realmId);
  return policyView(await loadPolicy(tools, realmId), row ? toIsoString(row.updated_at) : null);
}

/**
 * Replaces parts of the realm's policy (owner/admin: it lets servers spend model tokens and read session context);
 * fields left out keep their value. A named provider must be one of the realm's.
 */
export async function putInteractionPolicy(tools: ToolRuntime, principal: RuntimePrincipal, input: PolicyInput) {
  const realmId = requirePermission(principal, 'realm:manage');
  const policy = mergePolicy(await loadPolicy(tools, realmId), input);
  const providerId = policy.sampling.provider_id?.toLowerCase() ?? null;
  policy.sampling.provider_id = providerId;
  if (providerId && !(await loadProvider(tools.rt, realmId, providerId)))
    throw RuntimeErrors.notFound('Provider', providerId);
  if (policy.sampling.max_tokens_per_request > policy.sampling.max_tokens_per_call)
    throw RuntimeErrors.invalid('sampling.max_tokens_per_request must not exceed sampling.max_tokens_per_call');
  const updatedAt = nowIso(tools.rt);
  await inTransaction(tools.rt.engine, (trx) =>
    saveInteractionPolicy(trx, {
      realm_id: realmId,
      policy: JSON.stringify(policy),
      updated_by: principal.identityId,
      updated_at: updatedAt,
    }),
  );
  await tools.rt.realms.invalidate(realmId);
  return policyView(policy, updatedAt);
}

function interactionView(row: InteractionRow) {
  return {
    id: row.id,
    kind: row.kind as InteractionRequest['kind'],
    mcp_server_id: row.server_id,
    tool_name: row.tool_name,
    session_id: row.session_id,
    trace_id: row.trace_id,
    outcome: row.outcome as InteractionOutcome,
    reason: row.reason,
    provider_id: row.provider_id,
    tokens_reserved: row.tokens_reserved,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    created_at: toIsoString(row.created_at),
  };
}

export async function listInteractions(
  tools: ToolRuntime,
  principal: RuntimePrincipal,
  query: {
    limit: number;
    cursor?: string | undefined;
    kind?: string | undefined;
    mcp_server_id?: string | undefined;
    session_id?: string | undefined;
  },
) {
  const realmId = requirePermission(principal, 'config:read');
  const rows = await listInteractionRows(tools.rt.db, realmId, {
    limit: query.limit,
    before: cursorAfterId('tool-interactions', query.cursor),
    kind: query.kind,
    serverId: query.mcp_server_id,
    sessionId: query.session_id,
  });
  return idPage('tool-interactions', rows, query.limit, interactionView);
}

// Serving a request ----------------------------------------------------------------------------------------------

/** A refusal: the JSON-RPC error the server receives, and the reason kept in the audit record. */
class Refusal extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

interface AuditRecord {
  id: string;
  kind: InteractionRequest['kind'];
  endpoint: ServerEndpoint;
  call: InteractionCall | undefined;
}

async function audit(
  tools: ToolRuntime,
  record: AuditRecord,
  fields: { outcome: string; reason?: string | null; counted?: number; tokens_reserved?: number; provider_id?: string },
): Promise<void> {
  const { call } = record;
  if (call && ++call.used.audited > MAX_AUDITED_PER_CALL) return;
  await inTransaction(tools.rt.engine, (trx) =>
    insertInteraction(trx, {
      id: record.id,
      realm_id: record.endpoint.realmId,
      kind: record.kind,
      server_id: record.endpoint.id,
      tool_name: call?.toolName ?? null,
      session_id: call?.sessionId ?? null,
      trace_id: call?.traceId ?? null,
      outcome: fields.outcome,
      reason: fields.reason ?? null,
      counted: fields.counted ?? 0,
      provider_id: fields.provider_id ?? null,
      tokens_reserved: fields.tokens_reserved ?? 0,
      input_tokens: null,
      output_tokens: null,
      created_at: nowIso(tools.rt),
    }),
  );
}

/**
 * Serves one sampling or elicitation request of a server (the connector's InteractionHandler). Refused — JSON-RPC
 * error -1 with a readable message, and an audit record with the reason — unless the realm's policy enables the kind,
 * the request belongs to one tool call made in a session (user presence), and the per-call and per-window budgets
 * have room. Every request leaves one audit record (up to 25 per call).
 */
export async function serveInteraction(
  tools: ToolRuntime,
  endpoint: ServerEndpoint,
  request: InteractionRequest,
  call: InteractionCall | undefined,
): Promise<CreateMessageResult | ElicitResult> {
  const record: AuditRecord = { id: newId(), kind: request.kind, endpoint, call };
  try {
    const policy = await loadPolicy(tools, endpoint.realmId);
    if (request.kind === 'sampling') return await sample(tools, record, policy, request.params);
    return await elicit(tools, record, policy, request.params);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    await audit(tools, record, { outcome: 'refused', reason: error.reason });
    throw new ProtocolError(INTERACTION_REFUSED, error.message, { reason: error.reason });
  }
}

/** The checks both kinds share: policy on, one tool call in a session, room in the call's request budget. */
function requireCall(
  kind: InteractionRequest['kind'],
  enabled: boolean,
  call: InteractionCall | undefined,
  maxPerCall: number,
): InteractionCall {
  if (!enabled) throw new Refusal('POLICY_OFF', `${kind} is not enabled by the realm's policy`);
  if (!call)
    throw new Refusal('NO_TOOL_CALL', `the ${kind} request does not belong to exactly one tool call under way`);
  if (!call.sessionId)
    throw new Refusal('USER_NOT_PRESENT', `${kind} is served only during tool calls made in a session`);
  if (call.used.requests >= maxPerCall)
    throw new Refusal('CALL_BUDGET_EXHAUSTED', `at most ${maxPerCall} ${kind} requests per tool call`);
  if (call.signal.aborted || call.deadline <= Date.now()) throw new Refusal('CALL_ENDED', 'the tool call has ended');
  call.used.requests += 1;
  return call;
}

/**
 * Reserves the request in the realm's window (the audit record is inserted first and counted, so concurrent
 * requests see each other and the window is never overrun); over budget the reservation is released.
 */
async function reserve(
  tools: ToolRuntime,
  record: AuditRecord,
  policy: InteractionPolicy,
  limits: { requests: number; tokens?: number },
  tokens: number,
  providerId?: string,
): Promise<void> {
  await audit(tools, record, {
    outcome: 'pending',
    counted: 1,
    tokens_reserved: tokens,
    ...(providerId ? { provider_id: providerId } : {}),
  });
  const since = new Date(tools.rt.clock() - policy.window_seconds * 1000).toISOString();
  const used = await windowUsage(tools.rt.db, record.endpoint.realmId, record.kind, since);
  if (used.requests > limits.requests || (limits.tokens !== undefined && used.tokens > limits.tokens)) {
    await settle(tools, record, { outcome: 'refused', reason: 'WINDOW_BUDGET_EXHAUSTED', counted: 0 });
    throw new ProtocolError(
      INTERACTION_REFUSED,
      `the realm's ${record.kind} budget for the current ${policy.window_seconds}s window is used up`,
      { reason: 'WINDOW_BUDGET_EXHAUSTED' },
    );
  }
}

function settle(
  tools: ToolRuntime,
  record: AuditRecord,
  patch: Parameters<typeof updateInteraction>[2],
): Promise<void> {
  return inTransaction(tools.rt.engine, (trx) => updateInteraction(trx, record.id, patch));
}

type SamplingParams = Extract<InteractionRequest, { kind: 'sampling' }>['params'];

/** The request's messages as chat turns: text only, bounded in size. */
function samplingTurns(params: SamplingParams) {
  const turns: { role: 'system' | 'user' | 'assistant'; content: string }[] = [];
  if (typeof params.systemPrompt === 'string' && params.systemPrompt.length > 0)
    turns.push({ role: 'system', content: params.systemPrompt });
  for (const message of params.messages ?? []) {
    const parts = Array.isArray(message.content) ? message.content : [message.content];
    const texts = parts.map((part) => {
      if (part?.type !== 'text' || typeof part.text !== 'string')
        throw new Refusal('UNSUPPORTED_CONTENT', 'only text messages can be sampled');
      return part.text;
    });
    turns.push({ role: message.role === 'assistant' ? 'assistant' : 'user', content: texts.join('\n') });
  }
  if (turns.every((t) => t.role === 'system')) throw new Refusal('INVALID_REQUEST', 'the request has no messages');
  if (turns.reduce((n, t) => n + t.content.length, 0) > MAX_SAMPLING_CHARS)
    throw new Refusal('REQUEST_TOO_LARGE', `the messages exceed ${MAX_SAMPLING_CHARS} characters`);
  if ('tools' in params && params.tools !== undefined)
    throw new Refusal('UNSUPPORTED_CONTENT', 'sampling with tools is not supported');
  return turns;
}

async function sample(
  tools: ToolRuntime,
  record: AuditRecord,
  policy: InteractionPolicy,
  params: SamplingParams,
): Promise<CreateMessageResult> {
  const rules = policy.sampling;
  const call = requireCall('sampling', rules.enabled, record.call, rules.max_requests_per_call);
  const turns = samplingTurns(params);
  const asked = typeof params.maxTokens === 'number' && params.maxTokens > 0 ? Math.floor(params.maxTokens) : Infinity;
  const maxTokens = Math.min(asked, rules.max_tokens_per_request);
  if (call.used.tokens + maxTokens > rules.max_tokens_per_call)
    throw new Refusal('CALL_BUDGET_EXHAUSTED', `at most ${rules.max_tokens_per_call} sampling tokens per tool call`);
  const provider = await loadProvider(tools.rt, record.endpoint.realmId, rules.provider_id);
  if (!provider?.isActive || !provider.supportsText)
    throw new Refusal('NO_PROVIDER', "the realm's sampling provider is missing, inactive or has no text model");
  call.used.tokens += maxTokens;
  await reserve(
    tools,
    record,
    policy,
    { requests: rules.max_requests_per_window, tokens: rules.max_tokens_per_window },
    maxTokens,
    provider.id,
  );
  const timeoutMs = Math.max(1, Math.min(MAX_SAMPLING_TIMEOUT_MS, call.deadline - Date.now()));
  try {
    const answer = await tools.rt.models.complete(provider, turns, { timeoutMs, signal: call.signal, maxTokens });
    // The reservation is replaced by what was used; the call's budget too.
    call.used.tokens += answer.inputTokens + answer.outputTokens - maxTokens;
    await settle(tools, record, {
      outcome: 'served',
      input_tokens: answer.inputTokens,
      output_tokens: answer.outputTokens,
    });
    return {
      role: 'assistant',
      content: { type: 'text', text: answer.content },
      model: answer.model,
      stopReason: 'endTurn',
    };
  } catch {
    // The provider's message may carry upstream details: the server gets a fixed one.
    await settle(tools, record, { outcome: 'failed', reason: 'MODEL_CALL_FAILED' });
    throw new ProtocolError(INTERACTION_REFUSED, 'the model call failed', { reason: 'MODEL_CALL_FAILED' });
  }
}

type ElicitationParams = Extract<InteractionRequest, { kind: 'elicitation' }>['params'];

/** A value of the session context that fits one primitive field of an elicitation form, or undefined. */
function fitting(field: Record<string, unknown>, value: unknown): unknown {
  const values = (field.enum ?? field.oneOf) as unknown[] | undefined;
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return undefined;
      if (typeof field.minLength === 'number' && value.length < field.minLength) return undefined;
      if (typeof field.maxLength === 'number' && value.length > field.maxLength) return undefined;
      if (Array.isArray(field.enum) && !values?.includes(value)) return undefined;
      return value;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
      if (field.type === 'integer' && !Number.isInteger(value)) return undefined;
      if (typeof field.minimum === 'number' && value < field.minimum) return undefined;
      if (typeof field.maximum === 'number' && value > field.maximum) return undefined;
      return value;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    default:
      return undefined;
  }
}

/** The form's answer from the session's tool context: every required field must be there and fit. */
function answerFrom(params: ElicitationParams, context: Record<string, unknown>): Record<string, unknown> | undefined {
  if ((params as { mode?: string }).mode === 'url') return undefined;
  const schema = (params as { requestedSchema?: { properties?: unknown; required?: unknown } }).requestedSchema;
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const names = Object.keys(properties);
  if (names.length === 0 || names.length > MAX_ELICITATION_FIELDS) return undefined;
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]) : [];
  const content: Record<string, unknown> = {};
  for (const name of names) {
    const value = Object.hasOwn(context, name) ? fitting(properties[name] ?? {}, context[name]) : undefined;
    if (value !== undefined) content[name] = value;
    else if (required.includes(name)) return undefined;
  }
  return Object.keys(content).length > 0 ? content : undefined;
}

async function elicit(
  tools: ToolRuntime,
  record: AuditRecord,
  policy: InteractionPolicy,
  params: ElicitationParams,
): Promise<ElicitResult> {
  const rules = policy.elicitation;
  const call = requireCall('elicitation', rules.mode !== 'off', record.call, rules.max_requests_per_call);
  await reserve(tools, record, policy, { requests: rules.max_requests_per_window }, 0);
  let content: Record<string, unknown> | undefined;
  if (rules.mode === 'session_context') {
    const stored = await findSessionContext(tools.rt.db, record.endpoint.realmId, call.sessionId!);
    content = answerFrom(params, fromJsonColumn<Record<string, unknown>>(stored?.context) ?? {});
  }
  // Only field names are audited, never the values.
  const reason = content
    ? `fields:${Object.keys(content).length}`
    : rules.mode === 'decline'
      ? 'POLICY_DECLINE'
      : 'NOT_IN_CONTEXT';
  await settle(tools, record, { outcome: content ? 'accepted' : 'declined', reason });
  return content ? { action: 'accept', content: content as never } : { action: 'decline' };
}
