// Tool execution overhead of the engine (issue 14: p50 ≤ 1 ms, p99 ≤ 5 ms over a direct MCP call to the same server).
//   npm run bench -- tool-execution            (or: npx node bench/tool-execution.ts --calls 2000 --rounds 3)
// Three processes: the engine (`keel start engine`, SQLite), an MCP server (official SDK, streamable HTTP) and this
// client. The same MCP SDK client calls the tool directly on the server and through the engine's public tool endpoint
// (`engine_runtime_mcp_execute_tool`, realm credentials), interleaved call by call so both see the same load; the
// REST route `POST /api/v1/runtime/mcp/tools/execute` is measured the same way with undici.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, request } from 'undici';
import { cpuSecondsOf, listening, startEngine } from './lib/engine-process.ts';
import { machineLine, writeResultsSection } from './lib/results.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '300' },
    'cpu-calls': { type: 'string', default: '2000' },
    'mcp-port': { type: 'string', default: '9841' },
    /** A directory: the engine runs with --cpu-prof and writes its profile there when it stops. */
    profile: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const CPU_CALLS = Number(values['cpu-calls']);
const MCP_PORT = values['mcp-port'];

const serverProcess = spawn(process.execPath, [path.join(import.meta.dirname, 'tool-execution-server.ts')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [serverUrl, engine] = await Promise.all([
  listening(serverProcess, /mcp server listening on (\S+)/, 'mcp server'),
  startEngine(
    { ENGINE_WEBHOOK_WORKER: 'false', ENGINE_MCP_PORT: MCP_PORT, LOG_LEVEL: 'warn' },
    values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [],
  ),
]);
const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 30_000 });

