import { fromJsonColumn, runIdempotent, toIsoString } from '@keel/core';
import type { Insertable, Selectable, Transaction } from 'kysely';
import type { GeoPrincipal } from '../auth/permissions.ts';
import type { GeoContext } from '../context.ts';
import type { GeoDb, RelationTable, TargetTable } from '../db/schema.ts';
import { GeoErrors } from '../errors.ts';
import { normalizeUuid, uuidv7 } from '../ids.ts';
import { findCycle } from './cycle.ts';
import { MAX_RELATIONS, MAX_TARGETS } from './graph-schemas.ts';
import {
  countMutations,
  deleteRelations,
  insertMutation,
  insertRelations,
  insertTargets,
  listMutations,
  loadRelations,
  loadTargets,
  lockWorkspaceGraph,
  updateTarget,
} from './graph-store.ts';

interface TargetInput {
  key: string;
  name: string;
  kind?: string | undefined;
  url?: string | undefined;
  aliases?: string[] | undefined;
  attributes?: Record<string, unknown> | undefined;
}
interface RelationInput {
  from: string;
  to: string;
  kind?: string | undefined;
}
export type GraphMutation =
  | {
      operation: 'import';
      workspaceId: string;
      projectId?: string | undefined;
      targets: TargetInput[];
      relations: RelationInput[];
    }
  | {
      operation: 'merge';
      workspaceId: string;
      projectId?: string | undefined;
      canonicalKey: string;
      duplicateKeys: string[];
    };

const MAX_HISTORY = 1000;

function projectKey(projectId: string | undefined): string {
  return projectId ? normalizeUuid(projectId) : '';
}

/** Reads the graph: canonical targets, relations by key, and optionally the immutable mutation history. */
export async function readGraph(
  ctx: GeoContext,
  query: { workspaceId: string; projectId?: string | undefined; includeHistory: boolean },
) {
  const project = projectKey(query.projectId);
  const [targets, relations, version] = await Promise.all([
    loadTargets(ctx.db, query.workspaceId, project),
    loadRelations(ctx.db, query.workspaceId, project),
    countMutations(ctx.db, query.workspaceId, project),
  ]);
  const keyOf = new Map(targets.map((t) => [t.id, t.target_key]));
  const graph = {
    workspaceId: query.workspaceId,
    projectId: project === '' ? null : project,
    version,
    targets: targets.filter((t) => t.merged_into === null).map(mapTarget),
    relations: relations.map((r) => ({
      id: r.id,
      from: keyOf.get(r.from_target_id) ?? '',
      to: keyOf.get(r.to_target_id) ?? '',
      fromId: r.from_target_id,
      toId: r.to_target_id,
      kind: r.kind,
      createdAt: toIsoString(r.created_at),
    })),
  };
  if (!query.includeHistory) return graph;
  const history = await listMutations(ctx.db, query.workspaceId, project, MAX_HISTORY);
  return {
    ...graph,
    history: history.map((h) => ({
      mutationId: h.id,
      operation: h.operation,
      keyId: h.key_id,
      summary: fromJsonColumn<Record<string, unknown>>(h.summary),
      createdAt: toIsoString(h.created_at),
    })),
  };
}

function mapTarget(row: Selectable<TargetTable>) {
  return {
    id: row.id,
    key: row.target_key,
    name: row.name,
    kind: row.kind,
    url: row.url,
    aliases: fromJsonColumn<string[]>(row.aliases),
    attributes: fromJsonColumn<Record<string, unknown>>(row.attributes),
    version: Number(row.version),
    createdAt: toIsoString(row.created_at),
    updatedAt: toIsoString(row.updated_at),
  };
}

/** The graph in memory: canonical targets by id and every key or alias resolving to its canonical id. */
class GraphState {
  readonly byId = new Map<string, Selectable<TargetTable> | Insertable<TargetTable>>();
  readonly resolve = new Map<string, string>();
  readonly keyOf = new Map<string, string>();

