/**
 * A small Server-Sent Events parser (the WHATWG event-stream format), shared
 * by every streaming adapter. The core is pure: feed text, get events.
 */

/** One dispatched event. `event` is `message` when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Incremental parser: `push()` text as it arrives, `end()` at EOF. */
export interface SseParser {
  push(text: string): SseEvent[];
  /** Flushes a last event that was not followed by a blank line (lenient: servers forget it). */
  end(): SseEvent[];
}

export function createSseParser(): SseParser {
  let buffer = '';
  let started = false;
  let eventName = '';
  let data: string[] = [];
  let hasData = false;
  let id: string | undefined;

  const dispatch = (out: SseEvent[]): void => {
    if (hasData) {
      const e: SseEvent = { event: eventName || 'message', data: data.join('\n') };
      if (id !== undefined) e.id = id;
      out.push(e);
    }
    eventName = '';
    data = [];
    hasData = false;
  };

  const line = (text: string, out: SseEvent[]): void => {
    if (text === '') {
      dispatch(out);
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      hasData = true;
    } else if (field === 'event') eventName = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  };

  return {
    push(text) {
      buffer += text;
      if (!started && buffer.length > 0) {
        started = true;
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
      }
      const out: SseEvent[] = [];
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c !== '\n' && c !== '\r') continue;
        // A trailing \r may be the first half of \r\n: wait for the next chunk.
        if (c === '\r' && i === buffer.length - 1) break;
        line(buffer.slice(start, i), out);
        if (c === '\r' && buffer[i + 1] === '\n') i++;
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (buffer.length > 0) {
        line(buffer.replace(/\r$/, ''), out);
        buffer = '';
      }
      dispatch(out);
      return out;
    },
  };
}

/** Reads an event-stream body to its end, yielding events as they complete; `onChunk` sees every raw read. */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<SseEvent> {
  const parser = createSseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    // Early exit (an error, a consumer that stopped): release the connection.
    reader.cancel().catch(() => {});
  }
}
