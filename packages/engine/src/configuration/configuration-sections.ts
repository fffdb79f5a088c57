import { canonicalJson, type Executor, fromJsonColumn, toBoolean } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import type { Permission, RuntimePrincipal } from '../identity/roles.ts';
import { newId } from '../ids.ts';
import { checkTemplate } from '../prompts/prompt-service.ts';
import {
  countAgentsUsingPrompt,
  countAgentsUsingPromptKey,
  deletePromptRow,
  insertPrompt,
  type PromptRow,
  updatePromptRow,
} from '../prompts/prompt-store.ts';
import { providerFields, toProviderView } from '../providers/provider-service.ts';
import {
  clearOtherDefaultProviders,
  countAgentsUsingProvider,
  deleteProviderRow,
  insertProvider,
  type ProviderRow,
  updateProviderRow,
} from '../providers/provider-store.ts';
import { findTemplate } from '../providers/provider-templates.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { toolRuntimeOf } from '../toolservers/tool-runtime-registry.ts';
import {
  checkedProfile,
  checkServerUrl,
  loadRuleSet,
  profileView,
  serverType,
  UNPROBED_SERVER,
} from '../toolservers/toolserver-service.ts';
import {
  deleteServerRow,
  demoteCredentials,
  findCredential,
  insertCredential,
  insertServer,
  listAgentServerLists,
  nextCredentialVersion,
  type ServerRow,
  updateServer,
} from '../toolservers/toolserver-store.ts';
import { BUNDLE_LIMITS, type PromptItem, type ProviderItem, type ToolServerItem } from './configuration-schemas.ts';
import { listRealmPrompts, listRealmProviders, listRealmToolServers } from './configuration-store.ts';

/** What a deploy knows while it plans and writes: the realm, the caller, the clock and the supplied credentials. */
export interface DeployContext {
  rt: RuntimeContext;
  realmId: string;
  identityId: string;
  principal: RuntimePrincipal;
  now: string;
  /** Raw secrets by reference (`<section>/<name>`); sealed on write, never stored or answered in clear. */
  credentials: Readonly<Record<string, string>>;
  /** A dry run: nothing is written, so a name the bundle itself creates is not in the realm yet. */
  dry: boolean;
  /** The keys of every item the bundle names, by section (references to them resolve in a dry run). */
  planned: ReadonlyMap<SectionName, ReadonlySet<string>>;
  /**
   * Writes that wait for a later section (an agent's default flow the same deploy creates: agents are written
   * before the flows that name them as specialists). A deploy runs them, in the same transaction, after every
   * section's writes and before the prunes.
   */
  deferred: Array<(trx: Executor<EngineDb>) => Promise<void>>;
}