  constructor(targets: Selectable<TargetTable>[]) {
    const canonical = targets.filter((t) => t.merged_into === null);
    for (const t of canonical) {
      this.byId.set(t.id, t);
      this.keyOf.set(t.id, t.target_key);
      this.resolve.set(t.target_key, t.id);
      for (const alias of fromJsonColumn<string[]>(t.aliases)) this.resolve.set(alias, t.id);
    }
  }

  /** Names the cycle by target keys, `a → b → a`, capped in length. */
  describe(cycle: string[]): string {
    const keys = cycle.map((id) => this.keyOf.get(id) ?? id);
    return keys.length > 21 ? `${keys.slice(0, 20).join(' → ')} → … (${keys.length - 1} targets)` : keys.join(' → ');
  }

  /** Throws a 422 naming a cycle if the relations form one. */
  checkAcyclic(edges: Iterable<{ from: string; to: string }>): void {
    const ids = [...this.byId.keys()];
    const index = new Map(ids.map((id, i) => [id, i]));
    const adjacency: number[][] = ids.map(() => []);
    for (const edge of edges) adjacency[index.get(edge.from)!]!.push(index.get(edge.to)!);
    const cycle = findCycle(ids.length, adjacency);
    if (cycle) {
      const names = cycle.map((i) => ids[i]!);
      const text = this.describe(names);
      throw Object.assign(GeoErrors.graphCycle(text), { details: [{ path: 'relations', message: `cycle: ${text}` }] });
    }
  }
}

const edgeKey = (from: string, to: string, kind: string) => `${from}\u0000${to}\u0000${kind}`;

