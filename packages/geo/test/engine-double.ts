import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted answer: the chat-completions body fields the double returns for one call. */
export interface ScriptedAnswer {
  text: string;
  citations?: unknown[];
  annotations?: unknown[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface EngineDouble {
  baseUrl(engine: string): string;
  /** How many times each (engine, prompt text) was asked. */
  asked: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A deterministic chat-completions engine on 127.0.0.1: `POST /<engine>/chat/completions` answers the prompt's
 * next scripted answer (its n-th call gets script[n % length]); a prompt without a script gets `default`.
 */
export async function startEngineDouble(
  scripts: Record<string, Record<string, ScriptedAnswer[]>>,
  options: { delayMs?: number } = {},
): Promise<EngineDouble> {
  const asked = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const engine = (request.url ?? '').split('/')[1] ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        messages: { role: string; content: string }[];
      };
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const key = `${engine}|${prompt}`;
      const n = asked.get(key) ?? 0;
      asked.set(key, n + 1);
      const script = scripts[engine]?.[prompt] ?? scripts[engine]?.default ?? [{ text: 'No idea.' }];
      const answer = script[n % script.length]!;
      const payload = {
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: answer.text,
              ...(answer.annotations ? { annotations: answer.annotations } : {}),
            },
            finish_reason: 'stop',
          },
        ],
        ...(answer.citations ? { citations: answer.citations } : {}),
        usage: answer.usage ?? { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
      };
      const send = () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(payload));
      };
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: (engine) => `http://127.0.0.1:${port}/${engine}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
