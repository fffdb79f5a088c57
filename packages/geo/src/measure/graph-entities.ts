import type { Executor } from '@keel/core';
import { fromJsonColumn } from '@keel/core';
import type { GeoDb } from '../db/schema.ts';
import { loadTargets } from '../graph/graph-store.ts';
import { citationDomain } from './citations.ts';
import { EntityMatcher, type MatchEntity } from './entity-match.ts';

/** Target kinds that name no entity (their names are not matched in answers; their URLs still count). */
const NOT_NAMED = new Set(['topic', 'page', 'content', 'query']);

/**
 * The entities of a target graph: every canonical (not merged) target. Its role is `competitor` when its kind is
 * `competitor` or `attributes.role` is `"competitor"` (or `attributes.competitor` is true), otherwise `own`. Names:
 * the name, the aliases and `attributes.names`; domains: the host of `url` and `attributes.domains`.
 */
export async function loadGraphMatcher(db: Executor<GeoDb>, workspaceId: string, projectId: string) {
  const targets = await loadTargets(db, workspaceId, projectId);
  const entities: MatchEntity[] = [];
  for (const target of targets) {
    if (target.merged_into !== null) continue;
    const attributes = fromJsonColumn<Record<string, unknown>>(target.attributes) ?? {};
    const competitor =
      target.kind === 'competitor' || attributes.role === 'competitor' || attributes.competitor === true;
    const strings = (value: unknown) =>
      Array.isArray(value)
        ? value.filter((v): v is string => typeof v === 'string' && v.length <= 500).slice(0, 50)
        : [];
    const names = NOT_NAMED.has(target.kind)
      ? []
      : [target.name, ...fromJsonColumn<string[]>(target.aliases), ...strings(attributes.names)];
    const domains = [
      ...(target.url ? [citationDomain(target.url)] : []),
      ...strings(attributes.domains).map((d) => citationDomain(d.includes('://') ? d : `https://${d}`)),
    ].filter((d) => d !== '');
    entities.push({
      key: target.target_key,
      name: target.name,
      role: competitor ? 'competitor' : 'own',
      names,
      domains,
    });
  }
  return new EntityMatcher(entities);
}
