import type { Executor } from '@keel/core';
import type { EngineDb } from '../db/schema.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { BUNDLE_LIMITS } from './configuration-schemas.ts';
import type { DeployContext, SectionName } from './configuration-sections.ts';
import {
  listRealmAgents,
  listRealmFlowNames,
  listRealmPrompts,
  listRealmProviders,
  listRealmToolServers,
} from './configuration-store.ts';

/**
 * The names of the realm's providers, prompt versions, flows and tool servers by id, and their ids by name: a
 * bundle references items by name only, and these maps translate in both directions within ONE realm (an id of
 * another realm is never in them, so nothing can cross realms).
 */
export interface RealmNames {
  providers: Map<string, string>;
  /** `key@version` by prompt row id. */
  prompts: Map<string, string>;
  flows: Map<string, string>;
  tool_servers: Map<string, string>;
  /** Agent usernames by identity id. */
  agents: Map<string, string>;
}

export async function realmNames(db: Executor<EngineDb>, realmId: string): Promise<RealmNames> {
  const [providers, prompts, flows, servers, agents] = await Promise.all([
    listRealmProviders(db, realmId, BUNDLE_LIMITS.providers + 1),
    listRealmPrompts(db, realmId, BUNDLE_LIMITS.prompt_keys * BUNDLE_LIMITS.prompt_versions + 1),
    listRealmFlowNames(db, realmId),
    listRealmToolServers(db, realmId, BUNDLE_LIMITS.tool_servers + 1),
    listRealmAgents(db, realmId, BUNDLE_LIMITS.agents + 1),
  ]);
  return {
    providers: new Map(providers.map((r) => [r.id, r.name])),
    prompts: new Map(prompts.map((r) => [r.id, `${r.key}@${r.version}`])),
    flows: new Map(flows.map((r) => [r.id, r.name])),
    tool_servers: new Map(servers.map((r) => [r.id, r.name])),
    agents: new Map(agents.map((r) => [r.id, r.username])),
  };
}

/** The id of a name in one of the maps (flows match case-insensitively, as their names are unique that way). */
function idOf(names: Map<string, string>, name: string, caseless: boolean): string | undefined {
  const wanted = caseless ? name.trim().toLowerCase() : name;
  for (const [id, n] of names) if ((caseless ? n.trim().toLowerCase() : n) === wanted) return id;
  return undefined;
}

const PLANNED = 'planned:';

/** Whether `resolveName` answered a placeholder (a name the bundle creates that is not written yet). */
export const isPlanned = (id: string) => id.startsWith(PLANNED);

/**
 * The id in the target realm that a bundle item (`ref`) names in `section`. Earlier sections are written before
 * later ones resolve, so a name the bundle creates is found; in a dry run nothing is written, so a name the
 * bundle's own `section` holds resolves to a placeholder (`isPlanned`) — as it does in a deploy with `later`, for a
 * section written after the caller's. Anything else is a 400 naming the item.
 */
export function resolveName(
  ctx: DeployContext,
  names: RealmNames,
  ref: string,
  section: keyof RealmNames & SectionName,
  name: string,
  plannedKey = name,
  later = false,
): string {
  const id = idOf(names[section], name, section === 'flows');
  if (id !== undefined) return id;
  const planned = section === 'flows' ? plannedKey.trim().toLowerCase() : plannedKey;
  // A placeholder id, distinct per name, for validation only: it is never written.
  if ((ctx.dry || later) && ctx.planned.get(section)?.has(planned))
    return `${PLANNED}${Buffer.from(planned).toString('hex').slice(0, 100)}`;
  throw RuntimeErrors.invalid(`${ref}: ${section} has no item ${JSON.stringify(name)} in this realm or the bundle`);
}
