import {
  checkIdempotencyKey,
  decodeCursor,
  encodeCursor,
  fromJsonColumn,
  type IdempotentResponse,
  lockForTransaction,
  toBoolean,
  toIsoString,
} from '@keel/core';
import { countOpenExecutions } from '../executions/execution-store.ts';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { runWrite } from '../write.ts';
import { compareContracts, compileFlow, type FlowPlan } from './flow-compiler.ts';
import { FlowErrors, type FlowProblem, FlowRejected } from './flow-errors.ts';
import {
  type Fixture,
  type FixtureExpect,
  type FixtureMocks,
  type FixtureResult,
  runFixture,
} from './flow-fixtures.ts';
import { FLOW_LIMITS } from './flow-schemas.ts';
import {
  clearDraftVerdicts,
  countFixtures,
  deleteFlowRow,
  type FlowFixtureRow,
  type FlowRow,
  type FlowVersionRow,
  findFixturesByIds,
  findFlow,
  findFlowByNameKey,
  findFlowVersion,
  findPublishedVersionBelow,
  insertFixture,
  insertFlow,
  insertFlowVersion,
  listFixtureRows,
  listFlowRows,
  listFlowVersionRows,
  updateFlowRow,
  updateFlowVersion,
} from './flow-store.ts';
import { flowToolName, flowToolSchemas } from './flow-tools.ts';

/** Fixtures one flow keeps at most (every test replays them all). */
export const MAX_FIXTURES = 50;
/** Compiled published plans kept in memory per process (plans are immutable: a version never changes). */
const PLAN_CACHE_SIZE = 500;

export interface FlowInput {
  realm_id?: string | undefined;
  name: string;
  description?: string | null | undefined;
  config: Record<string, unknown>;
  is_active?: boolean | undefined;
}

