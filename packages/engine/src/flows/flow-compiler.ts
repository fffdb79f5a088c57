import { payloadHash } from '@keel/core';
import { Compile } from 'typebox/compile';
import { ACTION_TYPES, type ActionType } from '../runtime/actions.ts';
import { type FlowProblem, type FlowProblemCode, FlowRejected } from './flow-errors.ts';
import { ExpressionError, prepareExpression } from './flow-expressions.ts';
import {
  type Contract,
  FLOW_LIMITS,
  type FlowConfig,
  FlowConfigShell,
  type FlowNode,
  NODE_SCHEMAS,
  NODE_TYPES,
  type NodeType,
  type UNAVAILABLE_RESULT_MODES,
} from './flow-schemas.ts';
import { FLOW_TOOL_CONTROLS } from './flow-tools.ts';

/** How one node leads to another. */
export type EdgeKind =
  | 'next'
  | 'on_true'
  | 'on_false'
  | 'branch'
  | 'body'
  | 'on_error'
  | 'on_deny'
  | 'on_timeout'
  | 'compensation'
  | 'member';

export interface Edge {
  kind: EdgeKind;
  target: string;
  /** JSON pointer of the reference inside its node. */
  field: string;
}

/** A compiled, immutable flow: validated nodes, resolved edges, loop bodies and a deterministic hash. */
export interface FlowPlan {
  /** SHA-256 of the canonical JSON of the config: equal configs (in any key order) have equal hashes. */
  readonly hash: string;
  readonly flowId: string | null;
  readonly version: number | null;
  readonly schemaVersion: string;
  readonly orchestrationMode: FlowConfig['orchestration_mode'];
  readonly start: string;
  /** Node by id (a null-prototype record). */
  readonly nodes: Readonly<Record<string, FlowNode>>;
  /** Node ids in config order. */
  readonly order: readonly string[];
  readonly allowedActions: readonly ActionType[];
  /** The flow's own tool-call bound (`runtime.max_tool_calls`), or null. */
  readonly maxToolCalls: number | null;
  readonly unavailableResult: (typeof UNAVAILABLE_RESULT_MODES)[number];
  /** Loop id → the nodes of its body (reachable from `body` without passing the loop). */
  readonly loopBodies: Readonly<Record<string, readonly string[]>>;
  /** Parallel branch or supervisor specialist id → its owner's id. */
  readonly owners: Readonly<Record<string, string>>;
  readonly contract: { readonly input: Contract | null; readonly output: Contract | null };
  /** Nesting of subflows below this flow (0 without subflows). */
  readonly subflowDepth: number;
  /** Every `flow_id@version` this plan runs, directly or through its subflows. */
  readonly subflowRefs: readonly string[];
  /** Whether a run may stop to wait (approval, delay or event wait, here or in a subflow). */
  readonly canWait: boolean;
  readonly config: FlowConfig;
}

export interface CompileOptions {
  /** The flow's own id and version, to reject a subflow that runs itself. */
  flowId?: string;
  version?: number;
  /** Resolves a pinned subflow to its compiled plan (undefined when unknown). Required when the config has subflows. */
  resolveSubflow?: (flowId: string, version: number) => FlowPlan | undefined;
  /** Most subflow nesting allowed (at most FLOW_LIMITS.maxSubflowDepth). */
  maxSubflowDepth?: number;
  /** The plan this one replaces: its contract must stay compatible (see compareContracts). */
  previous?: FlowPlan;
}

const shellValidator = Compile(FlowConfigShell);
const nodeValidators = Object.fromEntries(
  NODE_TYPES.map((type) => [type, Compile(NODE_SCHEMAS[type])]),
) as unknown as Record<NodeType, ReturnType<typeof Compile>>;

const MEMBER_TYPES: Readonly<Record<'parallel' | 'supervisor', readonly NodeType[]>> = {
  parallel: ['tool', 'resource', 'transform', 'ai', 'specialist', 'subflow'],
  supervisor: ['specialist'],
};
/** Node types whose `next` is optional in the schema because a member has none; everywhere else it is required. */
const OPTIONAL_NEXT = new Set<NodeType>(['tool', 'resource', 'transform', 'subflow', 'specialist']);
const EXPRESSION_FIELDS = ['input', 'arguments', 'when', 'expression', 'over', 'while', 'details', 'content', 'data'];
const ACTIONS = new Set<string>(ACTION_TYPES);

