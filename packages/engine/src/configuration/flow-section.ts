import { canonicalJson, type Executor, fromJsonColumn, toBoolean } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { countOpenExecutions } from '../executions/execution-store.ts';
import type { FlowPlan } from '../flows/flow-compiler.ts';
import { FlowErrors } from '../flows/flow-errors.ts';
import {
  deleteRoutingProfile,
  findRoutingPolicy,
  findRoutingProfile,
  upsertRoutingProfile,
} from '../flows/flow-routing-store.ts';
import { checkPublishable, compileForRealm, MAX_FIXTURES, nameKey } from '../flows/flow-service.ts';
import {
  deleteFixtureRows,
  deleteFlowRow,
  type FlowRow,
  findFlowVersion,
  insertFixture,
  insertFlow,
  insertFlowVersion,
  listFixtureRows,
  updateFlowRow,
  updateFlowVersion,
} from '../flows/flow-store.ts';
import { newId } from '../ids.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import type { FlowItem } from './configuration-schemas.ts';
import { about, type ConfigSection, type DeployContext, tooMany } from './configuration-sections.ts';
import { countAgentsUsingFlow, listRealmFlows } from './configuration-store.ts';

type Fixture = FlowItem['fixtures'][number];

/** Node types whose config names another item by its id (a subflow's flow, a specialist's agent): not portable. */
const ID_NODES: Record<string, string> = { subflow: 'flow_id', specialist: 'agent_id' };

/** Why a config is not portable (a node that names another item by its id), or null. */
function unportable(config: unknown): string | null {
  const nodes = (config as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) return null;
  for (const node of nodes as Array<{ id?: unknown; type?: unknown } | null>) {
    const field = typeof node?.type === 'string' ? ID_NODES[node.type] : undefined;
    if (field)
      return `node ${String(node?.id)} (${node?.type}) names another ${node?.type === 'subflow' ? 'flow' : 'agent'} by its id (${field}), which is not portable between realms`;
  }
  return null;
}

const fixtureItem = (row: { name: string; input: unknown; mocks: unknown; expect: unknown }): Fixture => ({
  name: row.name,
  input: fromJsonColumn<Record<string, unknown>>(row.input) ?? {},
  mocks: (fromJsonColumn<Fixture['mocks']>(row.mocks) ?? {}) as NonNullable<Fixture['mocks']>,
  expect: fromJsonColumn<Fixture['expect']>(row.expect),
});

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

async function configOf(db: Executor<EngineDb>, row: FlowRow, version: number | null) {
  if (version === null) return null;
  const found = await findFlowVersion(db, row.realm_id, row.id, version);
  return found ? fromJsonColumn<Record<string, unknown>>(found.config) : null;
}

/** The version a flow runs, as the bundle names it: the active one, else the newest published one. */
const runVersion = (row: FlowRow) => row.active_version ?? row.published_version;

interface PreparedFlow {
  item: FlowItem;
  /** The compiled plans of `published_config` (with the fixtures replayed) and `config`. */
  published: FlowPlan | null;
  latest: FlowPlan;
}

/**
 * Flows by name: the version they run (`published_config`, published through the normal rules: compile, contract
 * compatibility, every fixture passing), their newest config (a draft when it differs), fixtures and routing
 * profile. Version numbers stay the target realm's own: a deploy appends versions, it never rewrites one.
 */