export interface FixtureInput {
  name: string;
  input?: unknown;
  mocks?: FixtureMocks | undefined;
  expect: FixtureExpect;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const planCaches = new WeakMap<RuntimeContext, Map<string, FlowPlan>>();

function planCache(rt: RuntimeContext): Map<string, FlowPlan> {
  let cache = planCaches.get(rt);
  if (!cache) {
    cache = new Map();
    planCaches.set(rt, cache);
  }
  return cache;
}

export function invalidCursor() {
  return RuntimeErrors.invalid('cursor is not a cursor of this list: send the next_cursor of the previous page');
}

/** One keyset page of `limit + 1` rows: the rows shown and, when more exist, a cursor after the last one. */
function keysetPage<R, V>(
  kind: string,
  rows: readonly R[],
  limit: number,
  view: (row: R) => V,
  position: (row: R) => string | number,
) {
  const page = rows.slice(0, limit);
  return {
    data: page.map(view),
    next_cursor: rows.length > limit ? encodeCursor(kind, [position(page.at(-1)!)]) : null,
  };
}

export function toFlowSummary(row: FlowRow) {
  const active = toBoolean(row.is_active);
  return {
    id: row.id,
    realm_id: row.realm_id,
    name: row.name,
    description: row.description,
    status: row.status as 'draft' | 'published' | 'archived',
    is_active: active,
    version: row.version,
    active_version: row.active_version,
    published_version: row.published_version,
    tool_name: active && row.active_version !== null ? flowToolName(row.name, row.active_version) : null,
    created_at: toIsoString(row.created_at),
    updated_at: toIsoString(row.updated_at),
    archived_at: row.archived_at === null ? null : toIsoString(row.archived_at),
  };
}

function toFlowView(row: FlowRow, version: FlowVersionRow) {
  return {
    ...toFlowSummary(row),
    config: fromJsonColumn<Record<string, unknown>>(version.config),
    config_hash: version.config_hash,
  };
}

function toVersionView(row: FlowVersionRow) {
  return {
    flow_id: row.flow_id,
    version: row.version,
    status: row.status as 'draft' | 'published',
    config: fromJsonColumn<Record<string, unknown>>(row.config),
    config_hash: row.config_hash,
    test_passed: row.test_passed === null ? null : toBoolean(row.test_passed),
    tested_at: row.tested_at === null ? null : toIsoString(row.tested_at),
    published_at: row.published_at === null ? null : toIsoString(row.published_at),
    created_at: toIsoString(row.created_at),
  };
}

function toFixtureView(row: FlowFixtureRow) {
  return {
    id: row.id,
    flow_id: row.flow_id,
    name: row.name,
    input: fromJsonColumn<Json>(row.input),
    mocks: fromJsonColumn<Record<string, unknown>>(row.mocks),
    expect: fromJsonColumn<Record<string, unknown>>(row.expect),
    created_at: toIsoString(row.created_at),
  };
}

export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

/** The subflow references `{flow_id, version}` a config names (whatever else is wrong with it). */
function subflowRefs(config: unknown): { flowId: string; version: number }[] {
  const nodes = (config as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) return [];
  const refs: { flowId: string; version: number }[] = [];
  for (const node of nodes.slice(0, FLOW_LIMITS.maxNodes)) {
    const n = node as { type?: unknown; flow_id?: unknown; version?: unknown } | null;
    if (n?.type === 'subflow' && typeof n.flow_id === 'string' && Number.isInteger(n.version))
      refs.push({ flowId: n.flow_id.toLowerCase(), version: n.version as number });
  }
  return refs;
}

/**
 * The compiled plan of a published version of a realm's flow, with its own subflows resolved (cached per process;
 * undefined for an unknown, foreign or unpublished version). `depth` bounds the resolution like the compiler does.
 */
export async function loadPublishedPlan(
  rt: RuntimeContext,
  realmId: string,
  flowId: string,
  version: number,
  depth = 0,
): Promise<FlowPlan | undefined> {
  const key = `${realmId}|${flowId}@${version}`;
  const cache = planCache(rt);
  const cached = cache.get(key);
  if (cached) return cached;
  if (depth > FLOW_LIMITS.maxSubflowDepth) return undefined;
  const row = await findFlowVersion(rt.db, realmId, flowId, version);
  if (row?.status !== 'published') return undefined;
  const config = fromJsonColumn<unknown>(row.config);
  const plans = await resolveSubflows(rt, realmId, config, depth + 1);
  let plan: FlowPlan;
  try {
    plan = compileFlow(config, { flowId, version, resolveSubflow: (id, v) => plans.get(`${id}@${v}`) });
  } catch {
    return undefined;
  }
  if (cache.size >= PLAN_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, plan);
  return plan;
}

/** The published plans of every subflow a config names (and theirs), keyed `flowId@version`. */
async function resolveSubflows(
  rt: RuntimeContext,
  realmId: string,
  config: unknown,
  depth: number,
): Promise<Map<string, FlowPlan>> {
  const plans = new Map<string, FlowPlan>();
  for (const ref of subflowRefs(config)) {
    const key = `${ref.flowId}@${ref.version}`;
    if (plans.has(key)) continue;
    const plan = await loadPublishedPlan(rt, realmId, ref.flowId, ref.version, depth);
    if (plan) plans.set(key, plan);
  }
  return plans;
}

/** Every plan a plan runs through its subflows (for fixture replay and executions), keyed `flowId@version`. */
export async function subflowPlans(
  rt: RuntimeContext,
  realmId: string,
  plan: FlowPlan,
): Promise<Map<string, FlowPlan>> {
  const plans = new Map<string, FlowPlan>();
  for (const ref of plan.subflowRefs) {
    const at = ref.lastIndexOf('@');
    const sub = await loadPublishedPlan(rt, realmId, ref.slice(0, at), Number(ref.slice(at + 1)));
    if (sub) plans.set(ref, sub);
  }
  return plans;
}

/** Compiles a config of a realm's flow (subflows resolved to published versions); throws FlowRejected. */
export async function compileForRealm(
  rt: RuntimeContext,
  realmId: string,
  config: unknown,
  options: { flowId?: string; version?: number; previous?: FlowPlan } = {},
): Promise<FlowPlan> {
  const plans = await resolveSubflows(rt, realmId, config, 1);
  return compileFlow(config, { ...options, resolveSubflow: (id, v) => plans.get(`${id}@${v}`) });
}

export async function requireFlow(rt: RuntimeContext, realmId: string, id: string): Promise<FlowRow> {
  const row = await findFlow(rt.db, realmId, id.toLowerCase());
  if (!row) throw RuntimeErrors.notFound('Flow', id);
  return row;
}

async function requireVersion(rt: RuntimeContext, flow: FlowRow, version: number): Promise<FlowVersionRow> {
  const row = await findFlowVersion(rt.db, flow.realm_id, flow.id, version);
  if (!row) throw RuntimeErrors.notFound('Flow version', `${flow.id}@${version}`);
  return row;
}

/**
 * The version an execution of a flow pins: `version` when given (it must be published), else the active version
 * (the flow must be active). Answers its compiled plan.
 */
export async function resolveRunnableVersion(
  rt: RuntimeContext,
  realmId: string,
  flowId: string,
  version: number | undefined,
): Promise<{ version: number; plan: FlowPlan }> {
  const flow = await requireFlow(rt, realmId, flowId);
  checkNotArchived(flow);
  let pinned: number;
  if (version !== undefined) pinned = version;
  else if (toBoolean(flow.is_active) && flow.active_version !== null) pinned = flow.active_version;
  else throw FlowErrors.notActive(flow.id);
  const plan = await loadPublishedPlan(rt, realmId, flow.id, pinned);
  if (!plan) {
    await requireVersion(rt, flow, pinned);
    throw FlowErrors.notPublished(`${flow.id}@${pinned}`);
  }
  return { version: pinned, plan };
}

function checkNotArchived(flow: FlowRow): void {
  if (flow.status === 'archived') throw FlowErrors.archived(flow.id);
}

async function readFlow(rt: RuntimeContext, realmId: string, id: string) {
  const flow = await requireFlow(rt, realmId, id);
  return toFlowView(flow, await requireVersion(rt, flow, flow.version));
}

/**
 * Creates a flow at version 1 (a draft: its config compiles, but nothing runs it until a tested version is
 * published and activated; `is_active: true` is therefore a 409 FLOW_NOT_TESTED and stores nothing).
 */
export async function createFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: FlowInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<unknown>> {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const key = checkIdempotencyKey(idempotencyKey, false);
  // A new flow has no tested version, so it cannot start active (nothing is stored).
  if (input.is_active === true) throw FlowErrors.notTested('1 of a new flow');
  const plan = await compileForRealm(rt, realmId, input.config);
  return runWrite(
    rt.engine,
    key === undefined ? undefined : { scope: `${principal.keyId}|POST /api/v1/runtime/flows`, key, payload: input },
    async (trx) => {
      if (await findFlowByNameKey(trx, realmId, nameKey(input.name)))
        throw RuntimeErrors.nameTaken(`A flow named ${input.name} exists in this realm`);
      const now = nowIso(rt);
      const id = newId();
      await insertFlow(trx, {
        id,
        realm_id: realmId,
        name: input.name.trim(),
        name_key: nameKey(input.name),
        description: input.description ?? null,
        status: 'draft',
        is_active: false,
        version: 1,
        active_version: null,
        published_version: null,
        created_by: principal.identityId,
        created_at: now,
        updated_at: now,
        archived_at: null,
      });
      await insertFlowVersion(trx, {
        flow_id: id,
        version: 1,
        realm_id: realmId,
        config: JSON.stringify(plan.config),
        config_hash: plan.hash,
        status: 'draft',
        test_passed: null,
        tested_at: null,
        published_at: null,
        created_by: principal.identityId,
        created_at: now,
      });
      const flow = (await findFlow(trx, realmId, id))!;
      const version = (await findFlowVersion(trx, realmId, id, 1))!;
      return { statusCode: 201, body: toFlowView(flow, version) };
    },
  );
}

export async function listFlows(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: {
    limit: number;
    cursor?: string | undefined;
    status?: string | undefined;
    is_active?: boolean | undefined;
  },
) {
  const realmId = requirePermission(principal, 'config:read');
  const position = decodeCursor('flows', query.cursor, ['string'] as const, invalidCursor);
  const rows = await listFlowRows(rt.db, realmId, {
    limit: query.limit,
    before: position?.[0],
    status: query.status,
    isActive: query.is_active,
  });
  return keysetPage('flows', rows, query.limit, toFlowSummary, (row) => row.id);
}

export async function getFlow(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  return readFlow(rt, requirePermission(principal, 'config:read'), id);
}

/**
 * Replaces name, description and config. A config that differs from the latest version's (by canonical hash)
 * becomes a new immutable version (latest + 1); the same config keeps the version. The active version keeps
 * running until another is published and activated. `is_active` true activates the latest version, false
 * deactivates the flow.
 */
export async function updateFlow(rt: RuntimeContext, principal: RuntimePrincipal, id: string, input: FlowInput) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const flow = await requireFlow(rt, realmId, id);
  checkNotArchived(flow);
  const plan = await compileForRealm(rt, realmId, input.config, { flowId: flow.id });
  await runWrite(rt.engine, undefined, async (trx) => {
    await lockForTransaction(trx, `flow|${flow.id}`);
    const current = await findFlow(trx, realmId, flow.id);
    if (!current) throw RuntimeErrors.notFound('Flow', id);
    checkNotArchived(current);
    const other = await findFlowByNameKey(trx, realmId, nameKey(input.name));
    if (other && other.id !== current.id)
      throw RuntimeErrors.nameTaken(`A flow named ${input.name} exists in this realm`);
    const latest = await findFlowVersion(trx, realmId, current.id, current.version);
    const now = nowIso(rt);
    let version = current.version;
    if (latest?.config_hash !== plan.hash) {
      version = current.version + 1;
      await insertFlowVersion(trx, {
        flow_id: current.id,
        version,
        realm_id: realmId,
        config: JSON.stringify(plan.config),
        config_hash: plan.hash,
        status: 'draft',
        test_passed: null,
        tested_at: null,
        published_at: null,
        created_by: principal.identityId,
        created_at: now,
      });
    }
    await updateFlowRow(trx, current.id, {
      name: input.name.trim(),
      name_key: nameKey(input.name),
      description: input.description ?? null,
      version,
      updated_at: now,
      ...(input.is_active === false ? { is_active: false } : {}),
    });
    return { statusCode: 200, body: null };
  });
  if (input.is_active === true) await activateFlow(rt, principal, flow.id, {});
  return readFlow(rt, realmId, flow.id);
}

