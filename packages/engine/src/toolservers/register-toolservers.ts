import { type App, createLoopHealth } from '@keel/core';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { createFlowToolInvoker } from './flow-tool-invoker.ts';
import { flushPendingTraces, subscribeRuleChanges } from './tool-execution-service.ts';
import { registerToolInteractionRoutes } from './tool-interaction-routes.ts';
import { registerToolRoutingRoutes } from './tool-routing-routes.ts';
import { createToolRuntime, type ToolRuntime } from './tool-runtime.ts';
import { rememberToolRuntime } from './tool-runtime-registry.ts';
import { registerToolServerRoutes } from './toolserver-routes.ts';
import { probeDueServers, serverExists } from './toolserver-service.ts';

/** Builds the tool runtime, registers the tool-server routes and plugs the registry into the runtime's extensions (tool-server ids of agents, flows' tool and resource nodes). */
export async function registerToolServers(app: App, rt: RuntimeContext): Promise<ToolRuntime> {
  const tools = await createToolRuntime(rt);
  rememberToolRuntime(rt, tools);
  registerToolServerRoutes(app, tools);
  registerToolRoutingRoutes(app, tools);
  registerToolInteractionRoutes(app, tools);
  await subscribeRuleChanges(tools);
  rt.extensions.toolServers = { exists: (realmId, serverId) => serverExists(tools, realmId, serverId) };
  rt.extensions.flowTools = createFlowToolInvoker(tools);
  const prober = startProber(tools, rt.config.toolProbeIntervalSeconds * 1000);
  app.addHook('onClose', async () => {
    await prober.stop();
    await flushPendingTraces(tools);
    await tools.close();
  });
  return tools;
}

/**
 * The background prober (ENGINE_TOOL_PROBE_INTERVAL_SECONDS, default 60; 0 = off): each round probes the active
 * servers not probed within the interval; a failing round (database gone) backs off and is logged once.
 */
function startProber(tools: ToolRuntime, intervalMs: number): { stop(): Promise<void> } {
  if (intervalMs <= 0) return { stop: async () => undefined };
  const health = createLoopHealth('tool-server prober', tools.rt.log, { baseMs: 1000, maxMs: intervalMs });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const round = async () => {
    let wait = intervalMs;
    try {
      await probeDueServers(tools, intervalMs);
      health.succeeded();
    } catch (error) {
      wait = health.failed(error);
    }
    if (!stopped) timer = setTimeout(() => (running = round()), wait).unref();
  };
  timer = setTimeout(() => (running = round()), Math.min(intervalMs, 5000)).unref();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
