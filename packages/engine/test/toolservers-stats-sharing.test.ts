import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { openCache } from '@keel/core';
import { waitUntil } from '@keel/core/testing';
import type { RuntimeContext } from '../src/runtime/runtime-context.ts';
import { createToolRuntime } from '../src/toolservers/tool-runtime.ts';

// Two engine instances share observed tool-server health through Redis (each publishes its snapshot, merges the others').
for (const redisUrl of process.env.TEST_REDIS_URL ? [process.env.TEST_REDIS_URL] : []) {
  test('observed server statistics are shared between instances through Redis', async (t) => {
    const service = `i14-tool-stats-${randomUUID()}`;
    const caches = [openCache({ redisUrl, service }), openCache({ redisUrl, service })];
    t.after(async () => {
      for (const opened of caches) await opened.close();
    });
    // Wait until Redis answers (the engine's other Redis traffic does the same before stats are published).
    for (const opened of caches) await waitUntil(() => opened.cache.ping(), 5000);
    const runtimes = await Promise.all(
      caches.map((opened) =>
        createToolRuntime(
          { cache: opened.cache, clock: Date.now, allowPrivateUrls: true } as unknown as RuntimeContext,
          {
            publishIntervalMs: 50,
          },
        ),
      ),
    );
    t.after(async () => {
      for (const runtime of runtimes) await runtime.close();
    });
    const [a, b] = runtimes as [(typeof runtimes)[0], (typeof runtimes)[0]];
    for (let i = 0; i < 4; i++) a.stats.record({ server_id: 'srv-1', kind: 'call', ok: false, latency_ms: 20 });
    await waitUntil(() => b.stats.view('srv-1').samples > 3.5, 5000);
    assert.equal(b.stats.view('srv-1').health, 'unhealthy');
    b.stats.record({ server_id: 'srv-2', kind: 'probe', ok: true, latency_ms: 12 });
    await waitUntil(() => a.stats.view('srv-2').samples > 0.5, 5000);
    assert.equal(a.stats.view('srv-1').samples > 3.5, true);
  });
}
