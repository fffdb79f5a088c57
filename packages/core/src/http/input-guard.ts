import type { FastifyInstance } from 'fastify';
import { CoreErrors } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route only reads its strings (never stores them), so a NUL character in them is harmless. */
    acceptsNul?: boolean;
  }
}

/** Deeper JSON than any API here takes; recursive code further in (hashing, validation) stays far from the stack limit. */
export const MAX_INPUT_DEPTH = 64;

type Finding = { problem: 'nul' | 'depth'; path: string } | undefined;

/** `found` one level up, under `segment` (paths are only built for a finding, never while walking). */
const under = (segment: string, found: Finding): Finding =>
  found && { problem: found.problem, path: `/${segment}${found.path}` };

/** The first string holding U+0000 (keys included, when `nul` is checked) or the first value nested too deep. */
function inspect(value: unknown, depth: number, nul: boolean): Finding {
  if (typeof value === 'string') return nul && value.includes('\u0000') ? { problem: 'nul', path: '' } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_INPUT_DEPTH) return { problem: 'depth', path: '' };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = inspect(value[i], depth + 1, nul);
      if (found) return under(String(i), found);
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (nul && key.includes('\u0000')) return { problem: 'nul', path: `/${key.replaceAll('\u0000', '\\u0000')}` };
    const found = inspect((value as Record<string, unknown>)[key], depth + 1, nul);
    if (found) return under(key, found);
  }
  return undefined;
}

/**
 * Input no part of the system can take is a 400 at the edge, never a 500 further in:
 * - U+0000 in a body, query or path parameter: PostgreSQL text and JSON cannot hold it (and SQLite would store what
 *   PostgreSQL refuses). Routes that only read their input (detection) opt out with `config: { acceptsNul: true }`.
 * - JSON nested deeper than MAX_INPUT_DEPTH levels, on every route.
 */
export function rejectUnstorableInput(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const nul = request.routeOptions.config?.acceptsNul !== true;
    for (const [part, value] of [
      ['body', request.body],
      ['querystring', request.query],
      ['params', request.params],
    ] as const) {
      const found = inspect(value, 0, nul);
      if (!found) continue;
      const where = `${part}${found.path === '' ? '' : ` ${found.path}`}`;
      return done(
        CoreErrors.validation(
          found.problem === 'nul'
            ? `${where}: text must not contain the NUL character (\\u0000)`
            : `${where}: JSON must not be nested more than ${MAX_INPUT_DEPTH} levels deep`,
        ),
      );
    }
    done();
  });
}