/**
 * Deletes a flow with its versions and fixtures; 409 while it is active (deactivate or archive it first) or has
 * executions that have not finished (they run on its versions).
 */
export async function deleteFlow(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  await runWrite(rt.engine, undefined, async (trx) => {
    await lockForTransaction(trx, `flow|${flow.id}`);
    const current = await findFlow(trx, realmId, flow.id);
    if (!current) throw RuntimeErrors.notFound('Flow', id);
    if (toBoolean(current.is_active)) throw FlowErrors.active(flow.id);
    if ((await countOpenExecutions(trx, current.id)) > 0)
      throw RuntimeErrors.inUse(`Flow ${flow.id} has executions that have not finished: cancel them or let them end`);
    await deleteFlowRow(trx, current.id);
    return { statusCode: 204, body: null };
  });
  const cache = planCache(rt);
  for (const key of [...cache.keys()]) if (key.startsWith(`${realmId}|${flow.id}@`)) cache.delete(key);
}

export async function listFlowVersions(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const flow = await requireFlow(rt, realmId, id);
  const position = decodeCursor(`flow-versions|${flow.id}`, query.cursor, ['number'] as const, invalidCursor);
  const rows = await listFlowVersionRows(rt.db, flow.id, { limit: query.limit, below: position?.[0] });
  return keysetPage(`flow-versions|${flow.id}`, rows, query.limit, toVersionView, (row) => row.version);
}

