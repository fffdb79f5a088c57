// A zero-latency chat-completions upstream double for bench/engine-runtime.ts, in its own process: it answers
// every POST at once with a fixed completion and prints its address.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  model: 'bench-model',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'We have trail shoes in size 42.' }, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 },
});

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`upstream listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
