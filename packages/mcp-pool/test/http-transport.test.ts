import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describe, expect, it } from 'vitest';
import { httpHandle } from '../src/http-transport';
import type { TransportLoss } from '../src/transport';
import { flush } from './helpers';

function sseResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

function controlledStream() {
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      ctrl = c;
    },
  });
  return { stream, ctrl };
}

/** Drive the handle's fetch wrapper directly through the transport's `fetch` option. */
function setup(fetchImpl: FetchLike, kind: 'http' | 'sse' = 'http') {
  const losses: TransportLoss[] = [];
  const recordingFetch: FetchLike = (url, init) => fetchImpl(url, init);
  const h = httpHandle({ kind, url: 'http://127.0.0.1:1/mcp', fetch: recordingFetch });
  h.onLost((l) => losses.push(l));
  // The wrapper is what the SDK transport calls; reach it through its private field for a focused test.
  const wrapped = (h.transport as unknown as { _fetch: FetchLike })._fetch;
  return { h, losses, fetch: wrapped };
}

describe('httpHandle loss detection', () => {
  /** Open the GET event stream, receive one event, then let the server end it cleanly. */
  async function streamThenCleanEnd(kind: 'http' | 'sse'): Promise<TransportLoss[]> {
    const { stream, ctrl } = controlledStream();
    const { losses, fetch } = setup(async () => sseResponse(stream), kind);
    const res = await fetch('http://127.0.0.1:1/mcp', { method: 'GET' });
    const reader = res.body!.getReader();
    const read = reader.read();
    ctrl.enqueue(new TextEncoder().encode('data: x\n\n'));
    expect((await read).done).toBe(false);
    ctrl.close();
    expect((await reader.read()).done).toBe(true);
    await flush();
    return losses;
  }

  it('sse: a GET event stream that ends is a recoverable drop', async () => {
    const losses = await streamThenCleanEnd('sse');
    expect(losses).toHaveLength(1);
    expect(losses[0]).toMatchObject({ kind: 'drop', recoverable: true });
    expect(losses[0]?.message).toContain('closed by the server');
  });

  it('http: the server closing its optional GET stream cleanly is not a drop', async () => {
    expect(await streamThenCleanEnd('http')).toEqual([]);
  });

  it('a GET event stream that fails is a drop', async () => {
    const { stream, ctrl } = controlledStream();
    const { losses, fetch } = setup(async () => sseResponse(stream));
    const res = await fetch('http://127.0.0.1:1/mcp', { method: 'GET' });
    const reader = res.body!.getReader();
    const read = reader.read();
    ctrl.error(new Error('socket hang up'));
    await expect(read).rejects.toThrow('socket hang up');
    expect(losses[0]?.message).toContain('socket hang up');
  });

  it('cancelling the stream (our own close) is not a drop', async () => {
    const { stream } = controlledStream();
    const { losses, fetch } = setup(async () => sseResponse(stream));
    const res = await fetch('http://127.0.0.1:1/mcp', { method: 'GET' });
    await res.body!.cancel();
    await flush();
    expect(losses).toEqual([]);
  });

  it('nothing is reported after terminate()', async () => {
    const { stream, ctrl } = controlledStream();
    const { h, losses, fetch } = setup(async () => sseResponse(stream));
    const res = await fetch('http://127.0.0.1:1/mcp', { method: 'GET' });
    const reader = res.body!.getReader();
    const read = reader.read().catch(() => undefined);
    await h.terminate();
    ctrl.error(new Error('aborted'));
    await read;
    expect(losses).toEqual([]);
  });

  it.each([
    [
      'network failure of a POST',
      async () => Promise.reject(new TypeError('fetch failed')),
      { method: 'POST' },
      1,
    ],
    [
      '404 for our session id',
      async () => new Response('gone', { status: 404 }),
      { method: 'POST', headers: { 'mcp-session-id': 'abc' } },
      1,
    ],
    [
      '404 without a session (plain wrong url)',
      async () => new Response('no', { status: 404 }),
      { method: 'POST' },
      0,
    ],
    ['a normal JSON answer', async () => new Response('{}', { status: 200 }), { method: 'POST' }, 0],
    [
      'a request aborted by us',
      async () => Promise.reject(new DOMException('aborted', 'AbortError')),
      { method: 'POST', signal: AbortSignal.abort() },
      0,
    ],
  ] as const)('%s', async (_label, impl, init, expected) => {
    const { losses, fetch } = setup(impl as FetchLike);
    await fetch('http://127.0.0.1:1/mcp', init as RequestInit).catch(() => undefined);
    expect(losses).toHaveLength(expected);
  });
});