/** Every reference a node makes to another node, in a fixed order. */
export function edgesOf(node: FlowNode): Edge[] {
  const edges: Edge[] = [];
  const add = (kind: EdgeKind, target: unknown, field: string) => {
    if (typeof target === 'string') edges.push({ kind, target, field });
  };
  const record = node as Record<string, unknown>;
  switch (node.type) {
    case 'condition':
      add('on_true', node.on_true, '/on_true');
      add('on_false', node.on_false, '/on_false');
      break;
    case 'ai_decision':
      for (const [key, target] of Object.entries(node.branches)) add('branch', target, `/branches/${key}`);
      break;
    case 'loop':
      add('body', node.body, '/body');
      break;
    case 'parallel':
      for (const [index, target] of node.branches.entries()) add('member', target, `/branches/${index}`);
      break;
    case 'supervisor':
      for (const [index, target] of node.specialists.entries()) add('member', target, `/specialists/${index}`);
      break;
    case 'tool':
      add('compensation', node.compensation, '/compensation');
      break;
    default:
      break;
  }
  add('on_error', record.on_error, '/on_error');
  add('on_deny', record.on_deny, '/on_deny');
  add('on_timeout', record.on_timeout, '/on_timeout');
  add('next', record.next, '/next');
  return edges;
}

/**
 * The nodes of a plan that run only after an approval was granted: those not reachable from the start when every
 * approval node's `next` (its approved edge) is cut. Its `on_deny`, `on_timeout` and `on_error` edges stay, so a
 * node reached by a denial or a timeout is not among them.
 */
export function approvalGatedNodes(plan: Pick<FlowPlan, 'start' | 'nodes'>): Set<string> {
  const reached = new Set<string>();
  const queue = [plan.start];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    const node = plan.nodes[id];
    if (reached.has(id) || !node) continue;
    reached.add(id);
    for (const edge of edgesOf(node)) if (!(node.type === 'approval' && edge.kind === 'next')) queue.push(edge.target);
  }
  return new Set(Object.keys(plan.nodes).filter((id) => !reached.has(id)));
}

function problem(code: FlowProblemCode, nodeId: string | null, path: string, message: string): FlowProblem {
  return { code, node_id: nodeId, path, message };
}

