import http from 'node:http';
import type { AddressInfo } from 'node:net';

const STOP_WORDS = new Set(
  'need want looking look find buy please would like some with that this have show give me for the and a an to of my our can you get'.split(
    ' ',
  ),
);

/** The scripted answer to one chat-completions request of the shopping assistant (deterministic, no model). */
export function scriptedAnswer(system: string, user: string): string {
  if (system.includes('Choose exactly one of these keys')) {
    let products: unknown[] = [];
    try {
      products = (JSON.parse(user) as { products?: unknown[] }).products ?? [];
    } catch {
      // not the shopping assistant's input: no products
    }
    return JSON.stringify({ choice: products.length > 0 ? 'match' : 'none', confidence: 0.9 });
  }
  const words = user.toLowerCase().match(/[a-z]{3,}/g) ?? [];
  const useful = words.filter((word) => !STOP_WORDS.has(word));
  if (system.includes('broader search word')) return useful.at(-1) ?? 'gear';
  if (system.includes('product to search for')) return useful[0] ?? 'product';
  try {
    const facts = JSON.parse(user) as { product?: string; quantity?: number; total?: string; currency?: string };
    if (facts.product)
      return `Your cart with ${facts.quantity ?? 1} × ${facts.product} (${facts.total} ${facts.currency}) is ready for checkout.`;
  } catch {
    // plain text below
  }
  return 'Done.';
}

/**
 * A scripted local model for a first try without a provider: an OpenAI-compatible `POST …/chat/completions` on
 * 127.0.0.1 (a port of its own) answering the shopping assistant's steps by rule (`scriptedAnswer`).
 */
export async function startScriptedModel(): Promise<{ url: string; calls: number; close(): Promise<void> }> {
  const state = { calls: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      state.calls++;
      let messages: { role: string; content: string }[] = [];
      try {
        messages = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: typeof messages }).messages;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const system = messages.find((m) => m.role === 'system')?.content ?? '';
      const user = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
      const content = scriptedAnswer(system, user);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `scripted-${state.calls}`,
          object: 'chat.completion',
          model: 'scripted',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get calls() {
      return state.calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
