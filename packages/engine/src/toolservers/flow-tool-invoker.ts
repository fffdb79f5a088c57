import { AppError } from '@keel/core';
import { type ExecutionScope, type FlowToolInvoker, quotaPortError } from '../executions/execution-port.ts';
import { FlowPortError, type ResourceCall, type ToolCall } from '../flows/index.ts';
import { newId } from '../ids.ts';
import { executeForFlow, flowCallScope, isErrorResult, toolUse } from './tool-execution-service.ts';
import type { ToolRuntime } from './tool-runtime.ts';
import { readResourceForFlow } from './toolserver-service.ts';

/** Refusals of the tool side that mean "this flow cannot reach that tool or resource": one code for the flow. */
const UNREACHABLE = new Set([
  'TOOL_NOT_AVAILABLE',
  'TOOL_ROUTE_FAILED',
  'TOOL_NOT_ENABLED',
  'TOOL_SERVER_DISABLED',
  'RUNTIME_NOT_FOUND',
]);

/**
 * A tool-side error as the flow port's error: unreachable tools and resources are `TOOL_UNAVAILABLE`, invalid
 * arguments `TOOL_ARGUMENTS_INVALID`, high-impact tools outside an approved step `TOOL_HIGH_IMPACT` (none retried);
 * a failed call keeps whether it may be retried; a used-up realm quota is QUOTA_EXCEEDED (retryable when the window ends).
 */
function portError(error: unknown, now: number): unknown {
  if (error instanceof FlowPortError || !(error instanceof AppError)) return error;
  const quota = quotaPortError(error, now);
  if (quota) return quota;
  if (UNREACHABLE.has(error.code)) return new FlowPortError('TOOL_UNAVAILABLE', error.message, false);
  if (error.code === 'TOOL_ARGUMENTS_INVALID') return new FlowPortError(error.code, error.message, false);
  if (error.code === 'TOOL_HIGH_IMPACT_DIRECT_CALL') return new FlowPortError('TOOL_HIGH_IMPACT', error.message, false);
  const retryable = (error as { retryable?: unknown }).retryable === true;
  return new FlowPortError(error.code, error.message, retryable);
}

function asArguments(call: ToolCall): Record<string, unknown> {
  const args = call.arguments;
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new FlowPortError('TOOL_ARGUMENTS_INVALID', `the arguments of ${call.tool} must be an object`, false);
  return args as Record<string, unknown>;
}

/** A resource node's URI with `{name}` placeholders filled from its arguments (each value URI-encoded). */
function resourceUri(call: ResourceCall): string {
  const args = call.arguments;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return call.resource;
  return call.resource.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const value = (args as Record<string, unknown>)[name];
    return typeof value === 'string' || typeof value === 'number' ? encodeURIComponent(String(value)) : whole;
  });
}

/**
 * The tool-server registry as the flows' tool invoker: a tool node reaches only the servers attached to the
 * execution's agent (none without an agent), through the same routing and gating as `POST …/tools/execute`, with
 * the step's idempotency key sent as `_meta["io.keel/idempotency-key"]`. A high-impact tool (destructive, financial,
 * external message, sensitive) runs only from a node of the execution's own plan that is reached only through a
 * granted approval (`approvalGatedNodes`); a resource node reads a resource listed by
 * one of those servers.
 */
export function createFlowToolInvoker(tools: ToolRuntime): FlowToolInvoker {
  return {
    async callTool(scope: ExecutionScope, call: ToolCall) {
      try {
        const callScope = await flowCallScope(tools, scope.realmId, scope.agentId, scope.policyVersionId);
        const outcome = await executeForFlow(
          tools,
          callScope,
          { tool_name: call.tool, arguments: asArguments(call), idempotency_key: call.idempotencyKey },
          // Subflow node ids are not the plan's own: only the execution's own plan is checked for approvals.
          { signal: call.signal, approved: call.depth === 0 && scope.approvalGated.has(call.nodeId) },
          newId(),
        );
        scope.meter?.(call.stepKey, toolUse(callScope, call.tool, outcome));
        if (!outcome.ok)
          throw new FlowPortError(
            'TOOL_CALL_FAILED',
            `the tool call failed (${outcome.error.code}): ${outcome.error.message}`,
            outcome.error.retryable,
          );
        // An MCP error result (`isError`) is the tool's own refusal: the step fails (its `on_error` may take over),
        // and its usage record (above) is a failed call.
        if (isErrorResult(outcome.value))
          throw new FlowPortError('TOOL_RESULT_ERROR', `the tool ${call.tool} answered with an error result`, false);
        return { output: outcome.value };
      } catch (error) {
        throw portError(error, tools.rt.clock());
      }
    },
    async readResource(scope: ExecutionScope, call: ResourceCall) {
      try {
        const callScope = await flowCallScope(tools, scope.realmId, scope.agentId, scope.policyVersionId);
        const read = await readResourceForFlow(
          tools,
          scope.realmId,
          callScope.allowed ?? [],
          resourceUri(call),
          call.signal,
        );
        return { output: { uri: read.uri, contents: read.contents } };
      } catch (error) {
        throw portError(error, tools.rt.clock());
      }
    },
  };
}
