import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describe, expect, it } from 'vitest';
import { httpHandle } from '../src/http-transport';
import type { TransportLoss } from '../src/transport';

/** The handle's fetch wrapper (what the SDK transport calls), over a scripted fetch. */
function setup(
  answer: (init: RequestInit | undefined) => Response | Promise<Response>,
  resumeAttempts?: number,
) {
  const losses: TransportLoss[] = [];
  const fetchImpl: FetchLike = async (_url, init) => answer(init);
  const h = httpHandle({ kind: 'http', url: 'http://127.0.0.1:1/mcp', fetch: fetchImpl, resumeAttempts });
  h.onLost((l) => losses.push(l));
  const wrapped = (h.transport as unknown as { _fetch: FetchLike })._fetch;
  const resume = (id: string) =>
    wrapped('http://127.0.0.1:1/mcp', { method: 'GET', headers: { 'last-event-id': id } }).catch(
      (err: unknown) => err,
    );
  return { losses, resume, h };
}

describe('httpHandle: bounded stream resumption (SEP-1699)', () => {
  it('failed resumption attempts are not losses until the bound; the last one is', async () => {
    const { losses, resume } = setup(() => new Response('no', { status: 500 }), 3);
    await resume('e1');
    await resume('e1');
    expect(losses).toEqual([]);
    await resume('e1');
    expect(losses).toHaveLength(1);
    expect(losses[0]).toMatchObject({ kind: 'drop', recoverable: true });
    expect(losses[0]!.message).toMatch(/could not resume .*Last-Event-ID e1.* after 3 attempts: HTTP 500/);
  });

  it('network failures of a resumption count the same way, per stream', async () => {
    const { losses, resume } = setup(() => {
      throw new TypeError('fetch failed');
    }, 2);
    await resume('a');
    await resume('b');
    expect(losses).toEqual([]);
    await resume('a');
    expect(losses).toHaveLength(1);
    expect(losses[0]!.message).toMatch(/Last-Event-ID a/);
  });

  it('a successful resumption resets the count', async () => {
    let status = 500;
    const { losses, resume } = setup(
      () =>
        new Response(status === 200 ? '' : 'no', {
          status,
          headers: { 'content-type': status === 200 ? 'text/event-stream' : 'text/plain' },
        }),
      2,
    );
    await resume('x');
    status = 200;
    await resume('x');
    status = 500;
    await resume('x');
    expect(losses).toEqual([]);
  });

  it('405 (the server offers no GET stream) ends resumption at once: a loss', async () => {
    const { losses, resume } = setup(() => new Response(null, { status: 405 }), 3);
    await resume('e9');
    expect(losses).toHaveLength(1);
    expect(losses[0]!.message).toMatch(/after 1 attempt: HTTP 405/);
  });

  it('nothing is reported once the handle is terminating', async () => {
    const { losses, resume, h } = setup(() => new Response(null, { status: 405 }), 3);
    await h.terminate();
    await resume('e1');
    expect(losses).toEqual([]);
  });
});
