// The Published flows group of the public tool endpoint: each active published flow of the caller's realm.
import { defineMcpTool, type McpTool } from '@keel/core';
import type { TObject } from 'typebox';
import { callFlowTool, publishedFlowTools } from '../flows/flow-tool-service.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { type EndpointCaller, type RealmCaller, RUNTIME_PERMISSION } from './runtime-tools.ts';

/** The realm's published flows as tools of a realm caller (listed per request: activation changes show at once). */
export async function publishedFlowMcpTools(
  rt: RuntimeContext,
  caller: RealmCaller,
): Promise<McpTool<EndpointCaller>[]> {
  if (caller.principal.realmId === null) return [];
  const tools = await publishedFlowTools(rt, caller.principal.realmId);
  return tools.map((tool) =>
    defineMcpTool<EndpointCaller, TObject>({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as unknown as TObject,
      outputSchema: tool.outputSchema,
      permission: RUNTIME_PERMISSION,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (args, call) =>
        callFlowTool(rt, (call.principal as RealmCaller).principal, tool, args as Record<string, unknown>),
    }),
  );
}