export const flowSection: ConfigSection<FlowItem, FlowRow, PreparedFlow> = {
  name: 'flows',
  key: (item) => item.name,
  async read(db, realmId, limit) {
    const rows = await listRealmFlows(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('flows', limit);
    const items: Array<{ item: FlowItem; row: FlowRow }> = [];
    for (const row of rows) {
      const config = (await configOf(db, row, row.version)) ?? {};
      const published = await configOf(db, row, runVersion(row));
      const problem = unportable(config) ?? unportable(published);
      if (problem) throw RuntimeErrors.conflict(`flows/${row.name}: ${problem}`);
      const profile = await findRoutingProfile(db, realmId, row.id);
      const fixtures = await listFixtureRows(db, row.id, { limit: MAX_FIXTURES });
      items.push({
        row,
        item: {
          name: row.name,
          description: row.description,
          is_active: toBoolean(row.is_active),
          published_config: published,
          config,
          fixtures: fixtures.map(fixtureItem).sort(byName),
          routing_profile: profile ? fromJsonColumn<FlowItem['routing_profile']>(profile.profile) : null,
        },
      });
    }
    return items;
  },
  async prepare(ctx, item) {
    const ref = `flows/${item.name}`;
    return about(ref, async () => {
      if (item.is_active && item.published_config === null)
        throw RuntimeErrors.invalid('is_active needs a published_config');
      const names = item.fixtures.map((f) => f.name);
      if (new Set(names).size !== names.length) throw RuntimeErrors.invalid('fixtures repeat a name');
      const problem = unportable(item.config) ?? unportable(item.published_config);
      if (problem) throw RuntimeErrors.invalid(problem);
      const latest = await compileForRealm(ctx.rt, ctx.realmId, item.config);
      const fixtures = item.fixtures
        .map((f) => ({ name: f.name, input: f.input ?? {}, mocks: f.mocks ?? {}, expect: f.expect }))
        .sort(byName);
      const published =
        item.published_config === null ? null : await compileForRealm(ctx.rt, ctx.realmId, item.published_config);
      return {
        item: {
          ...item,
          name: item.name.trim(),
          config: latest.config as Record<string, unknown>,
          published_config: (published?.config as Record<string, unknown> | undefined) ?? null,
          fixtures,
        },
        published,
        latest,
      };
    });
  },
  async desired(_db, _ctx, prepared, current) {
    if (current && current.item.published_config !== null && prepared.item.published_config === null)
      throw RuntimeErrors.invalid(`flows/${prepared.item.name}: a published flow cannot become unpublished`);
    return { item: prepared.item, secret: { kind: 'none' }, secretChanged: false, missingCredential: null };
  },
  async write(trx, ctx, prepared, _desired, current) {
    const { item } = prepared;
    const ref = `flows/${item.name}`;
    let row: FlowRow;
    if (current) row = current.row;
    else {
      row = {
        id: newId(),
        realm_id: ctx.realmId,
        name: item.name,
        name_key: nameKey(item.name),
        description: item.description,
        status: 'draft',
        is_active: false,
        version: 0,
        active_version: null,
        published_version: null,
        created_by: ctx.identityId,
        created_at: ctx.now,
        updated_at: ctx.now,
        archived_at: null,
      };
      await insertFlow(trx, row);
    }
    const flow = { ...row };
    const latestHash = async () => (await findFlowVersion(trx, ctx.realmId, flow.id, flow.version))?.config_hash;
    const append = async (plan: FlowPlan, published: boolean) => {
      flow.version += 1;
      await insertFlowVersion(trx, {
        flow_id: flow.id,
        version: flow.version,
        realm_id: ctx.realmId,
        config: JSON.stringify(plan.config),
        config_hash: plan.hash,
        status: published ? 'published' : 'draft',
        test_passed: published ? true : null,
        tested_at: published ? ctx.now : null,
        published_at: published ? ctx.now : null,
        created_by: ctx.identityId,
        created_at: ctx.now,
      });
    };
    const fixturesChanged = canonicalJson(current?.item.fixtures ?? []) !== canonicalJson(item.fixtures);
    const publishedChanged =
      canonicalJson(current?.item.published_config ?? null) !== canonicalJson(item.published_config);
    if (prepared.published && publishedChanged) {
      // The normal publish rules, with the bundle's fixtures replayed against the version to publish.
      const before = await configOf(trx, row, row.published_version);
      const previous = before === null ? undefined : await compileForRealm(ctx.rt, ctx.realmId, before);
      const plan = await about(ref, () =>
        checkPublishable(ctx.rt, ctx.realmId, item.published_config, item.fixtures, {
          label: `${ref} (published_config)`,
          flowId: current ? flow.id : undefined,
          previous,
        }),
      );
      if (flow.version > 0 && (await latestHash()) === plan.hash)
        await updateFlowVersion(trx, flow.id, flow.version, {
          status: 'published',
          test_passed: true,
          tested_at: ctx.now,
          published_at: ctx.now,
        });
      else await append(plan, true);
      flow.status = 'published';
      flow.published_version = flow.version;
      flow.active_version = item.is_active ? flow.version : flow.active_version;
    } else if (item.is_active && !toBoolean(flow.is_active)) flow.active_version = runVersion(flow);
    flow.is_active = item.is_active;
    if (flow.version === 0 || (await latestHash()) !== prepared.latest.hash) await append(prepared.latest, false);
    await updateFlowRow(trx, flow.id, {
      name: item.name,
      name_key: nameKey(item.name),
      description: item.description,
      status: flow.status,
      is_active: flow.is_active,
      version: flow.version,
      active_version: flow.active_version,
      published_version: flow.published_version,
      updated_at: ctx.now,
    });
    if (fixturesChanged) {
      await deleteFixtureRows(trx, flow.id);
      for (const fixture of item.fixtures)
        await insertFixture(trx, {
          id: newId(),
          flow_id: flow.id,
          realm_id: ctx.realmId,
          name: fixture.name,
          input: JSON.stringify(fixture.input ?? {}),
          mocks: JSON.stringify(fixture.mocks ?? {}),
          expect: JSON.stringify(fixture.expect),
          created_by: ctx.identityId,
          created_at: ctx.now,
        });
    }
    if (canonicalJson(current?.item.routing_profile ?? null) !== canonicalJson(item.routing_profile)) {
      if (item.routing_profile === null) await deleteRoutingProfile(trx, flow.id);
      else
        await upsertRoutingProfile(trx, {
          flow_id: flow.id,
          realm_id: ctx.realmId,
          profile: JSON.stringify(item.routing_profile),
          updated_by: ctx.identityId,
          updated_at: ctx.now,
        });
    }
  },
  async remove(db, ctx, current, dry) {
    const row = current.row;
    await checkFlowUnused(db, ctx, row);
    if (!dry) {
      await deleteRoutingProfile(db, row.id);
      await deleteFlowRow(db, row.id);
    }
  },
};

async function checkFlowUnused(db: Executor<EngineDb>, ctx: DeployContext, row: FlowRow): Promise<void> {
  const ref = `flows/${row.name}`;
  if (toBoolean(row.is_active)) throw FlowErrors.active(ref);
  if ((await countOpenExecutions(db, row.id)) > 0)
    throw RuntimeErrors.inUse(`${ref} has executions that have not finished: keep it in the bundle`);
  const agents = await countAgentsUsingFlow(db, ctx.realmId, row.id);
  if (agents > 0) throw RuntimeErrors.inUse(`${ref} is the default flow of ${agents} agent(s): keep it in the bundle`);
  if ((await findRoutingPolicy(db, ctx.realmId))?.fallback_flow_id === row.id)
    throw RuntimeErrors.inUse(`${ref} is the fallback flow of the routing policy: keep it in the bundle`);
}
