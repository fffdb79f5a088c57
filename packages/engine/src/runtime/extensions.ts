import type { AgentRuntime } from '../agents/agent-service.ts';
import type { FlowToolInvoker } from '../executions/execution-port.ts';
import type { GovernancePolicy } from '../governance/governance-enforcement.ts';
import type { RuntimePrincipal } from '../identity/roles.ts';
import type { ChatTurn } from '../providers/model-clients.ts';
import type { SessionRecord } from '../sessions/session-service.ts';
import type { ClientCapabilities, NormalizedAction } from './actions.ts';
import type { RunBudget } from './run-budget.ts';

/** What a flow (or any later orchestration) gets to work with for one run. */
export interface RunContext {
  realmId: string;
  principal: RuntimePrincipal;
  agent: AgentRuntime;
  session: SessionRecord | null;
  /** The new user input of this turn. */
  message: string;
  /** Earlier turns of the session (oldest first), bounded. */
  history: ChatTurn[];
  channel: string | null;
  locale: string | null;
  metadata: Record<string, unknown>;
  clientCapabilities: ClientCapabilities | undefined;
  /** The agent's settings bounds for this run: deadline, node timeouts and retries, tool calls, parallelism, depth, cost. */
  budget: RunBudget;
  traceId: string;
  /** The realm policy version pinned to the run (null: the realm has none active). */
  policy: GovernancePolicy | null;
}

export interface FlowSelection {
  flowId: string;
  version: number;
  /** How it was chosen: named in the request, pinned to the session, the agent default, or routed by intent. */
  source: 'explicit' | 'session' | 'agent_default' | 'routed';
  /** Whether the session should pin it for later turns. */
  pin: boolean;
}

export interface FlowOutcome {
  action: NormalizedAction;
  usage?: { inputTokens: number; outputTokens: number; costPicos: bigint } | undefined;
}

/** The flow engine (a later issue): validates flow ids, selects a flow for a turn and runs it under the budget. */
export interface FlowEngine {
  exists(realmId: string, flowId: string): Promise<boolean>;
  /** The flow to run for this turn, or undefined for a direct agent answer through its provider. */
  select(run: RunContext, requested: string | null): Promise<FlowSelection | undefined>;
  run(selection: FlowSelection, run: RunContext): Promise<FlowOutcome>;
}

/** The tool-server registry (a later issue): which server ids exist in a realm (agent allowed_mcp_servers). */
export interface ToolServerRegistry {
  exists(realmId: string, serverId: string): Promise<boolean>;
}

/**
 * Where later issues plug into the runtime. With nothing registered, a flow id or tool-server id is unknown
 * (404, fail closed) and every turn is a direct agent answer.
 */
export interface RuntimeExtensions {
  flows?: FlowEngine | undefined;
  toolServers?: ToolServerRegistry | undefined;
  /** Tool and resource calls of flow executions (the tool-server registry plugs in here; none: tools fail closed). */
  flowTools?: FlowToolInvoker | undefined;
  /**
   * The durable-execution worker of this process: woken when an execution is queued or continued, and running a
   * synchronous execute in the requesting process (`runOne`).
   */
  executions?:
    | {
        wake(): void;
        runOne(executionId: string): Promise<boolean>;
        leaseFor(now: number): { owner: string; until: string };
      }
    | undefined;
}

export function createExtensionRegistry(): RuntimeExtensions {
  return {};
}