/** The sections of a bundle, in deploy order. */
export const SECTION_NAMES = [
  'providers',
  'prompts',
  'tool_servers',
  'agents',
  'flows',
  'flow_triggers',
  'tool_routing',
  'flow_routing',
  'governance',
  'runtime_webhooks',
  'integration_clients',
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

/** The key of the one item of a section that is one object for the realm (`single`). */
export const REALM_KEY = 'realm';

/** An item of the target realm as the exporter sees it, with the row it came from. */
export interface Current<Item, Row> {
  item: Item;
  row: Row;
}

/** What deploying an item does to its secret: keep the stored one, store the supplied one, or have none. */
export type SecretPlan = { kind: 'keep' } | { kind: 'set'; secret: string } | { kind: 'none' };

/** The item as the deploy leaves it, and whether its credential is missing (then it is deployed inactive). */
export interface Desired<Item> {
  item: Item;
  secret: SecretPlan;
  /** The stored secret differs from the supplied one (a rotation shows as a `credential` change). */
  secretChanged: boolean;
  missingCredential: string | null;
}

/**
 * One area of the portable configuration. `read` exports the realm's items (the diff compares the bundle with this
 * very export, so a re-deployed bundle is a no-op and an export → deploy → export round trip is identical);
 * `prepare` validates a bundle item outside the transaction (DNS checks); `desired` decides, in the transaction,
 * what the item becomes; `write` stores it.
 */
export interface ConfigSection<Item, Row, Prepared> {
  name: SectionName;
  /** The section is one object for the whole realm (its one item is keyed `realm`; `read` answers exactly one). */
  single?: true;
  /** The permission writing a change of this section needs, when it is more than config:write. */
  permission?: Permission;
  key(item: Item): string;
  /** The order the section's items are written in, when one item needs another written first (default: as given). */
  order?<T extends { item: Prepared }>(items: T[]): T[];
  read(db: Executor<EngineDb>, realmId: string, limit: number): Promise<Current<Item, Row>[]>;
  prepare(ctx: DeployContext, item: Item): Promise<Prepared>;
  desired(
    db: Executor<EngineDb>,
    ctx: DeployContext,
    prepared: Prepared,
    current: Current<Item, Row> | undefined,
  ): Promise<Desired<Item>>;
  write(
    trx: Executor<EngineDb>,
    ctx: DeployContext,
    prepared: Prepared,
    desired: Desired<Item>,
    current: Current<Item, Row> | undefined,
  ): Promise<void>;
  /**
   * With `prune`, for an item of the realm the bundle does not name: refuses (409) when something still uses it,
   * then deletes it unless `dry`.
   */
  remove(trx: Executor<EngineDb>, ctx: DeployContext, current: Current<Item, Row>, dry: boolean): Promise<void>;
  /** After the commit, for each item that was written or deleted (`current`: as it was; caches of this process). */
  committed?(rt: RuntimeContext, realmId: string, current: Current<Item, Row> | undefined): Promise<void>;
}

/** Runs `check`; a 400 it throws becomes RUNTIME_INVALID_REQUEST with the item it is about before the message. */
export async function about<T>(ref: string, check: () => Promise<T> | T): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 400)
      throw RuntimeErrors.invalid(`${ref}: ${(error as Error).message}`);
    throw error;
  }
}

/** The secret plan of an item that needs `credential`, given whether the target stores one and what it is. */
export function planSecret<Item extends { credential: 'api_key' | null; is_active: boolean }>(
  ctx: DeployContext,
  ref: string,
  item: Item,
  stored: string | null,
): Desired<Item> {
  if (item.credential === null)
    return { item, secret: { kind: 'none' }, secretChanged: false, missingCredential: null };
  const supplied = ctx.credentials[ref];
  if (supplied !== undefined)
    return {
      item,
      secret: { kind: 'set', secret: supplied },
      secretChanged: stored !== null && stored !== supplied,
      missingCredential: null,
    };
  if (stored !== null) return { item, secret: { kind: 'keep' }, secretChanged: false, missingCredential: null };
  return {
    item: { ...item, credential: null, is_active: false },
    secret: { kind: 'none' },
    secretChanged: false,
    missingCredential: item.credential,
  };
}

export function tooMany(section: string, limit: number): never {
  throw RuntimeErrors.limit(`The realm has more than ${limit} ${section}: more than one bundle holds`);
}

// Providers --------------------------------------------------------------------------------------------------------

function providerItem(row: ProviderRow): ProviderItem {
  const view = toProviderView(row);
  return {
    name: view.name,
    type: view.type as ProviderItem['type'],
    description: view.description,
    base_url: view.base_url,
    supports_text: view.supports_text,
    supports_image: view.supports_image,
    text_model: view.text_model,
    image_model: view.image_model,
    input_price_per_million: view.input_price_per_million,
    output_price_per_million: view.output_price_per_million,
    image_price: view.image_price,
    currency: view.currency,
    is_default: view.is_default,
    is_active: view.is_active,
    settings: view.settings,
    credential: view.api_key_set ? 'api_key' : null,
  };
}

type ProviderFields = Awaited<ReturnType<typeof providerFields>>;

