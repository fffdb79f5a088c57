import { effectiveSettings } from '../agents/agent-settings.ts';
import type { FlowPlan } from './flow-compiler.ts';
import {
  createFlowExecutor,
  type FlowPort,
  FlowPortError,
  type FlowRunOutcome,
  type FlowStepRecord,
  type ResumeSignal,
} from './flow-executor.ts';
import type { ExecutionState } from './flow-states.ts';

/**
 * Fixture replay (`POST /flows/{id}/test`): a flow version runs against mocked external capabilities only — no
 * tool, resource, model or agent is ever called — on a virtual clock that starts at a fixed instant and moves only
 * when the flow waits, so the same fixture gives the same result every time.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A mocked failure: `{"$error": {"code", "message", "retryable"?}}` in place of a result. */
export interface MockError {
  $error: { code: string; message?: string; retryable?: boolean };
}

export interface FixtureMocks {
  /** Tool name → its result (or a mocked failure); every call of the tool answers it. */
  tools?: Record<string, unknown>;
  /** Resource name → its content (or a mocked failure). */
  resources?: Record<string, unknown>;
  /** `ai` node id → the model's answer. */
  generate?: Record<string, unknown>;
  /** `ai_decision` or supervisor node id → the model's choice and confidence. */
  decisions?: Record<string, { choice: string; confidence: number }>;
  /** `specialist` node id → the agent's answer. */
  specialists?: Record<string, unknown>;
  /** `approval` node id → approved (true) or denied (false); absent → the run stops waiting for approval. */
  approvals?: Record<string, boolean>;
  /** `event_wait` node id → the event payload; absent → the wait times out (or the run stops waiting). */
  events?: Record<string, unknown>;
}

export interface FixtureExpect {
  state?: ExecutionState;
  action_type?: string;
  /** A subset of the final action: every key given must match (objects recursively). */
  action?: Record<string, unknown>;
  /** The tools called, in call order. */
  tool_calls?: string[];
}

export interface Fixture {
  id: string;
  name: string;
  input: unknown;
  mocks: FixtureMocks;
  expect: FixtureExpect;
}

export interface FixtureResult {
  fixture_id: string;
  name: string;
  passed: boolean;
  state: ExecutionState;
  action: Json;
  tool_calls: string[];
  steps: number;
  /** Why it failed: one readable line per mismatch. */
  mismatches: string[];
}

/** Virtual time of every fixture run (a fixed instant, so wait times are deterministic too). */
export const FIXTURE_EPOCH_MS = Date.parse('2026-01-01T00:00:00.000Z');
/** Waits a fixture may pass through (approvals, delays, events) before the run is judged as it stands. */
const MAX_ROUNDS = 100;

function mocked(value: unknown, what: string): unknown {
  if (value === undefined) throw new FlowPortError('MOCK_MISSING', `the fixture has no mock for ${what}`, false);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && '$error' in value) {
    const error = (value as unknown as MockError).$error;
    throw new FlowPortError(
      String(error?.code ?? 'MOCK_ERROR'),
      String(error?.message ?? 'mocked failure'),
      error?.retryable === true,
    );
  }
  return value;
}

function own<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Where `actual` differs from the expected subset, as readable lines. */
function subsetMismatches(expected: Json, actual: Json, path: string, out: string[]): void {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      out.push(`${path || '/'}: expected an object, got ${JSON.stringify(actual)?.slice(0, 120)}`);
      return;
    }
    for (const [key, value] of Object.entries(expected))
      subsetMismatches(value, own(actual as Record<string, Json>, key) ?? null, `${path}/${key}`, out);
    return;
  }
  if (JSON.stringify(expected) !== JSON.stringify(actual))
    out.push(
      `${path || '/'}: expected ${JSON.stringify(expected)?.slice(0, 120)}, got ${JSON.stringify(actual)?.slice(0, 120)}`,
    );
}

function finalAction(outcome: FlowRunOutcome): Json {
  return 'action' in outcome ? (outcome.action as unknown as Json) : null;
}

