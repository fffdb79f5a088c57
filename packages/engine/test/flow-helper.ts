import { type AgentSettings, effectiveSettings } from '../src/agents/agent-settings.ts';
import {
  compileFlow,
  createFlowExecutor,
  type DecideCall,
  type DecideResult,
  type FlowPlan,
  type FlowPort,
  FlowPortError,
  type FlowRunOutcome,
  type FlowStepRecord,
  type GenerateCall,
  type PortResult,
  type ResourceCall,
  type ResumeSignal,
  type SpecialistCall,
  type ToolCall,
} from '../src/flows/index.ts';

/** A process crash in the middle of a run (thrown by the in-memory port). */
export class Crash extends Error {
  override name = 'Crash';
}

export const baseConfig = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: {
    allowed_actions: ['RESPOND', 'DATA_RESULT', 'CHECKOUT_HANDOFF', 'RENDER_PRODUCTS', 'OFFER_PRODUCT_ALTERNATIVES'],
  },
};

export function plan(nodes: unknown[], extra: Record<string, unknown> = {}, options = {}): FlowPlan {
  return compileFlow({ ...baseConfig, ...extra, nodes }, options);
}

export function settings(overrides: Partial<AgentSettings> = {}): AgentSettings {
  return { ...effectiveSettings({}), retry_base_ms: 10, ...overrides };
}

type Handler<C, R> = (call: C) => R | Promise<R>;

export interface MemoryPortOptions {
  tools?: Record<string, Handler<ToolCall, unknown>>;
  resources?: Record<string, Handler<ResourceCall, unknown>>;
  generate?: Handler<GenerateCall, unknown>;
  decide?: Handler<DecideCall, DecideResult>;
  specialist?: Handler<SpecialistCall, unknown>;
  plans?: Record<string, FlowPlan>;
  /** Cost of each model, tool or specialist call, in picos. */
  costPicos?: bigint;
}

/**
 * An in-memory port: a durable log per execution (shared across "processes" through `store`), tools that apply
 * their effect once per idempotency key, a controllable clock, and a crash switch on saveStep.
 */
export function memoryPort(options: MemoryPortOptions = {}, shared?: ReturnType<typeof memoryStore>) {
  const store = shared ?? memoryStore();
  let crashAtSave: number | null = null;
  let saves = 0;
  const port: FlowPort & {
    store: typeof store;
    crashOnSave(nth: number | null): void;
    events: string[];
    sleeps: number[];
  } = {
    store,
    events: [],
    sleeps: [],
    crashOnSave(nth) {
      crashAtSave = nth;
      saves = 0;
    },
    async loadSteps(executionId) {
      return structuredClone(store.logs.get(executionId) ?? []);
    },
    async saveStep(executionId, record) {
      saves++;
      if (crashAtSave !== null && saves >= crashAtSave) throw new Crash(`crash at save ${saves}`);
      const log = store.logs.get(executionId) ?? [];
      const keys = store.keys.get(executionId) ?? new Set<string>();
      if (keys.has(record.key)) throw new Error(`duplicate record ${record.key}`);
      keys.add(record.key);
      store.keys.set(executionId, keys);
      log.push(structuredClone(record));
      store.logs.set(executionId, log);
      port.events.push(`save ${record.key}`);
    },
    async callTool(call) {
      port.events.push(`tool ${call.tool} ${call.stepKey}`);
      store.toolCalls.push(call);
      const handler = options.tools?.[call.tool];
      if (!handler) throw new FlowPortError('TOOL_UNKNOWN', `no tool ${call.tool}`, false);
      if (call.effect === 'write' && store.effects.has(call.idempotencyKey))
        return { output: store.effects.get(call.idempotencyKey), costPicos: options.costPicos };
      const output = await handler(call);
      if (call.effect === 'write') store.effects.set(call.idempotencyKey, output);
      return { output, costPicos: options.costPicos };
    },
    async readResource(call) {
      port.events.push(`resource ${call.resource}`);
      const handler = options.resources?.[call.resource];
      if (!handler) throw new FlowPortError('RESOURCE_UNKNOWN', `no resource ${call.resource}`, false);
      return { output: await handler(call) };
    },
    async generate(call): Promise<PortResult> {
      port.events.push(`generate ${call.nodeId}`);
      store.modelCalls++;
      return {
        output: options.generate ? await options.generate(call) : `answer to ${call.nodeId}`,
        costPicos: options.costPicos,
      };
    },
    async decide(call) {
      port.events.push(`decide ${call.stepKey}`);
      store.modelCalls++;
      const answer = options.decide ? await options.decide(call) : { choice: call.choices[0]!.key, confidence: 1 };
      return { ...answer, costPicos: options.costPicos };
    },
    async runSpecialist(call) {
      port.events.push(`specialist ${call.agentId} ${call.stepKey}`);
      return {
        output: options.specialist ? await options.specialist(call) : `${call.agentId} done`,
        costPicos: options.costPicos,
      };
    },
    async loadPlan(flowId, version) {
      return options.plans?.[`${flowId}@${version}`];
    },
    now: () => store.clock,
    async sleep(ms) {
      port.sleeps.push(ms);
      store.clock += ms;
    },
  };
  return port;
}

/** The durable side shared by several port instances (as a database is shared by processes). */
export function memoryStore() {
  return {
    logs: new Map<string, FlowStepRecord[]>(),
    keys: new Map<string, Set<string>>(),
    effects: new Map<string, unknown>(),
    toolCalls: [] as ToolCall[],
    modelCalls: 0,
    clock: Date.parse('2026-11-26T10:00:00.000Z'),
  };
}

/** Runs a plan once. */
export function runOnce(
  port: FlowPort,
  flow: FlowPlan,
  extra: {
    executionId?: string;
    input?: unknown;
    settings?: AgentSettings;
    signals?: Record<string, ResumeSignal>;
    compensate?: boolean;
    signal?: AbortSignal;
  } = {},
): Promise<FlowRunOutcome> {
  return createFlowExecutor(port).run({
    executionId: extra.executionId ?? 'exec-1',
    plan: flow,
    input: (extra.input ?? { message: 'hello' }) as never,
    settings: extra.settings ?? settings(),
    signals: extra.signals,
    compensate: extra.compensate,
    signal: extra.signal,
  });
}
