import { canonicalJson, checkIdempotencyKey, type Executor, type IdempotentResponse } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { allows, type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import { nowIso, type RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { runWrite } from '../write.ts';
import { agentSection } from './agent-section.ts';
import { BUNDLE_LIMITS, CONFIG_FORMAT, ConfigBundle } from './configuration-schemas.ts';
import {
  type ConfigSection,
  type Current,
  type DeployContext,
  promptSection,
  providerSection,
  SECTION_NAMES,
  type SectionName,
  toolServerSection,
} from './configuration-sections.ts';
import { flowSection } from './flow-section.ts';
import { flowTriggerSection } from './flow-trigger-section.ts';
import { governanceSection } from './governance-section.ts';
import { integrationClientSection, runtimeWebhookSection } from './integration-sections.ts';
import { flowRoutingSection, toolRoutingSection } from './routing-sections.ts';

type AnySection = ConfigSection<any, any, any>;

/**
 * The sections of a bundle, in deploy order (an area that references another comes after it — but for agents,
 * which come before the flows that name them as specialists and set a default flow the deploy creates afterwards:
 * `DeployContext.deferred`). To add an area,
 * write its item schema in configuration-schemas.ts (an optional list — or one object — on ConfigBundle), its
 * name in SECTION_NAMES and a ConfigSection, and append it here.
 */
export const CONFIG_SECTIONS: readonly AnySection[] = [
  providerSection,
  promptSection,
  toolServerSection,
  agentSection,
  flowSection,
  flowTriggerSection,
  toolRoutingSection,
  flowRoutingSection,
  governanceSection,
  runtimeWebhookSection,
  integrationClientSection,
];

export interface DeployInput {
  bundle: ConfigBundle;
  dry_run?: boolean | undefined;
  prune?: boolean | undefined;
  credentials?: Record<string, string> | undefined;
}

export interface Change {
  section: SectionName;
  name: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  /** Top-level fields that change (`credential` also when a supplied secret replaces the stored one). */
  fields: string[];
}

export interface MissingCredential {
  ref: string;
  section: SectionName;
  name: string;
  credential: string;
}

const LIMITS: Record<SectionName, number> = {
  providers: BUNDLE_LIMITS.providers,
  prompts: BUNDLE_LIMITS.prompt_keys,
  tool_servers: BUNDLE_LIMITS.tool_servers,
  flows: BUNDLE_LIMITS.flows,
  agents: BUNDLE_LIMITS.agents,
  flow_triggers: BUNDLE_LIMITS.flow_triggers,
  tool_routing: 1,
  flow_routing: 1,
  governance: 1,
  runtime_webhooks: BUNDLE_LIMITS.runtime_webhooks,
  integration_clients: BUNDLE_LIMITS.integration_clients,
};

/** A section's items in a bundle (a `single` section is one object), or undefined when the bundle leaves it out. */
function bundleItems(bundle: ConfigBundle, section: AnySection): unknown[] | undefined {
  const value = (bundle as Record<string, unknown>)[section.name];
  if (value === undefined) return undefined;
  return section.single ? [value] : (value as unknown[]);
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function readSection(db: Executor<EngineDb>, section: AnySection, realmId: string) {
  const current: Current<Record<string, unknown>, unknown>[] = await section.read(db, realmId, LIMITS[section.name]);
  return current.sort((a, b) => byCodePoint(section.key(a.item), section.key(b.item)));
}

/** The JSON Schema of the portable configuration format. */
export function configurationSchema(principal: RuntimePrincipal) {
  requirePermission(principal, 'config:read');
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://keel.dev/schemas/${CONFIG_FORMAT}`,
    ...ConfigBundle,
    'x-keel-format': CONFIG_FORMAT,
    'x-keel-credential-refs':
      'A deploy body names secrets as credentials["<section>/<name>"], for example credentials["providers/openai-main"] (runtime webhooks by URL: credentials["runtime_webhooks/https://…"], a whsec_… signing secret)',
    'x-keel-section-order': [...SECTION_NAMES],
  };
}

/** The realm's configuration as a secret-free, name-referenced bundle (no ids, no timestamps, sorted by name). */
export async function exportConfiguration(rt: RuntimeContext, principal: RuntimePrincipal) {
  const realmId = requirePermission(principal, 'config:read');
  const bundle: Record<string, unknown> = { format: CONFIG_FORMAT };
  const required: string[] = [];
  for (const section of CONFIG_SECTIONS) {
    const items = (await readSection(rt.db, section, realmId)).map((c) => c.item as { credential?: unknown });
    bundle[section.name] = section.single ? items[0] : items;
    for (const item of items) if (item.credential) required.push(`${section.name}/${section.key(item)}`);
  }
  return { bundle: bundle as ConfigBundle, required_credentials: required };
}

/** The name a section's item is referenced by from other items (prompts: their key; flows: case-insensitive). */
function plannedKey(section: AnySection, item: unknown): string {
  const key = section.key(item);
  return section.name === 'flows' ? key.trim().toLowerCase() : key;
}

function checkBundle(input: DeployInput): void {
  if (input.bundle.format !== CONFIG_FORMAT) throw RuntimeErrors.invalid(`bundle.format must be ${CONFIG_FORMAT}`);
  const wanted = new Set<string>();
  for (const section of CONFIG_SECTIONS) {
    const items = bundleItems(input.bundle, section) ?? [];
    const keys = new Set<string>();
    for (const item of items) {
      const key = section.key(item);
      if (keys.has(key)) throw RuntimeErrors.invalid(`${section.name}/${key} appears twice in the bundle`);
      keys.add(key);
      if ((item as { credential?: unknown }).credential) wanted.add(`${section.name}/${key}`);
    }
  }
  const defaults = (input.bundle.providers ?? []).filter((p) => p.is_default);
  if (defaults.length > 1) throw RuntimeErrors.invalid('At most one provider of the bundle is the default');
  for (const ref of Object.keys(input.credentials ?? {}))
    if (!wanted.has(ref))
      throw RuntimeErrors.invalid(`credentials names ${ref}, which is no bundle item that needs a credential`);
}

interface Outcome {
  changes: Change[];
  missing: MissingCredential[];
  /** Sections with changes that need a permission the caller lacks (a dry run reports them; a deploy is a 403). */
  forbidden: SectionName[];
  /** Items that were written or deleted (`current`: as they were), for the sections' after-commit work. */
  updated: Array<{ section: AnySection; current: Current<Record<string, unknown>, unknown> | undefined }>;
}

/**
 * Plans (and unless `dry`, writes) every section of the bundle in order on `db`. Sections run one after another,
 * so a failure in a later section happens after earlier writes — which the transaction then undoes.
 */
async function deploySections(
  db: Executor<EngineDb>,
  ctx: DeployContext,
  prepared: Map<SectionName, Array<{ name: string; item: unknown }>>,
  options: { dry: boolean; prune: boolean },
): Promise<Outcome> {
  const { dry, prune } = options;
  // A retried transaction starts its second phase afresh (the ids of a rolled-back attempt are gone).
  ctx.deferred.length = 0;
  const changes: Change[] = [];
  const missing: MissingCredential[] = [];
  const forbidden: SectionName[] = [];
  const updated: Outcome['updated'] = [];
  // Writing a section whose permission the caller lacks: a dry run notes it, a deploy refuses (403) before the
  // first write of that section, and the transaction then undoes what earlier sections wrote.
  const permitted = (section: AnySection) => {
    if (!section.permission || allows(ctx.principal.role, section.permission)) return;
    if (!dry) requirePermission(ctx.principal, section.permission);
    if (!forbidden.includes(section.name)) forbidden.push(section.name);
  };
  for (const section of CONFIG_SECTIONS) {
    const given = prepared.get(section.name);
    if (!given) continue;
    const items = section.order?.(given) ?? given;
    const current = new Map((await readSection(db, section, ctx.realmId)).map((c) => [section.key(c.item), c]));
    for (const { name, item } of items) {
      const existing = current.get(name);
      const desired = await section.desired(db, ctx, item, existing);
      if (desired.missingCredential)
        missing.push({
          ref: `${section.name}/${name}`,
          section: section.name,
          name,
          credential: desired.missingCredential,
        });
      const fields = existing ? changedFields(existing.item, desired.item) : [];
      if (existing && desired.secretChanged && !fields.includes('credential')) fields.push('credential');
      const action = !existing ? 'create' : fields.length > 0 ? 'update' : 'unchanged';
      changes.push({ section: section.name, name, action, fields });
      if (action === 'unchanged') continue;
      permitted(section);
      if (dry) continue;
      await section.write(db, ctx, item, desired, existing);
      updated.push({ section, current: existing });
    }
    if (!prune || section.single) continue;
    const named = new Set(items.map((i) => i.name));
    for (const [name, existing] of current) {
      if (named.has(name)) continue;
      permitted(section);
      await section.remove(db, ctx, existing, dry);
      changes.push({ section: section.name, name, action: 'delete', fields: [] });
      if (!dry) updated.push({ section, current: existing });
    }
  }
  if (!dry) for (const work of ctx.deferred.splice(0)) await work(db);
  return { changes, missing, forbidden, updated };
}

function changedFields(from: Record<string, unknown>, to: Record<string, unknown>): string[] {
  return Object.keys(to).filter((key) => canonicalJson(from[key] ?? null) !== canonicalJson(to[key] ?? null));
}

function summary(changes: Change[]) {
  const count = (action: Change['action']) => changes.filter((c) => c.action === action).length;
  return { create: count('create'), update: count('update'), unchanged: count('unchanged'), delete: count('delete') };
}

/**
 * Deploys a bundle into the token's realm: `dry_run` answers the diff without writing (any role that may read the
 * configuration; developer+ when it carries credentials); otherwise every section is written in one transaction on the engine's write path (all or
 * nothing; developer+). Items whose credential is neither supplied nor already stored are deployed inactive and
 * listed in `missing_credentials`. An `Idempotency-Key` replays the first answer.
 */
export async function deployConfiguration(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  input: DeployInput,
  idempotencyKey: unknown,
): Promise<IdempotentResponse<unknown>> {
  const dry = input.dry_run === true;
  // A dry run is a read, unless it carries secrets: comparing them with the stored ones would let a reader test guesses.
  const realmId = requirePermission(principal, dry && !input.credentials ? 'config:read' : 'config:write');
  const key = checkIdempotencyKey(idempotencyKey, false);
  checkBundle(input);
  const planned = new Map<SectionName, Set<string>>();
  for (const section of CONFIG_SECTIONS) {
    const items = bundleItems(input.bundle, section);
    if (items) planned.set(section.name, new Set(items.map((item) => plannedKey(section, item))));
  }
  const ctx: DeployContext = {
    rt,
    realmId,
    identityId: principal.identityId,
    principal,
    now: nowIso(rt),
    credentials: input.credentials ?? {},
    dry,
    planned,
    deferred: [],
  };
  // Validation that may resolve names (SSRF checks, flow compilation) runs before the transaction.
  const prepared = new Map<SectionName, Array<{ name: string; item: unknown }>>();
  for (const section of CONFIG_SECTIONS) {
    const items = bundleItems(input.bundle, section);
    if (!items) continue;
    const ready = items.map(async (item) => ({ name: section.key(item), item: await section.prepare(ctx, item) }));
    prepared.set(section.name, await Promise.all(ready));
  }
  const answer = (outcome: Outcome, applied: boolean) => ({
    format: CONFIG_FORMAT,
    dry_run: dry,
    applied,
    summary: summary(outcome.changes),
    changes: outcome.changes,
    missing_credentials: outcome.missing,
    requires_admin: outcome.forbidden,
  });
  if (dry) {
    const outcome = await deploySections(rt.db, ctx, prepared, { dry: true, prune: input.prune === true });
    return { statusCode: 200, body: answer(outcome, false), replayed: false };
  }
  const idempotency =
    key === undefined
      ? undefined
      : {
          scope: `${principal.keyId}|POST /api/v1/runtime/configuration/deploy`,
          key,
          payload: input,
        };
  let updated: Outcome['updated'] = [];
  const outcome = await runWrite(rt.engine, idempotency, async (trx) => {
    const result = await deploySections(trx, ctx, prepared, { dry: false, prune: input.prune === true });
    updated = result.updated;
    return {
      statusCode: 200,
      body: answer(
        result,
        result.changes.some((c) => c.action !== 'unchanged'),
      ),
    };
  });
  await rt.realms.invalidate(realmId);
  for (const { section, current } of updated) await section.committed?.(rt, realmId, current);
  return outcome;
}