/**
 * Publishes a version (default the latest): it must compile, have passed `test` over every fixture of the flow,
 * and keep the contract of the newest published version below it compatible (409 FLOW_INCOMPATIBLE otherwise).
 * Publishing does not activate; an already published version answers as is.
 */
export async function publishFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { version?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  await publishVersion(rt, flow, input.version ?? flow.version);
  return readFlow(rt, realmId, flow.id);
}

async function publishVersion(rt: RuntimeContext, flow: FlowRow, versionNumber: number): Promise<void> {
  checkNotArchived(flow);
  const version = await requireVersion(rt, flow, versionNumber);
  if (version.status === 'published') return;
  if (version.test_passed === null || !toBoolean(version.test_passed))
    throw FlowErrors.notTested(`${flow.id}@${version.version}`);
  const prior = await findPublishedVersionBelow(rt.db, flow.id, version.version);
  const previous = prior ? await loadPublishedPlan(rt, flow.realm_id, flow.id, prior.version) : undefined;
  await compileForRealm(rt, flow.realm_id, fromJsonColumn(version.config), {
    flowId: flow.id,
    version: version.version,
    ...(previous ? { previous } : {}),
  });
  await runWrite(rt.engine, undefined, async (trx) => {
    await lockForTransaction(trx, `flow|${flow.id}`);
    const current = await findFlow(trx, flow.realm_id, flow.id);
    if (!current) throw RuntimeErrors.notFound('Flow', flow.id);
    checkNotArchived(current);
    const now = nowIso(rt);
    await updateFlowVersion(trx, flow.id, version.version, { status: 'published', published_at: now });
    await updateFlowRow(trx, flow.id, {
      status: 'published',
      published_version: Math.max(current.published_version ?? 0, version.version),
      updated_at: now,
    });
    return { statusCode: 200, body: null };
  });
}

