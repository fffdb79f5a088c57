import { AppError, ConfigError } from '@keel/core';
import { EXIT } from './exit-codes.ts';

export { InputError, UsageError } from './error-types.ts';

const UNAVAILABLE = new Set(['EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES', 'ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT']);

/** What `keel` prints for a failure and the exit code it ends with (a stack trace only when `debug`). */
export function describeFailure(error: unknown, debug: boolean): { message: string; exitCode: number } {
  const failure = error as { name?: string; code?: unknown; message?: string; stack?: string };
  const message = String(failure?.message ?? error).split('\n')[0]!;
  const withStack = (text: string) => (debug && failure?.stack ? `${text}\n${failure.stack}` : text);
  // parseArgs failures (unknown option, missing value, stray positional) are usage errors.
  if (typeof failure?.code === 'string' && failure.code.startsWith('ERR_PARSE_ARGS_'))
    return { message: withStack(parseArgsMessage(failure.code, String(failure.message))), exitCode: EXIT.usage };
  if (failure?.name === 'UsageError') return { message: withStack(String(failure.message)), exitCode: EXIT.usage };
  if (error instanceof ConfigError || failure?.name === 'ConfigError')
    return { message: withStack(String(failure.message)), exitCode: EXIT.config };
  if (failure?.name === 'InputError') return { message: withStack(message), exitCode: EXIT.input };
  if (error instanceof AppError && error.statusCode < 500) {
    const details = error.details?.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)) ?? [];
    const text = details.length > 0 && !details.includes(message) ? `${message} (${details.join('; ')})` : message;
    return { message: withStack(text), exitCode: EXIT.refused };
  }
  if (typeof failure?.code === 'string' && UNAVAILABLE.has(failure.code))
    return { message: withStack(message), exitCode: EXIT.unavailable };
  const stack = failure?.stack ?? String(error);
  return {
    message: debug
      ? `unexpected failure: ${stack}`
      : `unexpected failure: ${message} (run again with --debug for the stack trace)`,
    exitCode: EXIT.internal,
  };
}

/** Node's parseArgs messages, rewritten as one line that names the flag and what is expected. */
function parseArgsMessage(code: string, text: string): string {
  const option = text.match(/'(-{1,2}[^' ]+)/)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option ?? ''}`.trim();
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/argument missing/.test(text)) return `${option} needs a value (${option} VALUE)`;
    return `${option} takes no value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const value = text.match(/argument '([^']*)'/)?.[1] ?? '';
    return `unexpected argument "${value.slice(0, 80)}"`;
  }
  return text.split('\n')[0]!;
}
