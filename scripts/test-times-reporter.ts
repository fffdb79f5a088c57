// A node:test reporter that writes one JSON object: the seconds each test file took (by its path from the working directory) (the sum of its top-level
// tests and suites). `scripts/run-tests.ts` reads these to balance the next run's shards.
import path from 'node:path';
import type { TestEvent } from 'node:test/reporters';

export default async function* testTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.nesting !== 0 || !data.file) continue;
    const file = path.relative(process.cwd(), data.file);
    seconds[file] = (seconds[file] ?? 0) + data.details.duration_ms / 1000;
  }
  yield JSON.stringify(seconds);
}
