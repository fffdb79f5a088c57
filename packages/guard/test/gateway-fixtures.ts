// Shared pieces of the gateway tests: a chat-completions upstream double that answers JSON or SSE, a guard
// listening on 127.0.0.1, and the official openai client pointed at it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import OpenAI from 'openai';
import { buildGuard, type GuardUnderTest, testDatabaseTargets } from './helper.ts';

export const [target] = testDatabaseTargets();

export interface UpstreamCall {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** Resolves when the gateway closed the connection before the answer was complete. */
  aborted: Promise<void>;
  wasAborted: boolean;
}

export type UpstreamAnswer =
  | { status?: number; json: unknown; headers?: Record<string, string>; delayMs?: number }
  | { sse: (string | object)[]; gapMs?: number; done?: boolean; holdOpen?: boolean; headers?: Record<string, string> }
  | { raw: string; status?: number; contentType?: string };

export interface ChatUpstream {
  url: string;
  /** Chat calls the gateway forwarded (guard's own AI-scoring calls are kept apart in `scoringCalls`). */
  calls: UpstreamCall[];
  scoringCalls: UpstreamCall[];
}

/** Guard's AI scorer shares the upstream; its calls are answered 500 so scores stay local and deterministic. */
function isScoringCall(body: any): boolean {
  const first = body?.messages?.[0];
  return first?.role === 'system' && String(first.content).startsWith('You are a data-loss-prevention classifier');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chat-completions upstream served by the test: records every call; `reply` decides the answer. */
export async function startChatUpstream(
  t: TestContext,
  reply: (call: UpstreamCall) => UpstreamAnswer | Promise<UpstreamAnswer>,
): Promise<ChatUpstream> {
  const calls: UpstreamCall[] = [];
  const scoringCalls: UpstreamCall[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let markAborted!: () => void;
    const call: UpstreamCall = {
      url: req.url ?? '',
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
      aborted: new Promise<void>((resolve) => {
        markAborted = resolve;
      }),
      wasAborted: false,
    };
    res.on('close', () => {
      if (!res.writableFinished) {
        call.wasAborted = true;
        markAborted();
      }
    });
    if (isScoringCall(call.body)) {
      scoringCalls.push(call);
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"scoring disabled in tests"}}');
      return;
    }
    calls.push(call);
    const answer = await reply(call);
    if ('json' in answer) {
      if (answer.delayMs) await sleep(answer.delayMs);
      if (res.destroyed) return;
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.json));
      return;
    }
    if ('raw' in answer) {
      res.writeHead(answer.status ?? 200, { 'content-type': answer.contentType ?? 'text/plain' });
      res.end(answer.raw);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...answer.headers });
    for (const event of answer.sse) {
      if (res.destroyed) return;
      res.write(typeof event === 'string' ? event : `data: ${JSON.stringify(event)}\n\n`);
      if (answer.gapMs) await sleep(answer.gapMs);
    }
    if (answer.holdOpen) return;
    if (answer.done !== false && !res.destroyed) res.write('data: [DONE]\n\n');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${port}/v1`, calls, scoringCalls };
}

export interface GatewayUnderTest extends GuardUnderTest {
  url: string;
  client: OpenAI;
}

/** Guard listening on 127.0.0.1 in front of `upstreamUrl`, and an openai client whose baseURL is the gateway. */
export async function startGateway(
  t: TestContext,
  upstreamUrl: string | undefined,
  env: Record<string, string> = {},
  clientOptions: { apiKey?: string; headers?: Record<string, string> } = {},
): Promise<GatewayUnderTest> {
  const guard = await buildGuard(t, target!, {
    ...(upstreamUrl ? { AI_MODEL_URL: upstreamUrl } : {}),
    GATEWAY_SECURITY_EVENTS: 'file:/dev/null',
    ...env,
  });
  await guard.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = guard.app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const client = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: clientOptions.apiKey ?? 'unused',
    maxRetries: 0,
    defaultHeaders: clientOptions.headers,
  });
  return { ...guard, url, client };
}

/** A non-streaming chat completion whose choices say `contents`. */
export function completionOf(contents: string | (string | null)[], extra: Record<string, unknown> = {}) {
  const list = Array.isArray(contents) ? contents : [contents];
  return {
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1_763_000_000,
    model: 'up-model',
    system_fingerprint: 'fp_test',
    choices: list.map((content, index) => ({
      index,
      message: { role: 'assistant', content, refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    })),
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ...extra,
  };
}

/** One `chat.completion.chunk` with the given choices. */
export function chunk(choices: object[], extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-stream',
    object: 'chat.completion.chunk',
    created: 1_763_000_000,
    model: 'up-model',
    system_fingerprint: 'fp_test',
    choices,
    ...extra,
  };
}

/** The chunks an OpenAI upstream sends for `pieces` of one choice: role first, the pieces, then finish_reason. */
export function streamOf(pieces: string[], options: { index?: number; usage?: boolean } = {}) {
  const index = options.index ?? 0;
  const chunks: object[] = [
    chunk([{ index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]),
    ...pieces.map((content) => chunk([{ index, delta: { content }, logprobs: null, finish_reason: null }])),
    chunk([{ index, delta: {}, logprobs: null, finish_reason: 'stop' }]),
  ];
  if (options.usage) {
    chunks.push(
      chunk([], { usage: { prompt_tokens: 7, completion_tokens: pieces.length, total_tokens: 7 + pieces.length } }),
    );
  }
  return chunks;
}

/** Reads a raw SSE response: every `data:` payload in order (`[DONE]` kept as the string). */
export async function readSse(response: Response): Promise<(string | any)[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map((event) => event.trim())
    .filter((event) => event.startsWith('data:'))
    .map((event) => {
      const data = event.slice(5).trim();
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

/** POSTs a body to the gateway with fetch (for raw wire checks the openai client hides). */
export function postChat(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
