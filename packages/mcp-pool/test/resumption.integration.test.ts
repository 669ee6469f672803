import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mergeSources } from '@wave/mcp-config';
import { waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { McpPool } from '../src/pool';
import { countingClock } from './helpers';

/**
 * A loopback Streamable HTTP server that answers `tools/call` on an SSE stream
 * with only a priming event (an id and `retry:`), closes that stream, and
 * delivers the result when the client resumes with a GET carrying
 * `Last-Event-ID` (SEP-1699). `resume` decides how a resumption GET is answered.
 */
interface ResumingServer {
  url: string;
  gets: { lastEventId: string | undefined; at: number }[];
  closedAt: number[];
  resume: 'deliver' | 'refuse';
  /** Which request gets its stream closed after the priming event. */
  primeOn: 'tools/call' | 'tools/list';
}

const servers: Server[] = [];
const pools: McpPool[] = [];

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

function readBody(req: IncomingMessage): Promise<{ id?: number | string; method?: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(err);
      }
    });
  });
}

async function resumingServer(
  retryMs: number,
  resume: ResumingServer['resume'],
  primeOn: ResumingServer['primeOn'] = 'tools/call',
): Promise<ResumingServer> {
  const state: ResumingServer = { url: '', gets: [], closedAt: [], resume, primeOn };
  const session = 'resume-session';
  /** The request whose answer waits for the resumption, and that answer. */
  let pending: { id: number | string | undefined; result: unknown } | undefined;
  const TOOLS = { tools: [{ name: 'slow', inputSchema: { type: 'object', properties: {} } }] };
  let eventId = 0;
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session });
    res.end(JSON.stringify(body));
  };
  const srv = createServer((req, res) => {
    if (req.method === 'GET') {
      const last = req.headers['last-event-id'];
      state.gets.push({ lastEventId: typeof last === 'string' ? last : undefined, at: Date.now() });
      if (typeof last !== 'string' || state.resume === 'refuse' || pending === undefined) {
        res.writeHead(state.resume === 'refuse' && typeof last === 'string' ? 500 : 405);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': session });
      eventId += 1;
      const result = { jsonrpc: '2.0', ...pending };
      pending = undefined;
      res.write(`event: message\nid: e${eventId}\ndata: ${JSON.stringify(result)}\n\n`);
      return;
    }
    if (req.method === 'DELETE') {
      res.writeHead(200);
      res.end();
      return;
    }
    void readBody(req).then((msg) => {
      if (msg.method === 'initialize') {
        json(res, {
          jsonrpc: '2.0',
          id: msg.id,
          result: {
            protocolVersion: '2025-11-25',
            serverInfo: { name: 'resuming', version: '1.0.0' },
            capabilities: { tools: {} },
          },
        });
      } else if (msg.method === 'tools/list' && state.primeOn !== 'tools/list') {
        json(res, { jsonrpc: '2.0', id: msg.id, result: TOOLS });
      } else if (msg.method === 'tools/list' || msg.method === 'tools/call') {
        pending = {
          id: msg.id,
          result: msg.method === 'tools/list' ? TOOLS : { content: [{ type: 'text', text: 'resumed' }] },
        };
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': session });
        eventId += 1;
        res.write(`id: e${eventId}\nretry: ${retryMs}\ndata: \n\n`);
        // Close the stream mid-call, before the response.
        setTimeout(() => {
          state.closedAt.push(Date.now());
          res.end();
        }, 20);
      } else if (msg.id === undefined) {
        res.writeHead(202);
        res.end();
      } else {
        json(res, { jsonrpc: '2.0', id: msg.id, result: {} });
      }
    });
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`;
  return state;
}

function make(url: string, connectMs = 20_000): McpPool {
  const servers = mergeSources([{ source: 'constructor', servers: { remote: { type: 'http', url } } }], {
    workdir: '/tmp/wave-pool-resume',
  }).servers;
  const pool = McpPool.create({
    servers,
    clock: countingClock(),
    timeouts: { callMs: 20_000, connectMs },
    reconnect: { initialDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 1 },
  });
  pools.push(pool);
  return pool;
}

describe('resumable streams (SEP-1699)', () => {
  it('a POST stream closed after a priming event is resumed with Last-Event-ID; the call returns its result', async () => {
    const srv = await resumingServer(200, 'deliver');
    const pool = make(srv.url);
    await pool.connect('remote');
    expect(pool.get('remote')?.status).toBe('connected');
    const t0 = Date.now();
    const result = await pool.callTool('remote', 'slow', {});
    expect(result.content).toEqual([{ type: 'text', text: 'resumed' }]);
    // Well under the 20 s call timeout: the transport resumed, the call did not time out.
    expect(Date.now() - t0).toBeLessThan(10_000);
    const resumed = srv.gets.filter((g) => g.lastEventId !== undefined);
    expect(resumed.map((g) => g.lastEventId)).toEqual(['e1']);
    // The server's retry delay was honoured.
    expect(resumed[0]!.at - srv.closedAt[0]!).toBeGreaterThanOrEqual(150);
    // Resumption is not a lost connection.
    expect(pool.get('remote')?.status).toBe('connected');
    expect(pool.get('remote')?.generation).toBe(1);
  });

  it('a tools/list stream closed after a priming event during the dial is resumed: the server connects (no CONNECT_TIMEOUT)', async () => {
    const srv = await resumingServer(200, 'deliver', 'tools/list');
    // A connect timeout far above the resumption (raw SDK: connected in ~0.2 s).
    const pool = make(srv.url, 20_000);
    const t0 = Date.now();
    const rec = await pool.connect('remote');
    expect(rec.error).toBeUndefined();
    expect(rec.status).toBe('connected');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(rec.tools.map((t) => t.name)).toEqual(['slow']);
    expect(srv.gets.filter((g) => g.lastEventId !== undefined).map((g) => g.lastEventId)).toEqual(['e1']);
    expect(pool.get('remote')?.generation).toBe(1);
  });

  it('resumption is bounded: when every resumption attempt fails, the connection is lost and the call fails fast', async () => {
    const srv = await resumingServer(30, 'refuse');
    const pool = make(srv.url);
    await pool.connect('remote');
    const t0 = Date.now();
    const err = await pool.callTool('remote', 'slow', {}).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const attempts = srv.gets.filter((g) => g.lastEventId !== undefined).length;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(5);
    await waitFor(() => pool.get('remote')?.status === 'reconnecting', { timeoutMs: 10_000 });
    expect(pool.get('remote')?.error?.message).toMatch(/resum/);
  });
});
