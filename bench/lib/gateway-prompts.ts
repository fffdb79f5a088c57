// Texts the guard benchmarks send: PII-dense 1 KB prompts from the development corpus and ordinary 1 KB prompts.
import fs from 'node:fs';
import path from 'node:path';

const CORPUS = path.join(import.meta.dirname, '..', '..', '..', 'shared', 'bench', 'pii', 'data', 'dev.jsonl');

/**
 * Prompts (texts) of about 1 KB: development-corpus records joined until each reaches 1,024 bytes (names, e-mails,
 * phones, ids in running text).
 */
export function kilobytePrompts(count: number): string[] {
  const records = fs
    .readFileSync(CORPUS, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).text as string);
  const prompts: string[] = [];
  let current = '';
  for (let i = 0; prompts.length < count; i = (i + 1) % records.length) {
    current += `${records[i]}\n`;
    if (Buffer.byteLength(current) >= 1024) {
      prompts.push(current.slice(0, 1024));
      current = '';
    }
  }
  return prompts;
}

/** Ordinary 1 KB prompts (a request with some context), one in ten carrying an e-mail address. */
export function plainPrompts(count: number): string[] {
  const topics = [
    'the quarterly roadmap',
    'the hiring plan',
    'a customer escalation',
    'the release notes',
    'our pricing page',
  ];
  const prompts: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = `Request ${i}: please summarize ${topics[i % topics.length]} and list three follow-ups. `;
    if (i % 10 === 0) text += `Send the summary to reviewer${i}@example.org. `;
    while (text.length < 1024) {
      text += `Paragraph ${text.length}: the team discussed ${topics[(i + text.length) % topics.length]}, open questions, owners and dates. `;
    }
    prompts.push(text.slice(0, 1024));
  }
  return prompts;
}

/** A chat-completions request body with one user message. */
export const chatBody = (prompt: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: prompt }], ...extra });
