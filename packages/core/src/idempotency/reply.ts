import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotentResponse } from './idempotency.ts';

/**
 * Sends the outcome of `runIdempotent`: the stored status and body, `Idempotent-Replayed: true` on a replay,
 * and the current trace id in a replayed error body (the stored one belonged to the first request).
 */
export function sendIdempotent<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: IdempotentResponse<T>,
): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  let body: unknown = outcome.body;
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (outcome.replayed && outcome.statusCode >= 400 && error && typeof error === 'object') {
    body = { error: { ...error, traceId: request.id } };
  }
  return reply.status(outcome.statusCode).send(body);
}