export const providerSection: ConfigSection<ProviderItem, ProviderRow, { item: ProviderItem; fields: ProviderFields }> =
  {
    name: 'providers',
    key: (item) => item.name,
    async read(db, realmId, limit) {
      const rows = await listRealmProviders(db, realmId, limit + 1);
      if (rows.length > limit) tooMany('providers', limit);
      return rows.map((row) => ({ item: providerItem(row), row }));
    },
    async prepare(ctx, item) {
      return about(`providers/${item.name}`, async () => {
        if (item.credential !== null && findTemplate(item.type)?.api_key === 'unsupported')
          throw RuntimeErrors.invalid(`${item.type} providers take no api_key (credential must be null)`);
        const fields = await providerFields(ctx.rt, { ...item, api_key: undefined }, null);
        const row = { ...fields, id: '', realm_id: ctx.realmId, created_at: ctx.now, updated_at: ctx.now };
        return { item: { ...providerItem(row), credential: item.credential }, fields };
      });
    },
    async desired(_db, ctx, prepared, current) {
      const sealed = current?.row.api_key_sealed ?? null;
      const stored = sealed === null ? null : ctx.rt.secrets.decrypt(sealed);
      return planSecret(ctx, `providers/${prepared.item.name}`, prepared.item, stored);
    },
    async write(trx, ctx, prepared, desired, current) {
      const secret = desired.secret;
      const fields = {
        ...prepared.fields,
        is_active: desired.item.is_active,
        api_key_sealed:
          secret.kind === 'set'
            ? ctx.rt.secrets.encrypt(secret.secret)
            : secret.kind === 'keep'
              ? (current?.row.api_key_sealed ?? null)
              : null,
        updated_at: ctx.now,
      };
      const id = current?.row.id ?? newId();
      if (current) await updateProviderRow(trx, id, fields);
      else await insertProvider(trx, { ...fields, id, realm_id: ctx.realmId, created_at: ctx.now });
      if (fields.is_default) await clearOtherDefaultProviders(trx, ctx.realmId, id, ctx.now);
    },
    async remove(db, ctx, current, dry) {
      const row = current.row;
      const users = await countAgentsUsingProvider(db, ctx.realmId, row.id, toBoolean(row.is_default));
      if (users > 0)
        throw RuntimeErrors.inUse(
          `providers/${row.name} is used by ${users} agent configuration(s): keep it in the bundle`,
        );
      if (!dry) await deleteProviderRow(db, row.id);
    },
    async committed(rt, _realmId, current) {
      if (current) rt.models.drop(current.row.id);
    },
  };

// Prompts ----------------------------------------------------------------------------------------------------------

type PromptVersionItem = PromptItem['versions'][number];

function versionItem(row: PromptRow): PromptVersionItem {
  return {
    version: row.version,
    name: row.name,
    content: row.content,
    variables: fromJsonColumn<string[]>(row.variables),
  };
}

const sameTemplate = (a: PromptVersionItem, b: PromptVersionItem) =>
  a.content === b.content && canonicalJson(a.variables) === canonicalJson(b.variables);

/**
 * Prompts by key. Versions are append-only history (executions pin them): a deploy adds the bundle's missing
 * versions, renames, edits a version that was never active, keeps versions the bundle does not name, and refuses
 * (409 RUNTIME_PROMPT_VERSION_IMMUTABLE) to change the template of a version that has been active.
 */