/** Runs one fixture against a plan (subflows from `plans`, keyed `flowId@version`) and judges it. */
export async function runFixture(
  plan: FlowPlan,
  fixture: Fixture,
  plans: ReadonlyMap<string, FlowPlan>,
): Promise<FixtureResult> {
  const log: FlowStepRecord[] = [];
  const toolCalls: string[] = [];
  let now = FIXTURE_EPOCH_MS;
  const mocks = fixture.mocks;
  const port: FlowPort = {
    loadSteps: async () => [...log],
    saveStep: async (_id, record) => {
      log.push(record);
    },
    callTool: async (call) => {
      if (!call.compensating) toolCalls.push(call.tool);
      return { output: mocked(own(mocks.tools, call.tool), `tool ${call.tool}`) };
    },
    readResource: async (call) => ({
      output: mocked(own(mocks.resources, call.resource), `resource ${call.resource}`),
    }),
    generate: async (call) => ({ output: mocked(own(mocks.generate, call.nodeId), `ai node ${call.nodeId}`) }),
    decide: async (call) => {
      const decision = own(mocks.decisions, call.nodeId);
      if (decision === undefined)
        throw new FlowPortError('MOCK_MISSING', `the fixture has no mock for decision node ${call.nodeId}`, false);
      return { choice: decision.choice, confidence: decision.confidence };
    },
    runSpecialist: async (call) => ({
      output: mocked(own(mocks.specialists, call.nodeId), `specialist node ${call.nodeId}`),
    }),
    loadPlan: async (flowId, version) => plans.get(`${flowId}@${version}`),
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
  const executor = createFlowExecutor(port);
  const signals: Record<string, ResumeSignal> = {};
  const settings = { ...effectiveSettings({}), max_latency_ms: 300_000 };
  let outcome = await executor.run({
    executionId: `fixture:${fixture.id}`,
    plan,
    input: fixture.input as Json,
    settings,
    signals,
  });
  for (let round = 0; round < MAX_ROUNDS && outcome.status === 'waiting'; round++) {
    const wait = outcome.wait;
    if (wait.kind === 'approval') {
      const approved = own(mocks.approvals, wait.node_id);
      if (approved === undefined) break;
      signals[wait.wait_id] = { kind: 'approval', approved };
    } else if (wait.kind === 'delay') {
      now = Math.max(now, Date.parse(wait.resume_at));
    } else {
      const payload = own(mocks.events, wait.node_id);
      if (payload !== undefined) signals[wait.wait_id] = { kind: 'event', payload: payload as Json };
      else if (wait.expires_at !== null) now = Math.max(now, Date.parse(wait.expires_at));
      else break;
    }
    outcome = await executor.run({
      executionId: `fixture:${fixture.id}`,
      plan,
      input: fixture.input as Json,
      settings,
      signals,
    });
  }
  const action = finalAction(outcome);
  const mismatches: string[] = [];
  const expect = fixture.expect;
  if (expect.state !== undefined && expect.state !== outcome.state)
    mismatches.push(`state: expected ${expect.state}, got ${outcome.state}`);
  const actionType = action !== null && typeof action === 'object' && !Array.isArray(action) ? action.type : null;
  if (expect.action_type !== undefined && expect.action_type !== actionType)
    mismatches.push(`action_type: expected ${expect.action_type}, got ${actionType ?? 'none'}`);
  if (expect.action !== undefined) subsetMismatches(expect.action as Json, action, '/action', mismatches);
  if (expect.tool_calls !== undefined && JSON.stringify(expect.tool_calls) !== JSON.stringify(toolCalls))
    mismatches.push(`tool_calls: expected ${JSON.stringify(expect.tool_calls)}, got ${JSON.stringify(toolCalls)}`);
  return {
    fixture_id: fixture.id,
    name: fixture.name,
    passed: mismatches.length === 0,
    state: outcome.state,
    action,
    tool_calls: toolCalls,
    steps: log.length,
    mismatches,
  };
}
