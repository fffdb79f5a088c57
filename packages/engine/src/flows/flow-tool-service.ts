import { executeFlow, executionAction } from '../executions/execution-service.ts';
import { type RuntimePrincipal, requirePermission } from '../identity/roles.ts';
import type { RuntimeContext } from '../runtime/runtime-context.ts';
import { RuntimeErrors } from '../runtime/runtime-errors.ts';
import { effectiveStatus } from '../sessions/session-service.ts';
import { findSessionRow } from '../sessions/session-store.ts';
import { loadPublishedPlan } from './flow-service.ts';
import { findFlow, listActiveFlowVersions } from './flow-store.ts';
import { FLOW_TOOL_CONTROLS, flowToolName, flowToolSchemas } from './flow-tools.ts';
import { clientAction } from './index.ts';

/** One published flow as a tool of the public MCP endpoint. */
export interface PublishedFlowTool {
  name: string;
  flowId: string;
  version: number;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

/**
 * The realm's active published flows as tools (`engine_flow_<normalized_flow_name>_v<version>`, the active
 * version), in flow name order. A deactivated or archived flow is not listed. Two flows whose names normalize alike
 * share a tool name: the first in name order keeps it, the other is not listed (rename it to list it).
 */
export async function publishedFlowTools(rt: RuntimeContext, realmId: string): Promise<PublishedFlowTool[]> {
  const tools: PublishedFlowTool[] = [];
  const names = new Set<string>();
  for (const flow of await listActiveFlowVersions(rt.db, realmId)) {
    const version = Number(flow.version);
    const plan = await loadPublishedPlan(rt, realmId, flow.id, version);
    const name = flowToolName(flow.name, version);
    if (!plan || names.has(name)) continue;
    names.add(name);
    tools.push({
      name,
      flowId: flow.id,
      version,
      title: `${flow.name} (v${version})`,
      description: `Runs the published flow "${flow.name}" version ${version}${flow.description ? `: ${flow.description}` : ''}. The answer is its normalized action (type, content, data, metadata) with the execution id and state; a step waiting for approval answers APPROVAL_REQUIRED and continues as that execution. Controls: agentId (the agent it runs as), sessionId (the session it belongs to), idempotencyKey (a retry with the same key and arguments answers the same execution).`,
      ...flowToolSchemas(plan),
    });
  }
  return tools;
}

/**
 * Calls a published-flow tool: runs the flow version synchronously like `POST /flows/{id}/execute` (the answer is
 * its state when the run stopped) with the arguments minus the controls as input. The flow must still be active at
 * that version (else 409 FLOW_NOT_ACTIVE: the listing changed); `agentId` and `sessionId` must be the realm's (404),
 * the session active (409).
 */
export async function callFlowTool(
  rt: RuntimeContext,
  principal: RuntimePrincipal,
  tool: { flowId: string; version: number },
  args: Record<string, unknown>,
) {
  const realmId = requirePermission(principal, 'runtime:run');
  const flow = await findFlow(rt.db, realmId, tool.flowId);
  if (!flow) throw RuntimeErrors.notFound('Flow', tool.flowId);
  if (!flow.is_active || flow.status === 'archived' || flow.active_version !== tool.version)
    throw RuntimeErrors.conflict(
      `Flow ${tool.flowId} is no longer active at version ${tool.version}: list the tools again`,
    );
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args))
    if (!(FLOW_TOOL_CONTROLS as readonly string[]).includes(key)) input[key] = value;
  const sessionId = typeof args.sessionId === 'string' ? args.sessionId.toLowerCase() : undefined;
  if (sessionId !== undefined) {
    const session = await findSessionRow(rt.db, realmId, sessionId);
    if (!session) throw RuntimeErrors.notFound('Session', sessionId);
    const status = effectiveStatus(session, rt.clock());
    if (status !== 'active') throw RuntimeErrors.sessionNotActive(session.id, status);
  }
  const executed = await executeFlow(
    rt,
    principal,
    tool.flowId,
    {
      version: tool.version,
      agent_id: typeof args.agentId === 'string' ? args.agentId : undefined,
      input,
      session_id: sessionId,
    },
    args.idempotencyKey,
  );
  const view = executed.body as Parameters<typeof executionAction>[0] & { id: string };
  return {
    ...clientAction(executionAction(view), undefined),
    execution_id: view.id,
    state: view.state,
    flow_id: tool.flowId,
    flow_version: tool.version,
    idempotent_replayed: executed.replayed,
  };
}
