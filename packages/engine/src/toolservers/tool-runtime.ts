import { hostname } from 'node:os';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { McpConnector } from './mcp-connection.ts';
import { type RoutingRule, ServerStats } from './routing/index.ts';
import { serveInteraction } from './tool-interaction-service.ts';

/** The channel on which instances publish their observed server statistics (Redis when configured). */
export const STATS_CHANNEL = 'keel:engine:tool-server-stats';

/** What the tool-server services share in one process: connections, observed statistics and the active rule sets. */
export interface ToolRuntime {
  rt: RuntimeContext;
  connector: McpConnector;
  stats: ServerStats;
  /** Active routing rules per realm (loaded on first use; `POST …/routing/reload` and rule writes swap them). */
  rules: Map<string, readonly RoutingRule[]>;
  /** Decisions recorded per trace id in this process (sequence numbers). */
  traceSeq: Map<string, number>;
  publishStats(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the tool runtime: one MCP connector (safe egress), one ServerStats fed by probes and calls, shared with
 * the other instances through the cache's broadcast channel (Redis pub/sub when REDIS_URL is set): each instance
 * publishes its snapshot every few seconds and merges the others' (merging is idempotent and order-free).
 */
export async function createToolRuntime(
  rt: RuntimeContext,
  options: { publishIntervalMs?: number } = {},
): Promise<ToolRuntime> {
  const instanceId = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const stats = new ServerStats({ instanceId, now: rt.clock });
  const connector = new McpConnector({
    allowPrivate: rt.allowPrivateUrls,
    // Sampling and elicitation requests of servers, served per the realm's policy (bound once `tools` exists).
    interactions: (endpoint, request, call) => serveInteraction(runtime, endpoint, request, call),
  });
  await rt.cache.subscribe(STATS_CHANNEL, (message) => {
    if (message === '*') return;
    try {
      // Merging never replaces this instance's own entries, so hearing its own snapshot is harmless.
      stats.merge(JSON.parse(message));
    } catch {
      // A malformed message is ignored; the next one replaces it.
    }
  });
  const publishStats = async () => {
    const snapshot = stats.snapshot();
    if (snapshot.entries.length > 0) await rt.cache.publish(STATS_CHANNEL, JSON.stringify(snapshot));
  };
  const timer =
    rt.cache.kind === 'redis'
      ? setInterval(() => void publishStats().catch(() => undefined), options.publishIntervalMs ?? 5000)
      : undefined;
  timer?.unref();
  const runtime: ToolRuntime = {
    rt,
    connector,
    stats,
    rules: new Map(),
    traceSeq: new Map(),
    publishStats,
    async close() {
      if (timer) clearInterval(timer);
      await connector.close();
    },
  };
  return runtime;
}