async function rest(method: string, url: string, token: string | undefined, body?: unknown) {
  const response = await request(`${engine.url}${url}`, {
    method: method as 'POST',
    dispatcher,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const ms = (n: number) => `${n.toFixed(3)} ms`;

try {
  const { boot } = engine;
  const token = (
    await rest('POST', '/api/v1/auth/token', undefined, { access_key: boot.accessKey, secret_key: boot.secretKey })
  ).access_token as string;
  const registered = await rest('POST', '/api/v1/runtime/mcp/servers', token, {
    name: 'bench-server',
    url: serverUrl,
    auto_discover: true,
  });
  if (!registered.discovery?.ok) throw new Error(`discovery failed: ${JSON.stringify(registered.discovery)}`);

  const direct = new Client({ name: 'bench', version: '1.0.0' });
  await direct.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
  const viaEngine = new Client({ name: 'bench', version: '1.0.0' });
  await viaEngine.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${MCP_PORT}/mcp`), {
      requestInit: {
        headers: {
          'x-engine-realm-id': boot.realmId,
          'x-engine-access-key': boot.accessKey,
          'x-engine-secret-key': boot.secretKey,
        },
      },
    }),
  );

  const args = { sku: 'MUG-1' };
  const timed = async (work: () => Promise<unknown>) => {
    const start = process.hrtime.bigint();
    await work();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const callDirect = () => direct.callTool({ name: 'lookup_stock', arguments: args });
  const callMcp = async () => {
    const result = (await viaEngine.callTool({
      name: 'engine_runtime_mcp_execute_tool',
      arguments: { tool_name: 'lookup_stock', arguments: args },
    })) as { isError?: boolean; content: { text: string }[] };
    if (result.isError) throw new Error(result.content[0]?.text);
  };
  const callRest = () =>
    rest('POST', '/api/v1/runtime/mcp/tools/execute', token, { tool_name: 'lookup_stock', arguments: args });

  for (let i = 0; i < WARMUP; i++) {
    await callDirect();
    await callMcp();
    await callRest();
  }
  const loadBefore = os.loadavg()[0] ?? 0;
  const rounds: { direct: number[]; mcp: number[]; rest: number[]; mcpDelta: number[]; restDelta: number[] }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const times = { direct: [] as number[], mcp: [] as number[], rest: [] as number[] };
    const mcpDelta: number[] = [];
    const restDelta: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // Interleaved (rotating order), so each engine call has a direct call of the same moment to compare with.
      const order = i % 3;
      const d = order === 0 ? await timed(callDirect) : 0;
      const m = await timed(callMcp);
      const d2 = order !== 0 ? await timed(callDirect) : d;
      const r = await timed(callRest);
      times.direct.push(d2);
      times.mcp.push(m);
      times.rest.push(r);
      mcpDelta.push(m - d2);
      restDelta.push(r - d2);
    }
    for (const list of [times.direct, times.mcp, times.rest, mcpDelta, restDelta]) list.sort((a, b) => a - b);
    rounds.push({ ...times, mcpDelta, restDelta });
  }
  // The engine's own CPU time per call of each path (user + system, from /proc): what the engine spends, whatever
  // the other processes on the machine do to the wall clock. Each path alone, CPU_CALLS calls in a row.
  const cpuPerCall = async (call: () => Promise<unknown>) => {
    const before = cpuSecondsOf(engine.pid);
    for (let i = 0; i < CPU_CALLS; i++) await call();
    return ((cpuSecondsOf(engine.pid) - before) * 1000) / CPU_CALLS;
  };
  const cpuMcp = await cpuPerCall(callMcp);
  const cpuRest = await cpuPerCall(callRest);
  const loadAfter = os.loadavg()[0] ?? 0;
  await direct.close();
  await viaEngine.close();

  const stat = (pick: (r: (typeof rounds)[number]) => number[], p: number) =>
    median(rounds.map((r) => percentile(pick(r), p)));
  const row = (name: string, pick: (r: (typeof rounds)[number]) => number[]) =>
    `| ${name} | ${ms(stat(pick, 50))} | ${ms(stat(pick, 99))} |`;
  const overheadP50 = stat((r) => r.mcp, 50) - stat((r) => r.direct, 50);
  const overheadP99 = stat((r) => r.mcp, 99) - stat((r) => r.direct, 99);
  const restP50 = stat((r) => r.rest, 50) - stat((r) => r.direct, 50);
  const restP99 = stat((r) => r.rest, 99) - stat((r) => r.direct, 99);
  const markdown = `
## engine: tool execution overhead over a direct MCP call (issue 14)

\`npx node bench/tool-execution.ts --calls ${CALLS} --rounds ${ROUNDS} --warmup ${WARMUP}\` — three processes on one machine: the
engine (\`keel start engine\`, SQLite), an MCP server built on the official SDK (streamable HTTP, stateless, one read-only
tool \`lookup_stock\`, registered with \`auto_discover\`), and this client. One MCP SDK client (\`@modelcontextprotocol/client\`,
streamable HTTP, kept connected) calls \`lookup_stock\` directly on the server; a second client of the same kind calls it through
the engine's public tool endpoint (\`engine_runtime_mcp_execute_tool\` with the X-Engine-* realm credentials: authentication,
realm and agent rules, argument validation against the stored schema, the routing decision with its trace, the engine's own
MCP client to the server). \`POST /api/v1/runtime/mcp/tools/execute\` (bearer token, undici keep-alive) is measured the same
way. Calls are interleaved one by one so all paths see the same load; ${ROUNDS} rounds of ${CALLS} calls after ${WARMUP}
warm-up calls each; medians of the rounds. Overhead = engine path minus direct call at the same percentile.
${machineLine()}. 1-min load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after: the machine is shared with
other engineers' runs (2 cores), so absolute figures are noisy; the integrator reruns this on a quiet machine.

| path | p50 | p99 |
|---|---|---|
${row('direct MCP call (SDK client → server)', (r) => r.direct)}
${row('through the engine: public tool endpoint (same SDK client)', (r) => r.mcp)}
${row('through the engine: REST tools/execute (undici)', (r) => r.rest)}

| overhead over the direct call | p50 | p99 |
|---|---|---|
| public tool endpoint | ${ms(overheadP50)} | ${ms(overheadP99)} |
| REST tools/execute | ${ms(restP50)} | ${ms(restP99)} |

Engine CPU time per call (user + system of the engine process over ${CPU_CALLS} calls of one path in a row, after the
rounds; includes the engine's own MCP client call to the server): public tool endpoint ${ms(cpuMcp)}, REST tools/execute
${ms(cpuRest)}.

Goal: overhead p50 ≤ 1 ms and p99 ≤ 5 ms → ${overheadP50 <= 1 && overheadP99 <= 5 ? 'met' : 'NOT met'} on the tool endpoint (same client), ${restP50 <= 1 && restP99 <= 5 ? 'met' : 'NOT met'} on REST.
`;
  console.log(markdown);
  writeResultsSection('tool-execution', markdown);
} finally {
  await engine.stop();
  serverProcess.kill('SIGTERM');
  await dispatcher.close();
}
