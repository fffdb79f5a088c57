import type { App } from '@keel/core';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { flushPendingTraces, subscribeRuleChanges } from './tool-execution-service.ts';
import { registerToolRoutingRoutes } from './tool-routing-routes.ts';
import { createToolRuntime, type ToolRuntime } from './tool-runtime.ts';
import { rememberToolRuntime } from './tool-runtime-registry.ts';
import { registerToolServerRoutes } from './toolserver-routes.ts';
import { serverExists } from './toolserver-service.ts';

/** Builds the tool runtime, registers the tool-server routes and plugs the registry into the runtime's extensions. */
export async function registerToolServers(app: App, rt: RuntimeContext): Promise<ToolRuntime> {
  const tools = await createToolRuntime(rt);
  rememberToolRuntime(rt, tools);
  registerToolServerRoutes(app, tools);
  registerToolRoutingRoutes(app, tools);
  await subscribeRuleChanges(tools);
  rt.extensions.toolServers = { exists: (realmId, serverId) => serverExists(tools, realmId, serverId) };
  app.addHook('onClose', async () => {
    await flushPendingTraces(tools);
    await tools.close();
  });
  return tools;
}