/**
 * Activates a version (default the latest): publishes it first when it is not (the publish rules apply), then it
 * is the version the flow runs; the flow becomes one of the realm's active flows (routing candidates and tools).
 */
export async function activateFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { version?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  const version = input.version ?? flow.version;
  await publishVersion(rt, flow, version);
  await setActiveVersion(rt, flow, version);
  return readFlow(rt, realmId, flow.id);
}

async function setActiveVersion(rt: RuntimeContext, flow: FlowRow, version: number) {
  await runWrite(rt.engine, undefined, async (trx) => {
    await lockForTransaction(trx, `flow|${flow.id}`);
    const current = await findFlow(trx, flow.realm_id, flow.id);
    if (!current) throw RuntimeErrors.notFound('Flow', flow.id);
    checkNotArchived(current);
    const row = await findFlowVersion(trx, flow.realm_id, flow.id, version);
    if (row?.status !== 'published') throw FlowErrors.notPublished(`${flow.id}@${version}`);
    await updateFlowRow(trx, flow.id, { is_active: true, active_version: version, updated_at: nowIso(rt) });
    return { statusCode: 200, body: null };
  });
}

/**
 * Reactivates a prior published version of an active flow: `version`, or by default the newest published version
 * below the active one. 409 when the flow is not active or has no such version.
 */
export async function rollbackFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { version?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  checkNotArchived(flow);
  if (!toBoolean(flow.is_active) || flow.active_version === null) throw FlowErrors.notActive(flow.id);
  let target: number;
  if (input.version !== undefined) {
    const row = await requireVersion(rt, flow, input.version);
    if (row.version === flow.active_version)
      throw FlowErrors.noPriorVersion(`version ${row.version} is the active version`);
    if (row.status !== 'published') throw FlowErrors.noPriorVersion(`version ${row.version} was never published`);
    target = row.version;
  } else {
    const prior = await findPublishedVersionBelow(rt.db, flow.id, flow.active_version);
    if (!prior) throw FlowErrors.noPriorVersion(`no published version below ${flow.active_version}`);
    target = prior.version;
  }
  await setActiveVersion(rt, flow, target);
  return readFlow(rt, realmId, flow.id);
}

/** Archives a flow: inactive, no longer a routing candidate or tool, and read-only (versions stay readable). */
export async function archiveFlow(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  if (flow.status !== 'archived') {
    await runWrite(rt.engine, undefined, async (trx) => {
      const now = nowIso(rt);
      await updateFlowRow(trx, flow.id, { status: 'archived', is_active: false, archived_at: now, updated_at: now });
      return { statusCode: 200, body: null };
    });
  }
  return readFlow(rt, realmId, flow.id);
}

function planSummary(plan: FlowPlan) {
  const types: Record<string, number> = {};
  for (const nodeId of plan.order) {
    const type = plan.nodes[nodeId]!.type;
    types[type] = (types[type] ?? 0) + 1;
  }
  return {
    hash: plan.hash,
    start: plan.start,
    nodes: plan.order.length,
    node_types: types,
    allowed_actions: [...plan.allowedActions],
    can_wait: plan.canWait,
    subflows: [...plan.subflowRefs],
    contract: plan.contract as unknown as Record<string, unknown>,
  };
}

