// A fast local chat-completions upstream for the gateway benchmark and for manual runs / fuzzing.
//   npx node bench/guard-gateway-upstream.ts [--port 0] [--gap-ms 0]
// Prints "upstream listening on http://127.0.0.1:PORT/v1". Non-streaming calls get a short completion;
// `stream: true` gets an SSE stream (role chunk, one chunk per word, finish chunk), then a usage chunk when
// stream_options.include_usage is set, then [DONE]; `--gap-ms` spaces the chunks. Guard's own AI-scoring
// calls get a well-formed scores answer, so their verdicts are cached like in production.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, 'gap-ms': { type: 'string', default: '0' } },
});
const gapMs = Number(values['gap-ms']);

const ANSWER = 'Thanks for the details. Your request has been noted and a colleague will get back to you shortly.';
/** Token-like pieces, as models stream them: words with their leading space ("Thanks", " for", " the"…). */
const PIECES = ANSWER.split(/(?=\s)/);
const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_763_000_000,
  model: 'bench-model',
  choices: [
    { index: 0, message: { role: 'assistant', content: ANSWER, refusal: null }, logprobs: null, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 256, completion_tokens: 20, total_tokens: 276 },
});
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_763_000_000,
    model: 'bench-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  })}\n\n`;
const EVENTS = [
  chunk({ role: 'assistant', content: '' }),
  ...PIECES.map((content) => chunk({ content })),
  chunk({}, 'stop'),
];
const USAGE = `data: ${JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1_763_000_000,
  model: 'bench-model',
  choices: [],
  usage: { prompt_tokens: 256, completion_tokens: PIECES.length, total_tokens: 256 + PIECES.length },
})}\n\n`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"invalid JSON","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    const first = body?.messages?.[0];
    if (first?.role === 'system' && String(first.content).startsWith('You are a data-loss-prevention classifier')) {
      const lines = String(body.messages.at(-1)?.content ?? '')
        .split('\n')
        .filter(Boolean).length;
      const scores = JSON.stringify({ scores: Array.from({ length: lines }, () => 0.9) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: scores }, finish_reason: 'stop' }],
        }),
      );
      return;
    }
    if (body?.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const event of EVENTS) {
      if (res.destroyed) return;
      res.write(event);
      if (gapMs > 0) await sleep(gapMs);
    }
    if (body.stream_options?.include_usage) res.write(USAGE);
    res.end('data: [DONE]\n\n');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`upstream listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