function schemaProblems(
  validator: ReturnType<typeof Compile>,
  value: unknown,
  code: FlowProblemCode,
  nodeId: string | null,
  base: string,
): FlowProblem[] {
  if (validator.Check(value)) return [];
  const seen = new Set<string>();
  const found: FlowProblem[] = [];
  for (const error of validator.Errors(value)) {
    const path = `${base}${error.instancePath}`;
    const key = `${path} ${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(problem(code, nodeId, path || '/', `${path || '/'} ${error.message}`));
    if (found.length >= 10) break;
  }
  return found;
}

function reject(problems: FlowProblem[]): never {
  throw new FlowRejected(problems.slice(0, 50));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Compiles a flow config into an immutable plan, or throws FlowRejected (400 FLOW_INVALID) listing each broken
 * rule with its code, node id and path: schema and bounds, unknown node types, duplicate ids, dangling or misused
 * references, unreachable nodes, ai_decision wiring, output actions outside `permissions.allowed_actions` or not
 * normalized, cycles that do not go through a bounded loop, open loop bodies, invalid expressions, unresolved,
 * cyclic or too-deep subflows, invalid contracts, and (with `previous`) incompatible contract changes.
 */
export function compileFlow(config: unknown, options: CompileOptions = {}): FlowPlan {
  let text: string | undefined;
  try {
    text = JSON.stringify(config);
  } catch {
    text = undefined;
  }
  if (text === undefined) reject([problem('FLOW_CONFIG_INVALID', null, '/', 'the config is not JSON')]);
  if (text.length > FLOW_LIMITS.maxConfigChars)
    reject([
      problem('FLOW_CONFIG_TOO_LARGE', null, '/', `the config exceeds ${FLOW_LIMITS.maxConfigChars} characters`),
    ]);
  const source = JSON.parse(text) as Record<string, unknown>;
  const shell = schemaProblems(shellValidator, source, 'FLOW_CONFIG_INVALID', null, '');
  if (shell.length > 0) reject(shell);

  const problems: FlowProblem[] = [];
  const rawNodes = source.nodes as Record<string, unknown>[];
  const nodes: Record<string, FlowNode> = Object.create(null);
  const order: string[] = [];
  rawNodes.forEach((raw, index) => {
    const base = `/nodes/${index}`;
    const id = typeof raw.id === 'string' ? raw.id : null;
    const type = raw.type;
    if (typeof type !== 'string' || !(NODE_TYPES as readonly string[]).includes(type)) {
      problems.push(
        problem(
          'FLOW_NODE_TYPE_UNKNOWN',
          id,
          `${base}/type`,
          `unknown node type ${JSON.stringify(typeof type === 'string' ? type.slice(0, 40) : type)}; one of ${NODE_TYPES.join(', ')}`,
        ),
      );
      return;
    }
    if (type === 'output' && typeof raw.action === 'string' && !ACTIONS.has(raw.action)) {
      problems.push(
        problem(
          'FLOW_ACTION_NOT_NORMALIZED',
          id,
          `${base}/action`,
          `"${raw.action.slice(0, 64)}" is not a normalized action`,
        ),
      );
      return;
    }
    const nodeProblems = schemaProblems(nodeValidators[type as NodeType], raw, 'FLOW_NODE_INVALID', id, base);
    if (nodeProblems.length > 0) {
      problems.push(...nodeProblems);
      return;
    }
    const checked = raw as FlowNode;
    if (Object.hasOwn(nodes, checked.id)) {
      problems.push(problem('FLOW_NODE_DUPLICATE', checked.id, `${base}/id`, `the id ${checked.id} is used twice`));
      return;
    }
    for (const field of EXPRESSION_FIELDS) {
      if (!Object.hasOwn(raw, field)) continue;
      try {
        (raw as Record<string, unknown>)[field] = prepareExpression(raw[field]);
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        problems.push(
          problem('FLOW_EXPRESSION_INVALID', checked.id, `${base}/${field}${error.path}`, `${field}: ${error.message}`),
        );
      }
    }
    nodes[checked.id] = checked;
    order.push(checked.id);
  });

  // Actions: every allowed action is normalized; every output action is allowed.
  const permissions = source.permissions as { allowed_actions: string[] };
  const allowed: ActionType[] = [];
  permissions.allowed_actions.forEach((action, index) => {
    if (!ACTIONS.has(action))
      problems.push(
        problem(
          'FLOW_ACTION_NOT_NORMALIZED',
          null,
          `/permissions/allowed_actions/${index}`,
          `"${action}" is not a normalized action`,
        ),
      );
    else if (!allowed.includes(action as ActionType)) allowed.push(action as ActionType);
  });

  const contract = source.contract as { input?: Contract; output?: Contract } | undefined;
  for (const name of Object.keys(contract?.input?.properties ?? {}))
    if ((FLOW_TOOL_CONTROLS as readonly string[]).includes(name))
      problems.push(
        problem(
          'FLOW_CONTRACT_INVALID',
          null,
          `/contract/input/properties/${name}`,
          `${name} is a control of every published-flow tool and cannot be an input field`,
        ),
      );
  for (const side of ['input', 'output'] as const) {
    const declared = contract?.[side];
    for (const name of declared?.required ?? [])
      if (!declared || !Object.hasOwn(declared.properties, name))
        problems.push(
          problem(
            'FLOW_CONTRACT_INVALID',
            null,
            `/contract/${side}/required`,
            `required field "${name}" is not among the properties`,
          ),
        );
  }
  if (problems.length > 0) reject(problems);

  const pathOf = (id: string) => `/nodes/${rawNodes.findIndex((raw) => raw.id === id)}`;
  const start = typeof source.start === 'string' ? source.start : order[0]!;
  if (!Object.hasOwn(nodes, start))
    problems.push(problem('FLOW_REFERENCE_DANGLING', null, '/start', `start refers to an unknown node ${start}`));

  // References: each target exists and is the right kind of node for the edge.
  const owners: Record<string, string> = Object.create(null);
  const compensationTargets = new Set<string>();
  for (const id of order) {
    const node = nodes[id]!;
    for (const edge of edgesOf(node)) {
      const at = `${pathOf(id)}${edge.field}`;
      const target = nodes[edge.target];
      if (!Object.hasOwn(nodes, edge.target) || !target) {
        problems.push(
          problem('FLOW_REFERENCE_DANGLING', id, at, `${edge.kind} refers to an unknown node ${edge.target}`),
        );
        continue;
      }
      if (edge.target === id) {
        problems.push(
          edge.kind === 'body'
            ? problem('FLOW_REFERENCE_INVALID', id, at, 'a loop body cannot be the loop itself')
            : problem('FLOW_CYCLE_UNBOUNDED', id, at, `${edge.kind} points at the node itself`),
        );
        continue;
      }
      if (edge.kind === 'compensation') {
        if (target.type !== 'compensation')
          problems.push(
            problem('FLOW_REFERENCE_INVALID', id, at, `compensation must name a compensation node, not ${target.type}`),
          );
        compensationTargets.add(edge.target);
        continue;
      }
      if (target.type === 'compensation') {
        problems.push(
          problem(
            'FLOW_REFERENCE_INVALID',
            id,
            at,
            `a compensation node runs only as a tool's compensation, not as ${edge.kind}`,
          ),
        );
        continue;
      }
      if (edge.kind === 'member') {
        const ownerType = node.type as 'parallel' | 'supervisor';
        const record = target as Record<string, unknown>;
        if (!MEMBER_TYPES[ownerType].includes(target.type))
          problems.push(
            problem(
              'FLOW_MEMBER_INVALID',
              id,
              at,
              `a ${ownerType} member must be ${MEMBER_TYPES[ownerType].join(', ')}, not ${target.type}`,
            ),
          );
        else if (record.next !== undefined || record.on_error !== undefined)
          problems.push(
            problem(
              'FLOW_MEMBER_INVALID',
              id,
              at,
              `member ${edge.target} must have no next or on_error (the ${ownerType} continues)`,
            ),
          );
        else if (Object.hasOwn(owners, edge.target))
          problems.push(
            problem('FLOW_MEMBER_INVALID', id, at, `${edge.target} already belongs to ${owners[edge.target]}`),
          );
        else owners[edge.target] = id;
      }
    }
  }
  // A member is reached only through its owner; any other node of an optional-next type needs `next`.
  for (const id of order) {
    const node = nodes[id]!;
    for (const edge of edgesOf(node))
      if (edge.kind !== 'member' && Object.hasOwn(owners, edge.target))
        problems.push(
          problem(
            'FLOW_MEMBER_INVALID',
            id,
            `${pathOf(id)}${edge.field}`,
            `${edge.target} is a member of ${owners[edge.target]} and runs only there`,
          ),
        );
    if (OPTIONAL_NEXT.has(node.type) && !Object.hasOwn(owners, id) && (node as { next?: string }).next === undefined)
      problems.push(
        problem(
          'FLOW_NEXT_MISSING',
          id,
          `${pathOf(id)}/next`,
          `a ${node.type} node outside a parallel or supervisor needs next`,
        ),
      );
  }
  if (Object.hasOwn(owners, start) || nodes[start]?.type === 'compensation')
    problems.push(
      problem('FLOW_REFERENCE_INVALID', start, '/start', 'the start node cannot be a member or a compensation node'),
    );

  // ai_decision wiring.
  for (const id of order) {
    const node = nodes[id]!;
    if (node.type !== 'ai_decision') continue;
    const base = pathOf(id);
    const keys = new Set<string>();
    node.choices.forEach((choice, index) => {
      if (keys.has(choice.key))
        problems.push(
          problem('FLOW_CHOICE_DUPLICATE', id, `${base}/choices/${index}/key`, `choice ${choice.key} appears twice`),
        );
      keys.add(choice.key);
    });
    if (!keys.has(node.fallback_choice))
      problems.push(
        problem(
          'FLOW_FALLBACK_UNKNOWN',
          id,
          `${base}/fallback_choice`,
          `fallback_choice ${node.fallback_choice} is not among the choices`,
        ),
      );
    for (const key of keys)
      if (!Object.hasOwn(node.branches, key))
        problems.push(problem('FLOW_CHOICE_NOT_WIRED', id, `${base}/branches`, `choice ${key} has no branch`));
    for (const key of Object.keys(node.branches))
      if (!keys.has(key))
        problems.push(
          problem('FLOW_CHOICE_UNKNOWN', id, `${base}/branches/${key}`, `branch ${key} is not a declared choice`),
        );
  }

  // Output actions.
  for (const id of order) {
    const node = nodes[id]!;
    if (node.type === 'output' && !allowed.includes(node.action))
      problems.push(
        problem(
          'FLOW_ACTION_NOT_ALLOWED',
          id,
          `${pathOf(id)}/action`,
          `${node.action} is not in permissions.allowed_actions`,
        ),
      );
  }
  if (problems.length > 0) reject(problems);

  // Reachability from the start.
  const reached = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const edge of edgesOf(nodes[id]!))
      if (!reached.has(edge.target)) {
        reached.add(edge.target);
        queue.push(edge.target);
      }
  }
  for (const id of order)
    if (!reached.has(id))
      problems.push(problem('FLOW_NODE_UNREACHABLE', id, pathOf(id), `${id} cannot be reached from ${start}`));

  // Cycles: with loop bodies set aside the graph must be acyclic, so every cycle runs through a bounded loop.
  const flowEdges = (id: string) =>
    edgesOf(nodes[id]!).filter((edge) => edge.kind !== 'body' && edge.kind !== 'compensation');
  const color = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    color.set(id, 1);
    stack.push(id);
    for (const edge of flowEdges(id)) {
      const state = color.get(edge.target);
      if (state === 1) return [...stack.slice(stack.indexOf(edge.target)), edge.target];
      if (state === undefined) {
        const cycle = visit(edge.target);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    color.set(id, 2);
    return null;
  };
  for (const id of order) {
    if (color.has(id)) continue;
    const cycle = visit(id);
    if (cycle) {
      problems.push(
        problem(
          'FLOW_CYCLE_UNBOUNDED',
          cycle[0]!,
          pathOf(cycle[0]!),
          `the cycle ${cycle.join(' → ')} does not go through a loop's body (only a bounded loop may repeat)`,
        ),
      );
      break;
    }
  }

  // Loop bodies: what the body reaches before coming back, and it must come back.
  const loopBodies: Record<string, string[]> = Object.create(null);
  for (const id of order) {
    const node = nodes[id]!;
    if (node.type !== 'loop') continue;
    const body = new Set<string>([node.body]);
    const pending = [node.body];
    let returns = false;
    while (pending.length > 0) {
      const current = pending.shift()!;
      for (const edge of edgesOf(nodes[current]!)) {
        if (edge.kind === 'compensation') continue;
        if (edge.target === id) {
          returns = true;
          continue;
        }
        if (!body.has(edge.target)) {
          body.add(edge.target);
          pending.push(edge.target);
        }
      }
    }
    if (!returns)
      problems.push(
        problem('FLOW_LOOP_BODY_OPEN', id, `${pathOf(id)}/body`, `no path from body ${node.body} returns to the loop`),
      );
    loopBodies[id] = order.filter((candidate) => body.has(candidate));
  }

  // Subflows: resolved, not self-referencing, nesting bounded.
  const maxDepth = Math.min(options.maxSubflowDepth ?? FLOW_LIMITS.maxSubflowDepth, FLOW_LIMITS.maxSubflowDepth);
  const self =
    options.flowId !== undefined && options.version !== undefined ? `${options.flowId}@${options.version}` : null;
  let subflowDepth = 0;
  const subflowRefs = new Set<string>();
  let canWait = order.some((id) => ['approval', 'delay', 'event_wait'].includes(nodes[id]!.type));
  for (const id of order) {
    const node = nodes[id]!;
    if (node.type !== 'subflow') continue;
    const ref = `${node.flow_id}@${node.version}`;
    const at = `${pathOf(id)}/flow_id`;
    const child = options.resolveSubflow?.(node.flow_id, node.version);
    if (ref === self || child?.subflowRefs.includes(self ?? '\0')) {
      problems.push(problem('FLOW_SUBFLOW_CYCLE', id, at, `subflow ${ref} runs this flow again`));
      continue;
    }
    if (!child) {
      problems.push(problem('FLOW_SUBFLOW_UNRESOLVED', id, at, `subflow ${ref} is not a published flow version`));
      continue;
    }
    if (child.canWait && Object.hasOwn(owners, id))
      problems.push(
        problem('FLOW_MEMBER_INVALID', id, at, `subflow ${ref} can wait, so it cannot run as a ${owners[id]} branch`),
      );
    canWait ||= child.canWait;
    subflowRefs.add(ref);
    for (const nested of child.subflowRefs) subflowRefs.add(nested);
    subflowDepth = Math.max(subflowDepth, child.subflowDepth + 1);
    if (child.subflowDepth + 1 > maxDepth)
      problems.push(
        problem(
          'FLOW_SUBFLOW_TOO_DEEP',
          id,
          at,
          `subflow ${ref} nests ${child.subflowDepth + 1} levels; at most ${maxDepth}`,
        ),
      );
  }
  if (problems.length > 0) reject(problems);

  const behavior = source.behavior as { unavailable_result?: FlowPlan['unavailableResult'] } | undefined;
  const runtime = source.runtime as { max_tool_calls?: number } | undefined;
  const plan: FlowPlan = {
    hash: payloadHash(JSON.parse(text)),
    flowId: options.flowId ?? null,
    version: options.version ?? null,
    schemaVersion: source.schema_version as string,
    orchestrationMode: source.orchestration_mode as FlowConfig['orchestration_mode'],
    start,
    nodes,
    order,
    allowedActions: allowed,
    maxToolCalls: runtime?.max_tool_calls ?? null,
    unavailableResult: behavior?.unavailable_result ?? 'offer_first',
    loopBodies,
    owners,
    contract: { input: contract?.input ?? null, output: contract?.output ?? null },
    subflowDepth,
    subflowRefs: [...subflowRefs].sort(),
    canWait,
    config: source as unknown as FlowConfig,
  };
  deepFreeze(plan);
  if (options.previous) {
    const changes = compareContracts(options.previous.contract, plan.contract);
    if (changes.length > 0) throw new FlowRejected(changes, true);
  }
  return plan;
}

