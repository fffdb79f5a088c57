import { ACTION_TYPES } from '../runtime/actions.ts';
import type { FlowPlan } from './flow-compiler.ts';
import type { Contract } from './flow-schemas.ts';

/** Controls every published-flow tool takes beside the flow's own input (spec: "Published flows"). */
export const FLOW_TOOL_CONTROLS = ['agentId', 'sessionId', 'idempotencyKey'] as const;

/** Longest tool name produced (the common limit of tool-calling clients). */
export const FLOW_TOOL_NAME_MAX = 64;

/**
 * The public tool name of a published flow version: `engine_flow_<normalized_flow_name>_v<version>`, where the
 * name loses its accents, is lower-cased, every run of other characters than a–z and 0–9 becomes one `_`, leading and trailing `_` are
 * dropped (an empty result is `flow`), and the name is shortened so the whole stays within 64 characters.
 */
export function flowToolName(flowName: string, version: number): string {
  const suffix = `_v${version}`;
  const normalized =
    flowName
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replaceAll('ß', 'ss')
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'flow';
  const room = FLOW_TOOL_NAME_MAX - 'engine_flow_'.length - suffix.length;
  return `engine_flow_${normalized.slice(0, room).replace(/_+$/, '') || 'flow'}${suffix}`;
}

function contractSchema(contract: Contract): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(contract.properties).map(([name, field]) => [
        name,
        field.description === undefined ? { type: field.type } : { type: field.type, description: field.description },
      ]),
    ),
    required: [...(contract.required ?? [])],
    additionalProperties: false,
  };
}

const CONTROL_SCHEMAS = {
  agentId: {
    type: 'string',
    maxLength: 64,
    description: 'Agent to run the flow as (default: the realm default agent)',
  },
  sessionId: { type: 'string', maxLength: 64, description: 'Session to continue' },
  idempotencyKey: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    description: 'Replays the first result for the same key',
  },
};

/** Without a contract, a flow takes a message, like the runtime execute request's `input`. */
const DEFAULT_INPUT: Contract = {
  type: 'object',
  properties: { message: { type: 'string', description: 'The user message' } },
  required: ['message'],
};

/**
 * The JSON Schemas of a published flow's tool: the input contract (default `{message}`) plus the controls
 * `agentId`, `sessionId`, `idempotencyKey`; the output is the normalized action whose `data` follows the output
 * contract when the flow declares one.
 */
export function flowToolSchemas(plan: FlowPlan): {
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
} {
  const input = contractSchema(plan.contract.input ?? DEFAULT_INPUT);
  const properties = { ...(input.properties as Record<string, unknown>), ...CONTROL_SCHEMAS };
  return {
    inputSchema: { ...input, properties },
    outputSchema: {
      type: 'object',
      properties: {
        // The flow's output actions, and the engine's own (ERROR, APPROVAL_REQUIRED, client downgrades).
        type: { type: 'string', enum: [...ACTION_TYPES] },
        content: { type: ['string', 'null'] },
        data: plan.contract.output
          ? {
              type: ['object', 'null'],
              description: 'On success, the output contract below; an ERROR action carries {code, retryable}',
              properties: contractSchema(plan.contract.output).properties,
            }
          : { type: ['object', 'null'] },
        metadata: { type: 'object' },
      },
      required: ['type', 'content', 'data', 'metadata'],
    },
  };
}
