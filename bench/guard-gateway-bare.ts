// Reference for bench/guard-gateway.ts: the thinnest Node pass-through (Fastify + a pooled undici client, no
// checks), so the results show what this machine allows any Node gateway before guardrails.
//   npx node bench/guard-gateway-bare.ts <upstream base URL> [port]
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: guard-gateway-bare.ts <upstream base URL>');
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (req, reply) => {
  const answer = await request(`${upstream}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(req.body),
    dispatcher,
  });
  return reply
    .status(answer.statusCode)
    .type('application/json')
    .send(await answer.body.text());
});
await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' });
console.log(`bare listening on http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
