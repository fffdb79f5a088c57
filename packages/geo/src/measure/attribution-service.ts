import { fromJsonColumn, toIsoString, withTransaction } from '@keel/core';
import type { GeoContext } from '../context.ts';
import { withApiJson } from '../datasets/dataset-service.ts';
import { insertRecords } from '../datasets/dataset-store.ts';
import { aiTrafficGroups } from '../events/event-store.ts';
import { loadTargets } from '../graph/graph-store.ts';
import { uuidv7 } from '../ids.ts';

const MAX_GROUPS = 2000;
const TOP_PATHS = 20;

/** The path part of a target URL ('' when it has none). */
function targetPath(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).pathname.replace(/\/+$/, '') || '/';
  } catch {
    return null;
  }
}

/**
 * Attributes AI traffic of the last `days` days from tracking events to targets and content: AI-engine referrals
 * (visits arriving from ChatGPT, Perplexity, …) and AI-crawler hits (GPTBot, ClaudeBot, …), by engine or crawler,
 * each path credited to the target whose URL path is its longest prefix. Writes one `attribution` record per
 * engine and crawler (definition `ai_traffic_attribution@1`, the window in `data`) and returns them.
 */
export async function computeAttribution(ctx: GeoContext, workspaceId: string, projectId: string, days: number) {
  const until = ctx.now();
  const since = new Date(until.getTime() - days * 86_400_000);
  const groups = await aiTrafficGroups(ctx.db, workspaceId, since.toISOString(), until.toISOString(), MAX_GROUPS);
  const targets = (await loadTargets(ctx.db, workspaceId, projectId))
    .filter((t) => t.merged_into === null)
    .map((t) => ({ key: t.target_key, path: targetPath(t.url) }))
    .filter((t): t is { key: string; path: string } => t.path !== null)
    .sort((a, b) => b.path.length - a.path.length);
  const targetOf = (path: string | null) => {
    if (!path) return null;
    return targets.find((t) => t.path === '/' || path === t.path || path.startsWith(`${t.path}/`))?.key ?? null;
  };
  const bySource = new Map<
    string,
    {
      source: 'referral' | 'crawler';
      name: string;
      hits: number;
      visitors: number;
      paths: Map<string, number>;
      targets: Map<string, number>;
    }
  >();
  for (const group of groups) {
    const crawler = group.kind === 'ai_crawler';
    const name = (crawler ? group.crawler : group.ai_engine) ?? 'unknown';
    const id = `${crawler ? 'crawler' : 'referral'}:${name}`;
    let entry = bySource.get(id);
    if (!entry) {
      entry = {
        source: crawler ? 'crawler' : 'referral',
        name,
        hits: 0,
        visitors: 0,
        paths: new Map(),
        targets: new Map(),
      };
      bySource.set(id, entry);
    }
    const hits = Number(group.hits);
    entry.hits += hits;
    entry.visitors += Number(group.visitors);
    const path = group.path ?? '(none)';
    entry.paths.set(path, (entry.paths.get(path) ?? 0) + hits);
    const target = targetOf(group.path);
    if (target) entry.targets.set(target, (entry.targets.get(target) ?? 0) + hits);
  }
  const now = until.toISOString();
  const top = (map: Map<string, number>) =>
    [...map.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_PATHS);
  const rows = [...bySource.entries()].map(([id, entry]) =>
    withApiJson({
      id: uuidv7(),
      workspace_id: workspaceId,
      dataset: 'attribution',
      mode: '',
      record_key: `${id}:${now.slice(0, 10)}`,
      definition_version: 'ai_traffic_attribution@1',
      run_id: null,
      import_id: null,
      computed_at: now,
      data: JSON.stringify({
        source: entry.source,
        [entry.source === 'crawler' ? 'crawler' : 'engine']: entry.name,
        since: since.toISOString(),
        until: now,
        days,
        projectId: projectId === '' ? null : projectId,
        hits: entry.hits,
        // Daily visitor ids rotate, so this counts visitor-days (an upper bound of distinct visitors).
        visitorDays: entry.source === 'referral' ? entry.visitors : null,
        topPaths: top(entry.paths).map(([path, hits]) => ({
          path,
          hits,
          targetKey: targetOf(path === '(none)' ? null : path),
        })),
        targets: top(entry.targets).map(([key, hits]) => ({ key, hits })),
      }),
      confidence_value: null,
      confidence_low: null,
      confidence_high: null,
      evidence: JSON.stringify([
        { type: 'tracking_events', ref: `${since.toISOString()}/${now}`, description: `${entry.hits} events` },
      ]),
      status: null,
      subject_hash: null,
      created_at: now,
      updated_at: now,
    }),
  );
  await withTransaction(ctx.db, (trx) => insertRecords(trx, rows));
  return {
    since: since.toISOString(),
    until: now,
    items: rows.map((row) => ({
      id: row.id as string,
      key: row.record_key as string,
      data: fromJsonColumn<Record<string, unknown>>(row.data),
      computedAt: toIsoString(row.computed_at),
    })),
  };
}
