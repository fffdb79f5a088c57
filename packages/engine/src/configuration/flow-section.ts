import { canonicalJson, type Executor, fromJsonColumn, toBoolean } from '@keel/core';
import type { Transaction } from 'kysely';
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
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { isPlanned, type RealmNames, realmNames, resolveName } from './configuration-refs.ts';
import type { FlowItem } from './configuration-schemas.ts';
import { about, type ConfigSection, type Current, type DeployContext, tooMany } from './configuration-sections.ts';
import { countAgentsUsingFlow, listRealmFlows } from './configuration-store.ts';

type Fixture = FlowItem['fixtures'][number];

/** Node types that name another item: the field of a stored config (an id) and of a bundle (a name). */
const NAMED_NODES: Record<string, { id: string; name: string; section: 'flows' | 'agents'; what: string }> = {
  subflow: { id: 'flow_id', name: 'flow', section: 'flows', what: "a flow's name" },
  specialist: { id: 'agent_id', name: 'agent', section: 'agents', what: "an agent's username" },
};

type Config = Record<string, unknown>;
type ConfigNode = Record<string, unknown>;

const nodesOf = (config: unknown): ConfigNode[] | null => {
  const nodes = (config as { nodes?: unknown } | null)?.nodes;
  return Array.isArray(nodes) ? (nodes as ConfigNode[]) : null;
};
const namedKind = (node: ConfigNode | null) =>
  typeof node?.type === 'string' && Object.hasOwn(NAMED_NODES, node.type) ? NAMED_NODES[node.type]! : undefined;

/** Whether a config has nodes that name other items (subflow and specialist nodes). */
const namesItems = (config: unknown) => (nodesOf(config) ?? []).some((node) => namedKind(node) !== undefined);

/** Why a bundle config's named nodes are not portable (one names its item by id, or by no name), or null. */
function unportable(config: unknown): string | null {
  for (const node of nodesOf(config) ?? []) {
    const kind = namedKind(node);
    if (!kind) continue;
    const at = `node ${String(node.id)} (${String(node.type)})`;
    if (Object.hasOwn(node, kind.id))
      return `${at} names another ${kind.section === 'flows' ? 'flow' : 'agent'} by its id (${kind.id}), which is not portable between realms: name it by \`${kind.name}\` (${kind.what})`;
    if (typeof node[kind.name] !== 'string' || (node[kind.name] as string).length === 0)
      return `${at} needs \`${kind.name}\` (${kind.what})`;
  }
  return null;
}

/** The names by id a config translates with (a realm's, or the ones a deploy resolved). */
type NameMaps = Pick<RealmNames, 'flows' | 'agents'>;

/**
 * A config with the ids of its named nodes replaced by names (`flow_id` → `flow`, `agent_id` → `agent`); `missing`
 * answers the error for an id `names` lacks.
 */
function withNames(config: Config, names: NameMaps, missing: (node: ConfigNode) => Error): Config {
  const nodes = nodesOf(config);
  if (!nodes) return config;
  return {
    ...config,
    nodes: nodes.map((node) => {
      const kind = namedKind(node);
      if (!kind) return node;
      const { [kind.id]: id, ...rest } = node;
      const name = typeof id === 'string' ? names[kind.section].get(id.toLowerCase()) : undefined;
      if (name === undefined) throw missing(node);
      return { ...rest, [kind.name]: name };
    }),
  };
}

/** A stored config as a bundle carries it; a node naming a flow or agent the realm no longer has is a 409. */
function exportedConfig(config: Config, names: RealmNames, ref: string): Config {
  return withNames(config, names, (node) =>
    RuntimeErrors.conflict(
      `${ref}: node ${String(node.id)} (${String(node.type)}) names a ${node.type === 'subflow' ? 'flow' : 'agent'} that is not in the realm, so a bundle cannot name it`,
    ),
  );
}

/** The flow names a bundle item's configs run as subflows (lower case). */
function subflowNames(item: FlowItem): string[] {
  const names: string[] = [];
  for (const config of [item.config, item.published_config])
    for (const node of nodesOf(config) ?? [])
      if (node?.type === 'subflow' && typeof node.flow === 'string') names.push(nameKey(node.flow));
  return names;
}

/**
 * A runtime context whose database and write path are `db` (a deploy's transaction: what it wrote is visible, and a
 * service's own write joins it instead of committing on its own).
 */