async function applyImport(
  trx: Transaction<GeoDb>,
  mutation: Extract<GraphMutation, { operation: 'import' }>,
  project: string,
  now: string,
) {
  const existingTargets = await loadTargets(trx, mutation.workspaceId, project);
  const existingRelations = await loadRelations(trx, mutation.workspaceId, project);
  const state = new GraphState(existingTargets);
  const invalid = (message: string, path: string) =>
    Object.assign(GeoErrors.graphInvalid(message), { details: [{ path, message }] });

  const seen = new Set<string>();
  const newTargets: Insertable<TargetTable>[] = [];
  let updated = 0;
  const updates: { id: string; changes: Parameters<typeof updateTarget>[2] }[] = [];
  mutation.targets.forEach((input, i) => {
    if (seen.has(input.key))
      throw invalid(
        `targets[${i}]: the key ${JSON.stringify(input.key)} appears twice in the import`,
        `targets/${i}/key`,
      );
    seen.add(input.key);
    const aliases = [...new Set(input.aliases ?? [])];
    const existingId = state.resolve.get(input.key);
    for (const alias of aliases) {
      const owner = state.resolve.get(alias);
      if (seen.has(alias) || (owner !== undefined && owner !== existingId)) {
        throw invalid(
          `targets[${i}]: the alias ${JSON.stringify(alias)} is already the key or alias of another target`,
          `targets/${i}/aliases`,
        );
      }
    }
    if (existingId) {
      const row = state.byId.get(existingId) as Selectable<TargetTable>;
      const mergedAliases = [...new Set([...fromJsonColumn<string[]>(row.aliases), ...aliases])];
      const next = {
        name: input.name,
        kind: input.kind ?? row.kind,
        url: input.url ?? row.url,
        aliases: JSON.stringify(mergedAliases),
        attributes: input.attributes
          ? JSON.stringify(input.attributes)
          : typeof row.attributes === 'string'
            ? row.attributes
            : JSON.stringify(row.attributes),
      };
      const current = {
        name: row.name,
        kind: row.kind,
        url: row.url,
        aliases: JSON.stringify(fromJsonColumn(row.aliases)),
        attributes: JSON.stringify(fromJsonColumn(row.attributes)),
      };
      if (JSON.stringify(next) !== JSON.stringify(current)) {
        updated++;
        updates.push({ id: existingId, changes: { ...next, version: Number(row.version) + 1, updated_at: now } });
      }
      for (const alias of aliases) state.resolve.set(alias, existingId);
      return;
    }
    const id = uuidv7();
    const row: Insertable<TargetTable> = {
      id,
      workspace_id: mutation.workspaceId,
      project_id: project,
      target_key: input.key,
      name: input.name,
      kind: input.kind ?? 'entity',
      url: input.url ?? null,
      aliases: JSON.stringify(aliases),
      attributes: JSON.stringify(input.attributes ?? {}),
      merged_into: null,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    newTargets.push(row);
    state.byId.set(id, row);
    state.keyOf.set(id, input.key);
    state.resolve.set(input.key, id);
    for (const alias of aliases) state.resolve.set(alias, id);
  });
  if (state.byId.size > MAX_TARGETS)
    throw GeoErrors.graphTooLarge(
      `A graph holds at most ${MAX_TARGETS} targets (this import would make ${state.byId.size})`,
    );

  const edges = new Map<string, { from: string; to: string; kind: string }>();
  for (const r of existingRelations)
    edges.set(edgeKey(r.from_target_id, r.to_target_id, r.kind), {
      from: r.from_target_id,
      to: r.to_target_id,
      kind: r.kind,
    });
  const newRelations: Insertable<RelationTable>[] = [];
  mutation.relations.forEach((input, i) => {
    const from = state.resolve.get(input.from);
    if (!from)
      throw invalid(`relations[${i}].from names no target: ${JSON.stringify(input.from)}`, `relations/${i}/from`);
    const to = state.resolve.get(input.to);
    if (!to) throw invalid(`relations[${i}].to names no target: ${JSON.stringify(input.to)}`, `relations/${i}/to`);
    const kind = input.kind ?? 'related_to';
    const key = edgeKey(from, to, kind);
    if (edges.has(key)) return;
    edges.set(key, { from, to, kind });
    newRelations.push({
      id: uuidv7(),
      workspace_id: mutation.workspaceId,
      project_id: project,
      from_target_id: from,
      to_target_id: to,
      kind,
      created_at: now,
    });
  });
  if (edges.size > MAX_RELATIONS)
    throw GeoErrors.graphTooLarge(
      `A graph holds at most ${MAX_RELATIONS} relations (this import would make ${edges.size})`,
    );
  state.checkAcyclic(edges.values());

  await insertTargets(trx, newTargets);
  for (const update of updates) await updateTarget(trx, update.id, update.changes);
  await insertRelations(trx, newRelations);
  return {
    targetsCreated: newTargets.length,
    targetsUpdated: updated,
    relationsCreated: newRelations.length,
    relationsRepointed: 0,
    merged: [] as string[],
    canonicalKey: null,
  };
}

async function applyMerge(
  trx: Transaction<GeoDb>,
  mutation: Extract<GraphMutation, { operation: 'merge' }>,
  project: string,
  now: string,
) {
  const existingTargets = await loadTargets(trx, mutation.workspaceId, project);
  const existingRelations = await loadRelations(trx, mutation.workspaceId, project);
  const state = new GraphState(existingTargets);
  const invalid = (message: string, path: string) =>
    Object.assign(GeoErrors.graphInvalid(message), { details: [{ path, message }] });
  const canonicalId = state.resolve.get(mutation.canonicalKey);
  if (!canonicalId)
    throw invalid(`canonicalKey names no target: ${JSON.stringify(mutation.canonicalKey)}`, 'canonicalKey');
  const duplicates = new Map<string, string>();
  mutation.duplicateKeys.forEach((key, i) => {
    const id = state.resolve.get(key);
    if (!id) throw invalid(`duplicateKeys[${i}] names no target: ${JSON.stringify(key)}`, `duplicateKeys/${i}`);
    if (id === canonicalId) throw invalid(`duplicateKeys[${i}] is the canonical target itself`, `duplicateKeys/${i}`);
    duplicates.set(id, key);
  });

  // Re-point every relation touching a duplicate; drop the self-loops and duplicate edges that creates.
  const canonicalOf = (id: string) => (duplicates.has(id) ? canonicalId : id);
  const isTouched = (r: { from_target_id: string; to_target_id: string }) =>
    duplicates.has(r.from_target_id) || duplicates.has(r.to_target_id);
  const keep = new Map<string, { from: string; to: string; kind: string }>();
  for (const r of existingRelations) {
    if (!isTouched(r))
      keep.set(edgeKey(r.from_target_id, r.to_target_id, r.kind), {
        from: r.from_target_id,
        to: r.to_target_id,
        kind: r.kind,
      });
  }
  const removed: string[] = [];
  const added: Insertable<RelationTable>[] = [];
  for (const r of existingRelations) {
    if (!isTouched(r)) continue;
    removed.push(r.id);
    const from = canonicalOf(r.from_target_id);
    const to = canonicalOf(r.to_target_id);
    const key = edgeKey(from, to, r.kind);
    if (from === to || keep.has(key)) continue;
    keep.set(key, { from, to, kind: r.kind });
    added.push({
      id: uuidv7(),
      workspace_id: mutation.workspaceId,
      project_id: project,
      from_target_id: from,
      to_target_id: to,
      kind: r.kind,
      created_at: now,
    });
  }
  for (const id of duplicates.keys()) state.byId.delete(id);
  state.checkAcyclic(keep.values());

  const canonical = state.byId.get(canonicalId) as Selectable<TargetTable>;
  const aliases = new Set(fromJsonColumn<string[]>(canonical.aliases));
  for (const target of existingTargets) {
    if (!duplicates.has(target.id)) continue;
    aliases.add(target.target_key);
    for (const alias of fromJsonColumn<string[]>(target.aliases)) aliases.add(alias);
    await updateTarget(trx, target.id, {
      merged_into: canonicalId,
      version: Number(target.version) + 1,
      updated_at: now,
    });
  }
  await updateTarget(trx, canonicalId, {
    aliases: JSON.stringify([...aliases]),
    version: Number(canonical.version) + 1,
    updated_at: now,
  });
  await deleteRelations(trx, removed);
  await insertRelations(trx, added);
  return {
    targetsCreated: 0,
    targetsUpdated: duplicates.size + 1,
    relationsCreated: 0,
    relationsRepointed: removed.length,
    merged: [...duplicates.values()],
    canonicalKey: mutation.canonicalKey,
  };
}

/**
 * Applies an import or a merge as one transaction under its Idempotency-Key (scope: tenant + route): the same key
 * and body replays the first receipt, a different body is a 409, two concurrent first uses produce one mutation.
 * An invalid or cyclic result is a 422 naming the problem (the cycle by target keys); nothing is written then.
 * Every applied mutation is an immutable history entry.
 */
export async function mutateGraph(
  ctx: GeoContext,
  principal: GeoPrincipal,
  mutation: GraphMutation,
  idempotencyKey: string,
  rawBody: unknown,
) {
  const project = projectKey(mutation.projectId);
  return runIdempotent(
    ctx.db,
    {
      scope: `${principal.tenantId}|POST /api/v1/geo/target-graph`,
      key: idempotencyKey,
      payload: rawBody,
    },
    async (trx) => {
      await lockWorkspaceGraph(trx, mutation.workspaceId);
      const now = ctx.now().toISOString();
      const applied =
        mutation.operation === 'import'
          ? await applyImport(trx, mutation, project, now)
          : await applyMerge(trx, mutation, project, now);
      const mutationId = uuidv7();
      const receipt = {
        mutationId,
        operation: mutation.operation,
        workspaceId: mutation.workspaceId,
        projectId: project === '' ? null : project,
        ...applied,
        graphVersion: 0,
        createdAt: now,
      };
      await insertMutation(trx, {
        id: mutationId,
        workspace_id: mutation.workspaceId,
        project_id: project,
        operation: mutation.operation,
        key_id: principal.keyId,
        summary: JSON.stringify({ ...applied, idempotencyKey }),
        created_at: now,
      });
      receipt.graphVersion = await countMutations(trx, mutation.workspaceId, project);
      return { statusCode: 200, body: receipt };
    },
  );
}
