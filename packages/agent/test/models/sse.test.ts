import { describe, expect, it } from 'vitest';
import { createSseParser, readSse } from '../../src/models/sse';

function parseAll(chunks: string[]) {
  const p = createSseParser();
  return [...chunks.flatMap((c) => p.push(c)), ...p.end()];
}

describe('createSseParser', () => {
  it('dispatches on blank lines, names events, joins multi-line data, skips comments', () => {
    expect(parseAll([': comment\nevent: a\ndata: 1\ndata: 2\n\ndata: x\n\n'])).toEqual([
      { event: 'a', data: '1\n2' },
      { event: 'message', data: 'x' },
    ]);
  });

  it('gives the same events however the text is split, with LF, CRLF or CR line ends', () => {
    const text = 'event: e\r\ndata: {"a":1}\r\n\r\nid: 7\rdata:no-space\r\rdata: last\n\n';
    const whole = parseAll([text]);
    expect(whole).toEqual([
      { event: 'e', data: '{"a":1}' },
      { event: 'message', data: 'no-space', id: '7' },
      { event: 'message', data: 'last', id: '7' },
    ]);
    for (let i = 1; i < text.length; i++) {
      expect(parseAll([text.slice(0, i), text.slice(i)])).toEqual(whole);
    }
    expect(parseAll([...text])).toEqual(whole);
  });

  it('strips a leading BOM, ignores events with no data, flushes a last event without blank line', () => {
    expect(parseAll(['\uFEFFevent: only-name\n\n', 'data: tail'])).toEqual([
      { event: 'message', data: 'tail' },
    ]);
  });
});

describe('readSse', () => {
  it('decodes UTF-8 split across byte chunks', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    });
    const events = [];
    for await (const e of readSse(body)) events.push(e);
    expect(events).toEqual([{ event: 'message', data: 'héllo ✓' }]);
  });
});
