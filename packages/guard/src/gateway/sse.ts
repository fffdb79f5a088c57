/** One server-sent event: its raw text (to forward unchanged) and its joined `data:` lines (undefined if none). */
export interface SseEvent {
  raw: string;
  data: string | undefined;
}

/**
 * An incremental SSE parser: feed it decoded text in any slicing, get whole events back. Events end at a
 * blank line (`\n\n`, `\r\n\r\n` or `\r\r`); `data:` lines are joined with `\n` as the SSE standard says.
 * `maxEventChars` bounds what one unfinished event may buffer.
 */
export function createSseParser(maxEventChars: number) {
  let buffer = '';
  const parseEvent = (raw: string): SseEvent => {
    let data: string | undefined;
    for (const line of raw.split(/\r\n|\r|\n/)) {
      if (!line.startsWith('data:')) continue;
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    return { raw, data };
  };
  return {
    push(text: string): SseEvent[] {
      buffer += text;
      const events: SseEvent[] = [];
      for (;;) {
        const match = /\r\n\r\n|\n\n|\r\r/.exec(buffer);
        if (!match) break;
        const raw = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (raw.length > 0) events.push(parseEvent(raw));
      }
      if (buffer.length > maxEventChars) throw new Error('an SSE event exceeds the size limit');
      return events;
    },
    /** Whatever was left without a closing blank line, as a last event. */
    end(): SseEvent[] {
      const rest = buffer;
      buffer = '';
      return rest.trim().length > 0 ? [parseEvent(rest)] : [];
    },
  };
}