/**
 * Resolves and validates a config without storing or activating anything: the body's `config`, or a stored
 * `version` (default the latest). Answers the compiled plan's summary, the tool the flow would publish, and
 * whether its contract stays compatible with the active version (else the newest published one).
 */
export async function previewFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { config?: Record<string, unknown> | undefined; version?: number | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const flow = await requireFlow(rt, realmId, id);
  if (input.config !== undefined && input.version !== undefined)
    throw RuntimeErrors.invalid('send config or version, not both');
  const version = input.config === undefined ? await requireVersion(rt, flow, input.version ?? flow.version) : null;
  const config = input.config ?? fromJsonColumn<unknown>(version!.config);
  const baseVersion = flow.active_version ?? flow.published_version;
  const base = baseVersion === null ? undefined : await loadPublishedPlan(rt, realmId, flow.id, baseVersion);
  let plan: FlowPlan;
  try {
    plan = await compileForRealm(rt, realmId, config, { flowId: flow.id });
  } catch (error) {
    if (!(error instanceof FlowRejected)) throw error;
    return {
      flow_id: flow.id,
      version: version?.version ?? null,
      valid: false,
      problems: [...error.problems],
      plan: null,
      tool: null,
      compatibility: { compared_with: baseVersion, compatible: null, problems: [] as FlowProblem[] },
    };
  }
  const changes = base ? compareContracts(base.contract, plan.contract) : [];
  const schemas = flowToolSchemas(plan);
  return {
    flow_id: flow.id,
    version: version?.version ?? null,
    valid: true,
    problems: [] as FlowProblem[],
    plan: planSummary(plan),
    tool: {
      name: flowToolName(flow.name, version?.version ?? flow.version + 1),
      input_schema: schemas.inputSchema as Record<string, unknown>,
      output_schema: schemas.outputSchema as Record<string, unknown>,
    },
    compatibility: { compared_with: base ? baseVersion : null, compatible: changes.length === 0, problems: changes },
  };
}

function checkFixture(input: FixtureInput): void {
  const expect = input.expect;
  if (
    expect.state === undefined &&
    expect.action_type === undefined &&
    expect.action === undefined &&
    expect.tool_calls === undefined
  )
    throw RuntimeErrors.invalid('expect must name at least one of state, action_type, action, tool_calls');
}

/** Adds a deterministic fixture to a flow (at most 50, unique names); it takes part in every later `test`. */
export async function createFixture(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: FixtureInput,
  idempotencyKey: unknown,
) {
  const realmId = requirePermission(principal, 'config:write');
  const key = checkIdempotencyKey(idempotencyKey, false);
  checkFixture(input);
  const flow = await requireFlow(rt, realmId, id);
  checkNotArchived(flow);
  return runWrite(
    rt.engine,
    key === undefined
      ? undefined
      : { scope: `${principal.keyId}|POST /api/v1/runtime/flows/${flow.id}/fixtures`, key, payload: input },
    async (trx) => {
      await lockForTransaction(trx, `flow|${flow.id}`);
      if ((await countFixtures(trx, flow.id)) >= MAX_FIXTURES)
        throw RuntimeErrors.limit(`A flow keeps at most ${MAX_FIXTURES} fixtures`);
      const row: FlowFixtureRow = {
        id: newId(),
        flow_id: flow.id,
        realm_id: realmId,
        name: input.name,
        input: JSON.stringify(input.input ?? {}),
        mocks: JSON.stringify(input.mocks ?? {}),
        expect: JSON.stringify(input.expect),
        created_by: principal.identityId,
        created_at: nowIso(rt),
      };
      const existing = await listFixtureRows(trx, flow.id, { limit: MAX_FIXTURES });
      if (existing.some((fixture) => fixture.name === input.name))
        throw RuntimeErrors.nameTaken(`The flow has a fixture named ${input.name}`);
      await insertFixture(trx, row);
      await clearDraftVerdicts(trx, flow.id);
      return { statusCode: 201, body: toFixtureView(row) };
    },
  );
}