const boundContexts = new WeakMap<object, RuntimeContext>();
export function runtimeOn(rt: RuntimeContext, db: Executor<EngineDb>): RuntimeContext {
  let bound = boundContexts.get(db);
  if (!bound) {
    const trx = db as Transaction<EngineDb>;
    const writes = { run: <T>(work: (t: Transaction<EngineDb>) => Promise<T>) => work(trx) };
    bound = { ...rt, db: trx, engine: { ...rt.engine, db: trx, writes, catalogActivity: undefined } };
    boundContexts.set(db, bound);
  }
  return bound;
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

interface Compiled {
  /** The item with its configs as the compiler normalizes them (names kept). */
  item: FlowItem;
  /** The plans of `published_config` and `config`, with the target realm's ids. */
  published: FlowPlan | null;
  latest: FlowPlan;
}

interface PreparedFlow {
  item: FlowItem;
  /** Compiled before the transaction: configs without named nodes. */
  early: Compiled | undefined;
  /** Compiled by `desired` (in the deploy's transaction, once names resolve); undefined in a dry run that cannot. */
  compiled: Compiled | undefined;
}

async function compileItem(
  rt: RuntimeContext,
  realmId: string,
  item: FlowItem,
  configs: { config: Config; published: Config | null },
  names: (config: Config) => Config,
): Promise<Compiled> {
  const latest = await compileForRealm(rt, realmId, configs.config);
  const published = configs.published === null ? null : await compileForRealm(rt, realmId, configs.published);
  return {
    item: {
      ...item,
      config: names(latest.config as Config),
      published_config: published === null ? null : names(published.config as Config),
    },
    published,
    latest,
  };
}

/**
 * Compiles an item whose nodes name flows and agents: the names resolve to the target realm's ids (`db`: the
 * deploy's transaction, where the agents and the subflows ordered before it are written), and every pinned subflow
 * version must be a published version there. Undefined in a dry run when a name is one the deploy would create.
 */
async function compileNamed(db: Executor<EngineDb>, ctx: DeployContext, item: FlowItem): Promise<Compiled | undefined> {
  const ref = `flows/${item.name}`;
  const names = await realmNames(db, ctx.realmId);
  const back: NameMaps = { flows: new Map(), agents: new Map() };
  let pending = false;
  const resolve = async (config: Config | null): Promise<Config | null> => {
    const nodes = nodesOf(config);
    if (config === null || !nodes) return config;
    const resolved: ConfigNode[] = [];
    for (const node of nodes) {
      const kind = namedKind(node);
      if (!kind) {
        resolved.push(node);
        continue;
      }
      const { [kind.name]: name, ...rest } = node as ConfigNode & Record<string, string>;
      const id = resolveName(ctx, names, ref, kind.section, name!, name!, true);
      back[kind.section].set(id, name!);
      resolved.push({ ...rest, [kind.id]: id });
      if (kind.section !== 'flows') {
        if (isPlanned(id)) pending = true;
        continue;
      }
      const version = node.version;
      const found = isPlanned(id) ? undefined : await findFlowVersion(db, ctx.realmId, id, Number(version));
      if (found?.status === 'published') continue;
      if (ctx.dry && ctx.planned.get('flows')?.has(nameKey(name!))) pending = true;
      else
        throw RuntimeErrors.invalid(
          `${ref}: node ${String(node.id)} pins flow ${JSON.stringify(name)} version ${String(version)}, which is not a published version of that flow in this realm after the deploy`,
        );
    }
    return { ...config, nodes: resolved };
  };
  const config = (await resolve(item.config))!;
  const published = await resolve(item.published_config);
  if (pending) return undefined;
  const rt = runtimeOn(ctx.rt, db);
  return about(ref, () =>
    compileItem(rt, ctx.realmId, item, { config, published }, (c) =>
      withNames(c, back, () => RuntimeErrors.invalid(`${ref}: a node changed its reference while compiling`)),
    ),
  );
}

/** The number `published_config` has in the target once the item is written (see FlowItem.published_version). */
async function publishedVersion(
  db: Executor<EngineDb>,
  ctx: DeployContext,
  item: FlowItem,
  compiled: Compiled | undefined,
  current: Current<FlowItem, FlowRow> | undefined,
): Promise<number | null> {
  if (item.published_config === null) return null;
  if (!current) return item.published_version ?? 1;
  if (canonicalJson(current.item.published_config) === canonicalJson(item.published_config))
    return current.item.published_version ?? null;
  const row = current.row;
  const latest = await findFlowVersion(db, ctx.realmId, row.id, row.version);
  return compiled?.published && latest?.config_hash === compiled.published.hash ? row.version : row.version + 1;
}

/**
 * Flows by name: the version they run (`published_config`, published through the normal rules: compile, contract
 * compatibility, every fixture passing), their newest config (a draft when it differs), fixtures and routing
 * profile. Subflow and specialist nodes name their flow (with the pinned version) and agent by name. Version
 * numbers stay the target realm's own: a deploy appends versions, it never rewrites one — except that a flow it
 * creates numbers its published version as the bundle says (`published_version`), so subflow pins stay true.
 */
export const flowSection: ConfigSection<FlowItem, FlowRow, PreparedFlow> = {
  name: 'flows',
  key: (item) => item.name,
  order(items) {
    // A flow after the flows it runs as subflows (a cycle keeps the bundle's order, and fails on its pin).
    const byKey = new Map(items.map((entry) => [nameKey(entry.item.item.name), entry]));
    const sorted: typeof items = [];
    const seen = new Set<string>();
    const visit = (key: string) => {
      const entry = byKey.get(key);
      if (!entry || seen.has(key)) return;
      seen.add(key);
      for (const sub of subflowNames(entry.item.item)) visit(sub);
      sorted.push(entry);
    };
    for (const entry of items) visit(nameKey(entry.item.item.name));
    return sorted;
  },
  async read(db, realmId, limit) {
    const rows = await listRealmFlows(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('flows', limit);
    const names = await realmNames(db, realmId);
    const items: Array<{ item: FlowItem; row: FlowRow }> = [];
    for (const row of rows) {
      const ref = `flows/${row.name}`;
      const config = exportedConfig((await configOf(db, row, row.version)) ?? {}, names, ref);
      const stored = await configOf(db, row, runVersion(row));
      const published = stored === null ? null : exportedConfig(stored, names, ref);
      const profile = await findRoutingProfile(db, realmId, row.id);
      const fixtures = await listFixtureRows(db, row.id, { limit: MAX_FIXTURES });
      items.push({
        row,
        item: {
          name: row.name,
          description: row.description,
          is_active: toBoolean(row.is_active),
          published_version: published === null ? null : runVersion(row),
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
      if ((item.published_version ?? null) !== null && item.published_config === null)
        throw RuntimeErrors.invalid('published_version needs a published_config');
      const names = item.fixtures.map((f) => f.name);
      if (new Set(names).size !== names.length) throw RuntimeErrors.invalid('fixtures repeat a name');
      const problem = unportable(item.config) ?? unportable(item.published_config);
      if (problem) throw RuntimeErrors.invalid(problem);
      const fixtures = item.fixtures
        .map((f) => ({ name: f.name, input: f.input ?? {}, mocks: f.mocks ?? {}, expect: f.expect }))
        .sort(byName);
      const prepared = { ...item, name: item.name.trim(), fixtures };
      // Names of flows and agents resolve in the transaction (the deploy may create them); the rest compiles now.
      const early =
        namesItems(item.config) || namesItems(item.published_config)
          ? undefined
          : await compileItem(
              ctx.rt,
              ctx.realmId,
              prepared,
              { config: item.config, published: item.published_config },
              (c) => c,
            );
      return { item: early?.item ?? prepared, early, compiled: early };
    });
  },
  async desired(db, ctx, prepared, current) {
    if (current && current.item.published_config !== null && prepared.item.published_config === null)
      throw RuntimeErrors.invalid(`flows/${prepared.item.name}: a published flow cannot become unpublished`);
    // Recompiled on each attempt of the transaction: the ids a name resolves to are the transaction's own.
    prepared.compiled = prepared.early ?? (await compileNamed(db, ctx, prepared.item));
    const item = prepared.compiled?.item ?? prepared.item;
    const published_version = await publishedVersion(db, ctx, item, prepared.compiled, current);
    return {
      item: { ...item, published_version },
      secret: { kind: 'none' },
      secretChanged: false,
      missingCredential: null,
    };
  },
  async write(trx, ctx, prepared, desired, current) {
    const compiled = prepared.compiled!;
    const item = desired.item;
    const rt = runtimeOn(ctx.rt, trx);
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
    if (compiled.published && publishedChanged) {
      // The normal publish rules, with the bundle's fixtures replayed against the version to publish.
      const before = await configOf(trx, row, row.published_version);
      const previous = before === null ? undefined : await compileForRealm(rt, ctx.realmId, before);
      const plan = await about(ref, () =>
        checkPublishable(rt, ctx.realmId, compiled.published!.config, item.fixtures, {
          label: `${ref} (published_config)`,
          flowId: current ? flow.id : undefined,
          previous,
        }),
      );
      // A flow this deploy creates numbers its published version as the bundle does (subflow pins name it).
      if (!current) flow.version = (item.published_version ?? 1) - 1;
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
    if (flow.version === 0 || (await latestHash()) !== compiled.latest.hash) await append(compiled.latest, false);
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
