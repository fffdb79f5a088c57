import fs from 'node:fs';
import { idForLog } from '@keel/core';
import type { FastifyBaseLogger } from 'fastify';
import { Agent, request } from 'undici';
import type { SecurityEventSink } from '../config.ts';

/** Where stream-async security events go. Events hold counts, types, positions and placeholders, never values. */
export interface SecurityEvents {
  emit(event: Record<string, unknown>): void;
  /** Resolves when every event emitted so far was written or delivered (or failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const HTTP_TIMEOUT_MS = 5000;

/** JSON lines to stdout or a file, or one POST per event to an HTTP(S) endpoint (SIEM collector). */
export function createSecurityEvents(sink: SecurityEventSink, log: FastifyBaseLogger): SecurityEvents {
  const pending = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  const flush = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };

  if (sink.kind === 'stdout') {
    return {
      emit: (event) => {
        process.stdout.write(`${JSON.stringify(event)}\n`);
      },
      flush,
      close: flush,
    };
  }
  if (sink.kind === 'file') {
    let stream: fs.WriteStream | undefined;
    return {
      emit(event) {
        stream ??= fs
          .createWriteStream(sink.path, { flags: 'a' })
          .on('error', (error) =>
            log.error(
              { err: { code: (error as NodeJS.ErrnoException).code } },
              'security event file cannot be written',
            ),
          );
        const target = stream;
        track(new Promise<void>((resolve) => target.write(`${JSON.stringify(event)}\n`, () => resolve())));
      },
      flush,
      async close() {
        await flush();
        const target = stream;
        if (target) await new Promise<void>((resolve) => target.end(() => resolve()));
      },
    };
  }
  const dispatcher = new Agent({ connections: 8, keepAliveTimeout: 10_000 });
  return {
    emit(event) {
      track(
        request(sink.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
          dispatcher,
          signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
        })
          .then(async (response) => {
            await response.body.dump();
            if (response.statusCode >= 300) {
              log.warn(
                { status: response.statusCode, rid: idForLog(String(event.rid)) },
                'security event endpoint refused an event',
              );
            }
          })
          .catch((error: unknown) =>
            log.warn(
              { reason: (error as Error).name, rid: idForLog(String(event.rid)) },
              'security event could not be delivered',
            ),
          ),
      );
    },
    flush,
    async close() {
      await flush();
      await dispatcher.close();
    },
  };
}