export const promptSection: ConfigSection<PromptItem, PromptRow[], PromptItem> = {
  name: 'prompts',
  key: (item) => item.key,
  async read(db, realmId, limit) {
    const rows = await listRealmPrompts(db, realmId, limit * BUNDLE_LIMITS.prompt_versions + 1);
    if (rows.length > limit * BUNDLE_LIMITS.prompt_versions)
      tooMany('prompt versions', limit * BUNDLE_LIMITS.prompt_versions);
    const byKey = new Map<string, PromptRow[]>();
    for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
    if (byKey.size > limit) tooMany('prompt keys', limit);
    return [...byKey.values()].map((versions) => ({
      row: versions,
      item: {
        key: versions[0]!.key,
        active_version: versions.find((v) => toBoolean(v.is_active))?.version ?? null,
        versions: versions.map(versionItem),
      },
    }));
  },
  async prepare(_ctx, item) {
    return about(`prompts/${item.key}`, () => {
      const numbers = item.versions.map((v) => v.version);
      if (new Set(numbers).size !== numbers.length) throw RuntimeErrors.invalid('versions repeat a version number');
      if (item.active_version !== null && !numbers.includes(item.active_version))
        throw RuntimeErrors.invalid(`active_version ${item.active_version} is not one of the versions`);
      for (const v of item.versions) checkTemplate(v.content, v.variables);
      return { ...item, versions: [...item.versions].sort((a, b) => a.version - b.version) };
    });
  },
  async desired(_db, _ctx, prepared, current) {
    const named = new Map(prepared.versions.map((v) => [v.version, v]));
    for (const row of current?.row ?? []) {
      const wanted = named.get(row.version);
      if (wanted && row.activated_at !== null && !sameTemplate(wanted, versionItem(row)))
        throw RuntimeErrors.promptImmutable(`${row.key} v${row.version}`);
    }
    const kept = (current?.item.versions ?? []).filter((v) => !named.has(v.version));
    const versions = [...prepared.versions, ...kept].sort((a, b) => a.version - b.version);
    return {
      item: { ...prepared, versions },
      secret: { kind: 'none' },
      secretChanged: false,
      missingCredential: null,
    };
  },
  async write(trx, ctx, prepared, _desired, current) {
    const rows = new Map((current?.row ?? []).map((row) => [row.version, row]));
    for (const v of prepared.versions) {
      const row = rows.get(v.version);
      const variables = JSON.stringify(v.variables);
      if (!row) {
        const created: PromptRow = {
          id: newId(),
          realm_id: ctx.realmId,
          key: prepared.key,
          version: v.version,
          name: v.name,
          content: v.content,
          variables,
          is_active: false,
          activated_at: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        };
        await insertPrompt(trx, created);
        rows.set(v.version, created);
      } else if (canonicalJson(versionItem(row)) !== canonicalJson(v))
        await updatePromptRow(trx, row.id, { name: v.name, content: v.content, variables, updated_at: ctx.now });
    }
    const active = current?.item.active_version ?? null;
    if (prepared.active_version === active) return;
    if (active !== null) {
      if (prepared.active_version === null && (await countAgentsUsingPromptKey(trx, ctx.realmId, prepared.key)) > 0)
        throw RuntimeErrors.inUse(`prompts/${prepared.key}: agents run it, so the bundle must name an active_version`);
      await updatePromptRow(trx, rows.get(active)!.id, { is_active: false, updated_at: ctx.now });
    }
    if (prepared.active_version !== null) {
      const row = rows.get(prepared.active_version)!;
      await updatePromptRow(trx, row.id, {
        is_active: true,
        activated_at: row.activated_at ?? ctx.now,
        updated_at: ctx.now,
      });
    }
  },
  async remove(db, ctx, current, dry) {
    for (const row of current.row) {
      const direct = await countAgentsUsingPrompt(db, ctx.realmId, row.id);
      const byKey = toBoolean(row.is_active) ? await countAgentsUsingPromptKey(db, ctx.realmId, row.key) : 0;
      if (direct + byKey > 0)
        throw RuntimeErrors.inUse(`prompts/${row.key} is the system prompt of agents: keep it in the bundle`);
    }
    if (!dry) for (const row of current.row) await deletePromptRow(db, row.id);
  },
};

// Tool servers -----------------------------------------------------------------------------------------------------

function serverItem(row: ServerRow): ToolServerItem {
  const { transport: _transport, auth, ...profile } = profileView(row);
  return {
    name: row.name,
    url: row.url,
    type: row.type as ToolServerItem['type'],
    description: row.description,
    is_active: toBoolean(row.is_active),
    capabilities: fromJsonColumn<string[]>(row.capabilities) ?? [],
    profile: { auth, ...profile },
    credential: row.active_credential_version === null ? null : 'api_key',
  };
}

/**
 * Tool server registrations (without credentials, discovered tools or their reviews: a deployed server is
 * discovered and its tools reviewed in the target realm, as a newly registered one).
 */
