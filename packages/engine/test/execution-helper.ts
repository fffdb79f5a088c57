import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FlowToolInvoker } from '../src/executions/execution-port.ts';
import { FlowPortError } from '../src/flows/index.ts';

/** One request the tool double received. */
export interface ToolHit {
  tool: string;
  idempotencyKey: string | undefined;
  arguments: unknown;
}

/**
 * A tool server double on 127.0.0.1 (outside the project: what a registered tool server would be). It applies each
 * write once per idempotency key (a repeated key answers the stored result), counts every request, and behaves
 * by tool name: `fail` → 400, `flaky` → 503, `slow` → answers after `slowMs`, `hold` → applies the effect at once
 * and answers after `slowMs`, anything else → 200 `{ok, tool, n}`.
 */
export async function startToolDouble(options: { slowMs?: number } = {}) {
  const hits: ToolHit[] = [];
  const effects = new Map<string, unknown>();
  let onHit: ((hit: ToolHit) => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const tool = decodeURIComponent((req.url ?? '').replace(/^\/tools\//, ''));
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      const key = req.headers['idempotency-key'] as string | undefined;
      const hit = { tool, idempotencyKey: key, arguments: body.arguments };
      hits.push(hit);
      onHit?.(hit);
      const send = (status: number, payload: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (tool === 'fail') return send(400, { error: 'rejected' });
      if (tool === 'flaky') return send(503, { error: 'unavailable' });
      const answer = () => {
        if (key !== undefined && effects.has(key)) return send(200, effects.get(key));
        const result = { ok: true, tool, n: effects.size + 1, arguments: body.arguments ?? null };
        if (key !== undefined) effects.set(key, result);
        send(200, result);
      };
      if (tool === 'slow') setTimeout(answer, options.slowMs ?? 1500);
      else if (tool === 'hold') {
        // Applies the effect at once but answers late: a caller killed meanwhile never learns it happened.
        if (key !== undefined && !effects.has(key))
          effects.set(key, { ok: true, tool, n: effects.size + 1, arguments: body.arguments ?? null });
        setTimeout(answer, options.slowMs ?? 1500);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    /** Writes applied (distinct idempotency keys). */
    effects,
    onHit(listener: ((hit: ToolHit) => void) | undefined) {
      onHit = listener;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The registry seam for tests: tools and resources are POSTs to the double, writes with their idempotency key. */
export function httpToolInvoker(url: string): FlowToolInvoker {
  const call = async (name: string, args: unknown, signal: AbortSignal, key?: string) => {
    let response: Response;
    try {
      response = await fetch(`${url}/tools/${encodeURIComponent(name)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify({ arguments: args }),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      throw new FlowPortError('TOOL_UNREACHABLE', 'the tool server did not answer', true);
    }
    const body = await response.json();
    if (response.status >= 500)
      throw new FlowPortError('TOOL_FAILED', `tool ${name} answered ${response.status}`, true);
    if (response.status >= 400)
      throw new FlowPortError('TOOL_REJECTED', `tool ${name} answered ${response.status}`, false);
    return { output: body };
  };
  return {
    callTool: (_scope, c) => call(c.tool, c.arguments, c.signal, c.effect === 'write' ? c.idempotencyKey : undefined),
    readResource: (_scope, c) => call(c.resource, c.arguments, c.signal),
  };
}

export const BASE_CONFIG = {
  schema_version: '2026-08-22',
  orchestration_mode: 'deterministic',
  permissions: { allowed_actions: ['RESPOND', 'DATA_RESULT', 'CHECKOUT_HANDOFF'] },
};

/** Nodes of a deterministic N-step workflow: N-1 write tools (`step1`…) then an output with the last result. */
export function chainNodes(steps: number, tool = 'record') {
  const nodes: Record<string, unknown>[] = [];
  for (let i = 1; i < steps; i++)
    nodes.push({
      id: `step${i}`,
      type: 'tool',
      tool,
      arguments: { object: { step: i } },
      next: i + 1 < steps ? `step${i + 1}` : 'done',
    });
  nodes.push({
    id: 'done',
    type: 'output',
    action: 'DATA_RESULT',
    data: { object: { last: { var: `vars.step${steps - 1}.n` } } },
  });
  return nodes;
}

interface Caller {
  call(
    method: string,
    url: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any }>;
}

/**
 * Creates, tests and activates a flow through the API: one fixture mocks every tool of the nodes as `{ok, n: 1}`
 * (every resource as `{ok: true}`),
 * approves every approval, and expects `fixtureState` (default succeeded). Answers the flow.
 */
export async function publishedFlow(
  engine: Caller,
  token: string,
  name: string,
  nodes: Record<string, unknown>[],
  options: { fixtureState?: string; config?: Record<string, unknown>; input?: Record<string, unknown> } = {},
) {
  const created = await engine.call('POST', '/api/v1/runtime/flows', {
    token,
    body: { name, config: { ...BASE_CONFIG, ...options.config, nodes } },
  });
  if (created.status !== 201) throw new Error(`flow: ${JSON.stringify(created.body)}`);
  const tools: Record<string, unknown> = {};
  const resources: Record<string, unknown> = {};
  const approvals: Record<string, boolean> = {};
  for (const node of nodes) {
    if (typeof node.tool === 'string') tools[node.tool] = { ok: true, n: 1 };
    if (typeof node.resource === 'string') resources[node.resource] = { ok: true };
    if (node.type === 'approval') approvals[node.id as string] = true;
  }
  const id = created.body.id as string;
  const fixture = await engine.call('POST', `/api/v1/runtime/flows/${id}/fixtures`, {
    token,
    body: {
      name: 'smoke',
      input: options.input ?? {},
      mocks: { tools, resources, approvals },
      expect: { state: options.fixtureState ?? 'succeeded' },
    },
  });
  if (fixture.status !== 201) throw new Error(`fixture: ${JSON.stringify(fixture.body)}`);
  const tested = await engine.call('POST', `/api/v1/runtime/flows/${id}/test`, { token, body: {} });
  if (!tested.body.passed) throw new Error(`test: ${JSON.stringify(tested.body)}`);
  const activated = await engine.call('POST', `/api/v1/runtime/flows/${id}/activate`, { token, body: {} });
  if (activated.status !== 200) throw new Error(`activate: ${JSON.stringify(activated.body)}`);
  return activated.body as { id: string; active_version: number };
}

/** The flow worker process of the crash test and the durable bench (`fixtures/flow-worker-process.ts`). */
const FLOW_WORKER = fileURLToPath(new URL('./fixtures/flow-worker-process.ts', import.meta.url));

/** Starts a flow worker process with `env` on top of this one's; resolves once it prints `ready`. */
export function startFlowWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [FLOW_WORKER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (chunk) => {
      err += chunk;
    });
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('ready\n')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`worker exited ${code}: ${err.slice(-2000)}`)));
  });
}
