/** `LOG_FORMAT`: `auto` (the default) writes the human format to a terminal and JSON lines anywhere else. */
export type LogFormat = 'auto' | 'json' | 'pretty';

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

/** The format log lines are written in to `stream` for the `LOG_FORMAT` setting. */
export function selectLogFormat(setting: LogFormat, stream: { isTTY?: boolean }): 'json' | 'pretty' {
  if (setting !== 'auto') return setting;
  return stream.isTTY === true ? 'pretty' : 'json';
}

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '90' },
  20: { name: 'DEBUG', color: '36' },
  30: { name: 'INFO', color: '32' },
  40: { name: 'WARN', color: '33' },
  50: { name: 'ERROR', color: '31' },
  60: { name: 'FATAL', color: '35' },
};

/** Fields every line shows in its own place; the others follow as key=value. */
const PLACED = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'service',
  'msg',
  'reqId',
  'method',
  'route',
  'statusCode',
  'ms',
  'err',
]);

function statusColor(status: number): string {
  if (status >= 500) return '31';
  if (status >= 400) return '33';
  return '32';
}

function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  return `${date.toTimeString().slice(0, 8)}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}

/**
 * One JSON log line (as pino writes it) in the human format, pino-pretty style: time, level, service, then for a
 * request `METHOD route status ms` and its request id, otherwise the message; other fields as key=value. Only
 * fields the JSON line holds are shown (the same redaction applies). A line that is not JSON passes unchanged.
 */
export function prettyLogLine(line: string, colors: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (!entry || typeof entry !== 'object') return `${line.trimEnd()}\n`;
  const paint = (code: string, text: string) => (colors ? `\u001b[${code}m${text}\u001b[39m` : text);
  const dim = (text: string) => (colors ? `\u001b[2m${text}\u001b[22m` : text);
  const level = LEVELS[entry.level as number] ?? { name: String(entry.level ?? 'LOG').toUpperCase(), color: '39' };
  const parts = [dim(clock(entry.time)), paint(level.color, level.name.padEnd(5))];
  if (entry.service !== undefined) parts.push(paint('36', String(entry.service)));
  if (typeof entry.method === 'string' && typeof entry.statusCode === 'number') {
    parts.push(`${entry.method} ${entry.route ?? ''}`, paint(statusColor(entry.statusCode), String(entry.statusCode)));
    if (typeof entry.ms === 'number') parts.push(`${entry.ms} ms`);
  } else if (entry.msg !== undefined) parts.push(String(entry.msg));
  const rest = Object.entries(entry).filter(([key]) => !PLACED.has(key));
  for (const [key, value] of rest) parts.push(dim(`${key}=`) + valueText(value));
  if (entry.reqId !== undefined) parts.push(dim(`req ${String(entry.reqId)}`));
  const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
  // An error's stack on the lines below, as pino-pretty shows it.
  const trace = err
    ? `\n    ${(err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`).split('\n').join('\n    ')}`
    : '';
  return `${parts.join(' ')}${trace}\n`;
}

/** A log destination that writes each JSON line it is given to `out` in the human format. */
export function prettyLogDestination(out: NodeJS.WritableStream, colors: boolean): { write(line: string): boolean } {
  return {
    write(chunk: string) {
      let written = true;
      for (const line of chunk.split('\n')) if (line.length > 0) written = out.write(prettyLogLine(line, colors));
      return written;
    },
  };
}