export const toolServerSection: ConfigSection<ToolServerItem, ServerRow, ToolServerItem> = {
  name: 'tool_servers',
  key: (item) => item.name,
  async read(db, realmId, limit) {
    const rows = await listRealmToolServers(db, realmId, limit + 1);
    if (rows.length > limit) tooMany('tool servers', limit);
    return rows.map((row) => ({ item: serverItem(row), row }));
  },
  async prepare(ctx, item) {
    return about(`tool_servers/${item.name}`, async () => {
      const tools = toolRuntimeOf(ctx.rt);
      const type = serverType(item.type);
      const url = await checkServerUrl(tools, item.url, item.profile.egress.allowed_hosts);
      const { auth, allowedHosts } = await checkedProfile(
        tools,
        url,
        item.profile.auth,
        undefined,
        item.profile.egress.allowed_hosts,
      );
      return { ...item, type, url, profile: { ...item.profile, auth, egress: { allowed_hosts: allowedHosts } } };
    });
  },
  async desired(db, ctx, prepared, current) {
    const version = current?.row.active_credential_version ?? null;
    const sealed =
      version === null ? null : ((await findCredential(db, current!.row.id, version))?.secret_sealed ?? null);
    const stored = sealed === null ? null : ctx.rt.secrets.decrypt(sealed);
    return planSecret(ctx, `tool_servers/${prepared.name}`, prepared, stored);
  },
  async write(trx, ctx, _prepared, desired, current) {
    const item = desired.item;
    const fields = {
      name: item.name,
      url: item.url,
      type: item.type,
      description: item.description,
      is_active: item.is_active,
      capabilities: JSON.stringify(item.capabilities),
      auth_profile: JSON.stringify(item.profile.auth),
      egress_policy: JSON.stringify(item.profile.egress),
      region: item.profile.region,
      data_handling: JSON.stringify(item.profile.data_handling),
      estimated_cost: item.profile.estimated_cost,
      updated_at: ctx.now,
    };
    const id = current?.row.id ?? newId();
    if (current) await updateServer(trx, id, fields);
    else
      await insertServer(trx, {
        ...fields,
        id,
        realm_id: ctx.realmId,
        active_credential_version: null,
        ...UNPROBED_SERVER,
        created_at: ctx.now,
      });
    const secret = desired.secret;
    const stored = current?.row.active_credential_version ?? null;
    if (secret.kind === 'keep' || (secret.kind === 'none' && stored === null)) return;
    if (secret.kind === 'set' && stored !== null && !desired.secretChanged) return;
    // A new or removed secret: the active version (if any) becomes inactive; a supplied one is the next version,
    // untested until POST /api/v1/runtime/mcp/servers/{id}/test runs.
    await demoteCredentials(trx, id, 'active', -1, { status: 'inactive', overlap_until: null });
    if (secret.kind === 'none') {
      await updateServer(trx, id, { active_credential_version: null });
      return;
    }
    const version = await nextCredentialVersion(trx, id);
    await insertCredential(trx, {
      server_id: id,
      version,
      realm_id: ctx.realmId,
      secret_sealed: ctx.rt.secrets.encrypt(secret.secret),
      status: 'active',
      created_at: ctx.now,
      created_by: ctx.identityId,
      tested_at: null,
      test_ok: null,
      test_error_code: null,
      activated_at: ctx.now,
      overlap_until: null,
    });
    await updateServer(trx, id, { active_credential_version: version });
  },
  async remove(db, ctx, current, dry) {
    const row = current.row;
    const attached = (await listAgentServerLists(db, ctx.realmId)).filter((a) =>
      (fromJsonColumn<string[]>(a.allowed_mcp_servers) ?? []).includes(row.id),
    );
    if (attached.length > 0)
      throw RuntimeErrors.inUse(
        `tool_servers/${row.name} is attached to ${attached.length} agent(s): keep it in the bundle`,
      );
    const rules = await loadRuleSet(toolRuntimeOf(ctx.rt), ctx.realmId);
    if (rules.some((rule) => rule.servers?.includes(row.id)))
      throw RuntimeErrors.inUse(`tool_servers/${row.name} is named by a routing rule: keep it in the bundle`);
    if (!dry) await deleteServerRow(db, row.id);
  },
  async committed(rt, _realmId, current) {
    if (!current) return;
    const tools = toolRuntimeOf(rt);
    await tools.connector.drop(current.row.id);
    tools.stats.forget(current.row.id);
  },
};
