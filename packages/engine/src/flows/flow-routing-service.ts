import { decodeCursor, encodeCursor, fromJsonColumn, toBoolean, toIsoString } from '@keel/core';
import { checkRealmField, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { inTransaction } from '../write.ts';
import { FlowErrors } from './flow-errors.ts';
import {
  DEFAULT_MINIMUM_CONFIDENCE,
  DEFAULT_POLICY,
  type RoutingCandidate,
  type RoutingManifest,
  type RoutingPolicy,
  routeMessage,
} from './flow-router.ts';
import {
  type FlowRoutingPolicyRow,
  findRoutingPolicy,
  findRoutingProfile,
  listRoutingProfileRows,
  newestPublishedVersions,
  routingProfilesOf,
  upsertRoutingPolicy,
  upsertRoutingProfile,
} from './flow-routing-store.ts';
import { invalidCursor, requireFlow } from './flow-service.ts';
import { findFlowVersion, listActiveFlowVersions } from './flow-store.ts';

/** Labelled messages one evaluation scores at most. */
export const MAX_EVALUATION_ITEMS = 1000;

function manifestOf(config: unknown): RoutingManifest {
  return ((config as { routing?: RoutingManifest } | null)?.routing ?? {}) as RoutingManifest;
}

function effectiveOf(manifest: RoutingManifest) {
  return {
    enabled: manifest.enabled ?? true,
    when_to_use: manifest.when_to_use ?? null,
    when_not_to_use: manifest.when_not_to_use ?? null,
    capabilities: manifest.capabilities ?? [],
    examples: manifest.examples ?? [],
    minimum_confidence: manifest.minimum_confidence ?? DEFAULT_MINIMUM_CONFIDENCE,
    priority: manifest.priority ?? 0,
  };
}

/** The routing profile of a flow beside the manifest of its routed version, and which one routing uses. */
export async function getRoutingProfile(rt: RuntimeContext, principal: RuntimePrincipal, id: string) {
  const realmId = requirePermission(principal, 'config:read');
  return routingProfileView(rt, realmId, await requireFlow(rt, realmId, id));
}

async function routingProfileView(
  rt: RuntimeContext,
  realmId: string,
  flow: { id: string; name: string; version: number; active_version: number | null },
) {
  const version = await findFlowVersion(rt.db, realmId, flow.id, flow.active_version ?? flow.version);
  const manifest = manifestOf(version ? fromJsonColumn(version.config) : null);
  const row = await findRoutingProfile(rt.db, realmId, flow.id);
  const profile = row ? fromJsonColumn<RoutingManifest>(row.profile) : null;
  return {
    flow_id: flow.id,
    name: flow.name,
    source: (profile ? 'profile' : 'manifest') as 'profile' | 'manifest',
    profile,
    manifest_version: version?.version ?? null,
    manifest,
    effective: effectiveOf(profile ?? manifest),
    updated_at: row ? toIsoString(row.updated_at) : null,
  };
}

/** Replaces the routing profile of a flow: from now on it, not the config's manifest, is what routing reads. */
export async function putRoutingProfile(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  id: string,
  input: RoutingManifest,
) {
  const realmId = requirePermission(principal, 'config:write');
  const flow = await requireFlow(rt, realmId, id);
  if (flow.status === 'archived') throw FlowErrors.archived(flow.id);
  const profile = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  await inTransaction(rt.engine, (trx) =>
    upsertRoutingProfile(trx, {
      flow_id: flow.id,
      realm_id: realmId,
      profile: JSON.stringify(profile),
      updated_by: principal.identityId,
      updated_at: nowIso(rt),
    }),
  );
  return routingProfileView(rt, realmId, flow);
}

export async function listRoutingProfiles(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  query: { limit: number; cursor?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:read');
  const position = decodeCursor('flow-routing-profiles', query.cursor, ['string'] as const, invalidCursor);
  const rows = await listRoutingProfileRows(rt.db, realmId, { limit: query.limit, after: position?.[0] });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map((row) => {
      const profile = fromJsonColumn<RoutingManifest>(row.profile);
      return {
        flow_id: row.flow_id,
        name: row.name,
        profile,
        effective: effectiveOf(profile),
        updated_at: toIsoString(row.updated_at),
      };
    }),
    next_cursor: rows.length > query.limit ? encodeCursor('flow-routing-profiles', [page.at(-1)!.flow_id]) : null,
  };
}

export function policyOf(row: FlowRoutingPolicyRow | undefined): RoutingPolicy {
  if (!row) return DEFAULT_POLICY;
  return {
    mode: row.mode as RoutingPolicy['mode'],
    compatibility_fallback: toBoolean(row.compatibility_fallback),
    fallback_flow_id: row.fallback_flow_id,
    canary_percentage: Number(row.canary_percentage),
  };
}

function policyView(realmId: string, row: FlowRoutingPolicyRow | undefined) {
  return { realm_id: realmId, ...policyOf(row), updated_at: row ? toIsoString(row.updated_at) : null };
}

export async function getRoutingPolicy(rt: RuntimeContext, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:read');
  return policyView(realmId, await findRoutingPolicy(rt.db, realmId));
}

/** Changes the realm's routing policy; fields left out keep their current value. */
export async function putRoutingPolicy(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: Partial<RoutingPolicy> & { realm_id?: string | undefined },
) {
  const realmId = requirePermission(principal, 'config:write');
  checkRealmField(principal, input.realm_id);
  const fallback = input.fallback_flow_id ? input.fallback_flow_id.toLowerCase() : input.fallback_flow_id;
  if (fallback) await requireFlow(rt, realmId, fallback);
  await inTransaction(rt.engine, async (trx) => {
    const current = policyOf(await findRoutingPolicy(trx, realmId));
    await upsertRoutingPolicy(trx, {
      realm_id: realmId,
      mode: input.mode ?? current.mode,
      compatibility_fallback: input.compatibility_fallback ?? current.compatibility_fallback,
      fallback_flow_id: fallback === undefined ? current.fallback_flow_id : fallback,
      canary_percentage:
        input.canary_percentage === undefined
          ? current.canary_percentage
          : Math.round(input.canary_percentage * 100) / 100,
      updated_by: principal.identityId,
      updated_at: nowIso(rt),
    });
  });
  return policyView(realmId, await findRoutingPolicy(rt.db, realmId));
}

/** The realm's routing candidates (its active flows, profile over manifest, with canary versions) and its policy. */
export async function routingState(rt: RuntimeContext, realmId: string) {
  const active = await listActiveFlowVersions(rt.db, realmId);
  const ids = active.map((flow) => flow.id);
  const profiles = new Map(
    (await routingProfilesOf(rt.db, realmId, ids)).map((row) => [
      row.flow_id,
      fromJsonColumn<RoutingManifest>(row.profile),
    ]),
  );
  const newest = new Map((await newestPublishedVersions(rt.db, ids)).map((row) => [row.flow_id, Number(row.version)]));
  const candidates: RoutingCandidate[] = active.map((flow) => {
    const profile = profiles.get(flow.id);
    const top = newest.get(flow.id);
    return {
      flowId: flow.id,
      name: flow.name,
      activeVersion: flow.version,
      canaryVersion: top !== undefined && top > flow.version ? top : null,
      source: profile ? 'profile' : 'manifest',
      manifest: profile ?? manifestOf(fromJsonColumn(flow.config)),
    };
  });
  return { candidates, policy: policyOf(await findRoutingPolicy(rt.db, realmId)) };
}

export interface PreviewInput {
  realm_id?: string | undefined;
  flow_id?: string | undefined;
  session_id?: string | undefined;
  subject_id?: string | undefined;
  intent?: string | undefined;
  messages?: { role: string; content: string }[] | undefined;
}

function messageOf(input: PreviewInput): string {
  if (input.intent !== undefined) return input.intent;
  const user = input.messages?.filter((message) => message.role === 'user').at(-1);
  if (!user) throw RuntimeErrors.invalid('send intent or messages with at least one user message');
  return user.content;
}

/** Which flow a message would route to, with every candidate's score and why; reads only. */
export async function previewRouting(rt: RuntimeContext, principal: RuntimePrincipal, input: PreviewInput) {
  const realmId = requirePermission(principal, 'config:read');
  checkRealmField(principal, input.realm_id);
  const message = messageOf(input);
  const { candidates, policy } = await routingState(rt, realmId);
  const canaryKey = input.session_id ?? input.subject_id;
  const decision = routeMessage(realmId, policy, candidates, {
    message,
    flowId: input.flow_id?.toLowerCase(),
    canaryKey,
  });
  return { ...decision, policy: { ...policy } };
}

export interface EvaluationInput {
  realm_id?: string | undefined;
  dataset: { message: string; expected_flow_id: string | null; subject_id?: string | undefined }[];
}

/**
 * Routes every labelled message as preview would, without an execution or any write, and answers accuracy overall
 * and per flow and the confusion matrix (rows: expected, columns: chosen; `none` where no flow was chosen).
 */
export async function evaluateRouting(rt: RuntimeContext, principal: RuntimePrincipal, input: EvaluationInput) {
  const realmId = requirePermission(principal, 'config:read');
  checkRealmField(principal, input.realm_id);
  const { candidates, policy } = await routingState(rt, realmId);
  const names = new Map(candidates.map((candidate) => [candidate.flowId, candidate.name]));
  const NONE = 'none';
  const labels = new Set<string>();
  const pairs = input.dataset.map((item, index) => {
    const expected = item.expected_flow_id === null ? NONE : item.expected_flow_id.toLowerCase();
    const decision = routeMessage(realmId, policy, candidates, { message: item.message, canaryKey: item.subject_id });
    const chosen = decision.chosen?.flow_id ?? NONE;
    labels.add(expected);
    labels.add(chosen);
    const top = [...decision.candidates].sort((a, b) => b.score - a.score)[0];
    return { index, expected, chosen, correct: expected === chosen, score: top?.score ?? 0, why: decision.why };
  });
  const ordered = [...labels].sort((a, b) => (a === NONE ? 1 : b === NONE ? -1 : a.localeCompare(b)));
  const position = new Map(ordered.map((label, i) => [label, i]));
  const matrix = ordered.map(() => ordered.map(() => 0));
  for (const pair of pairs) matrix[position.get(pair.expected)!]![position.get(pair.chosen)!]!++;
  const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);
  const perFlow = ordered.map((label, i) => {
    const support = matrix[i]!.reduce((sum, n) => sum + n, 0);
    const predicted = matrix.reduce((sum, row) => sum + row[i]!, 0);
    const correct = matrix[i]![i]!;
    return {
      flow_id: label === NONE ? null : label,
      name: label === NONE ? null : (names.get(label) ?? null),
      support,
      predicted,
      correct,
      accuracy: ratio(correct, support),
      precision: ratio(correct, predicted),
    };
  });
  const correct = pairs.filter((pair) => pair.correct).length;
  return {
    total: pairs.length,
    correct,
    accuracy: ratio(correct, pairs.length) ?? 0,
    per_flow: perFlow,
    confusion: { labels: ordered.map((label) => (label === NONE ? null : label)), matrix },
    misses: pairs
      .filter((pair) => !pair.correct)
      .slice(0, 100)
      .map((pair) => ({
        index: pair.index,
        expected_flow_id: pair.expected === NONE ? null : pair.expected,
        chosen_flow_id: pair.chosen === NONE ? null : pair.chosen,
        why: pair.why,
      })),
    policy: { ...policy },
  };
}