export async function listFixtures(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const flow = await requireFlow(rt, realmId, id);
  const position = decodeCursor(`flow-fixtures|${flow.id}`, query.cursor, ['string'] as const, invalidCursor);
  const rows = await listFixtureRows(rt.db, flow.id, { limit: query.limit, after: position?.[0] });
  return keysetPage(`flow-fixtures|${flow.id}`, rows, query.limit, toFixtureView, (row) => row.id);
}

/**
 * Replays fixtures against a version (default the latest) with mocked capabilities only. A run over every fixture
 * records the verdict on the version (publish needs it passed); a run over `fixture_ids` only reports.
 */
export async function testFlow(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: { version?: number | undefined; fixture_ids?: string[] | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  checkNotArchived(flow);
  const version = await requireVersion(rt, flow, input.version ?? flow.version);
  const rows =
    input.fixture_ids === undefined
      ? await listFixtureRows(rt.db, flow.id, { limit: MAX_FIXTURES })
      : await findFixturesByIds(
          rt.db,
          flow.id,
          input.fixture_ids.map((fixtureId) => fixtureId.toLowerCase()),
        );
  if (input.fixture_ids !== undefined) {
    const found = new Set(rows.map((row) => row.id));
    const missing = input.fixture_ids.find((fixtureId) => !found.has(fixtureId.toLowerCase()));
    if (missing !== undefined) throw RuntimeErrors.notFound('Fixture', missing);
  }
  if (rows.length === 0) throw FlowErrors.noFixtures(flow.id);
  const plan = await compileForRealm(rt, realmId, fromJsonColumn(version.config), {
    flowId: flow.id,
    version: version.version,
  });
  const plans = await subflowPlans(rt, realmId, plan);
  const results: FixtureResult[] = [];
  for (const row of rows) {
    const view = toFixtureView(row);
    const fixture: Fixture = {
      id: view.id,
      name: view.name,
      input: view.input,
      mocks: view.mocks as FixtureMocks,
      expect: view.expect as FixtureExpect,
    };
    results.push(await runFixture(plan, fixture, plans));
  }
  const passed = results.every((result) => result.passed);
  const testedAt = nowIso(rt);
  if (input.fixture_ids === undefined)
    await runWrite(rt.engine, undefined, async (trx) => {
      await updateFlowVersion(trx, flow.id, version.version, { test_passed: passed, tested_at: testedAt });
      return { statusCode: 200, body: null };
    });
  return {
    flow_id: flow.id,
    version: version.version,
    passed,
    recorded: input.fixture_ids === undefined,
    tested_at: testedAt,
    results,
  };
}

/**
 * The publish rules applied to a config before it is stored (the configuration deploy publishes through them):
 * it compiles in the realm, keeps the contract of `previous` (the plan of the flow's newest published version, when
 * there is one: 409 FLOW_INCOMPATIBLE), and passes every one of `fixtures` (409 FLOW_NO_FIXTURES without any, FLOW_NOT_TESTED
 * when one fails; `label` names the version in the message). Answers the compiled plan.
 */
export async function checkPublishable(
  rt: RuntimeContext,
  realmId: string,
  config: unknown,
  fixtures: readonly FixtureInput[],
  options: { label: string; flowId?: string | undefined; previous?: FlowPlan | undefined },
): Promise<FlowPlan> {
  const plan = await compileForRealm(rt, realmId, config, {
    ...(options.flowId ? { flowId: options.flowId } : {}),
    ...(options.previous ? { previous: options.previous } : {}),
  });
  if (fixtures.length === 0) throw FlowErrors.noFixtures(options.label);
  const plans = await subflowPlans(rt, realmId, plan);
  for (const [index, input] of fixtures.entries()) {
    checkFixture(input);
    const fixture: Fixture = {
      id: `fixture-${index}`,
      name: input.name,
      input: input.input ?? {},
      mocks: (input.mocks ?? {}) as FixtureMocks,
      expect: input.expect as FixtureExpect,
    };
    if (!(await runFixture(plan, fixture, plans)).passed) throw FlowErrors.notTested(options.label);
  }
  return plan;
}