/**
 * The incompatible changes from a prior contract to a new one (empty when compatible). Input (what callers
 * send): a new required field, a field that became required, or a changed field type breaks callers. Output
 * (what callers read): a removed field, a field no longer required, or a changed type breaks them. A flow that had
 * no contract on a side accepts anything there.
 */
export function compareContracts(prior: FlowPlan['contract'], next: FlowPlan['contract']): FlowProblem[] {
  const changes: FlowProblem[] = [];
  const incompatible = (side: string, field: string, message: string) =>
    changes.push(problem('FLOW_CONTRACT_INCOMPATIBLE', null, `/contract/${side}/properties/${field}`, message));
  const before = prior.input;
  const after = next.input;
  if (before && after) {
    const wasRequired = new Set(before.required ?? []);
    for (const field of after.required ?? [])
      if (!wasRequired.has(field))
        incompatible('input', field, `input field ${field} is newly required; existing callers do not send it`);
    for (const [field, spec] of Object.entries(after.properties)) {
      const old = before.properties[field];
      if (old && Object.hasOwn(before.properties, field) && old.type !== spec.type)
        incompatible('input', field, `input field ${field} changed type from ${old.type} to ${spec.type}`);
    }
  } else if (!before && after && (after.required ?? []).length > 0) {
    for (const field of after.required ?? [])
      incompatible('input', field, `input field ${field} is newly required; existing callers do not send it`);
  }
  const out = prior.output;
  const outNext = next.output;
  if (out) {
    const nowRequired = new Set(outNext?.required ?? []);
    for (const [field, spec] of Object.entries(out.properties)) {
      const replacement = outNext && Object.hasOwn(outNext.properties, field) ? outNext.properties[field] : undefined;
      if (!replacement) incompatible('output', field, `output field ${field} was removed`);
      else if (replacement.type !== spec.type)
        incompatible('output', field, `output field ${field} changed type from ${spec.type} to ${replacement.type}`);
      else if ((out.required ?? []).includes(field) && !nowRequired.has(field))
        incompatible('output', field, `output field ${field} is no longer guaranteed`);
    }
  }
  return changes;
}
