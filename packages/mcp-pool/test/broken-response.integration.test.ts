/**
 * A Streamable HTTP server whose POST response breaks off mid-body (the
 * socket is destroyed): that is a lost connection, not a call that waits for
 * its whole timeout; during the dial it fails the dial at once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mergeSources } from '@wave/mcp-config';
import { waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import { McpPool } from '../src/pool';
import { heldClock } from './held-clock';

/** How the hand-written server answers `tools/list` and `tools/call`. */
type Break = 'none' | 'json' | 'sse';
interface Behaviour {
  list: Break;
  call: Break;
}

const servers: Server[] = [];
const pools: McpPool[] = [];
const HOLD = 3_600_000;

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function readJson(req: IncomingMessage): Promise<{ id?: number; method?: string; params?: unknown }> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
  res.end(JSON.stringify(body));
}

/** Headers and the start of an answer, then the socket is destroyed. */
function breakOff(res: ServerResponse, kind: 'json' | 'sse', id: number): void {
  if (kind === 'json') {
    res.writeHead(200, {
      'content-type': 'application/json',
      'mcp-session-id': 's1',
      'content-length': '100000',
    });
    res.write(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"par`);
  } else {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
    res.write('event: message\ndata: {"jsonrpc":"2.0","id":');
  }
  setImmediate(() => res.socket?.destroy());
}

async function start(b: Behaviour): Promise<{ url: string; counts: Record<string, number> }> {
  const counts: Record<string, number> = {};
  const srv = createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const msg = await readJson(req);
    const m = msg.method ?? 'response';
    counts[m] = (counts[m] ?? 0) + 1;
    if (msg.id === undefined) {
      res.writeHead(202, { 'mcp-session-id': 's1' }).end();
      return;
    }
    const id = msg.id;
    if (m === 'initialize') {
      json(res, {
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: (msg.params as { protocolVersion: string }).protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'broken', version: '1' },
        },
      });
    } else if (m === 'tools/list') {
      if (b.list !== 'none') breakOff(res, b.list, id);
      else
        json(res, {
          jsonrpc: '2.0',
          id,
          result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] },
        });
    } else if (m === 'tools/call') {
      if (b.call !== 'none') breakOff(res, b.call, id);
      else json(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } });
    } else {
      json(res, { jsonrpc: '2.0', id, error: { code: -32601, message: 'no' } });
    }
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`, counts };
}

function make(url: string): { pool: McpPool; clock: ReturnType<typeof heldClock> } {
  const { servers: resolved } = mergeSources([{ source: 'constructor', servers: { h: { url } } }], {
    workdir: '/tmp/wave-broken',
  });
  // Call and connect timeouts are held: only the behaviour under test can end a call or a dial.
  const clock = heldClock(HOLD);
  const pool = McpPool.create({
    servers: resolved,
    clock,
    timeouts: { connectMs: HOLD, callMs: HOLD },
    reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 },
  });
  pools.push(pool);
  return { pool, clock };
}

describe('broken POST responses', () => {
  it.each(['json', 'sse'] as const)(
    'a %s answer to a call broken off mid-body: the call fails at once with CONNECTION_CLOSED and the server leaves connected',
    async (kind) => {
      const { url } = await start({ list: 'none', call: kind });
      const { pool } = make(url);
      await pool.ensureConnected();
      expect(pool.get('h')?.status).toBe('connected');
      const err = await pool.callTool('h', 'echo', {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpPoolError);
      expect((err as McpPoolError).code).toBe('CONNECTION_CLOSED');
      await waitFor(() => pool.get('h')?.status !== 'connected', {
        timeoutMs: 30_000,
        message: 'status leaves connected',
      });
      expect(pool.get('h')?.error?.message).toMatch(/broke off/);
    },
  );

  it('the tools/list answer broken off during the dial: the dial fails at once (no connect timeout) and retries with backoff', async () => {
    const { url, counts } = await start({ list: 'sse', call: 'none' });
    const { pool } = make(url);
    await pool.ensureConnected();
    // Not CONNECT_TIMEOUT (the connect timer is held): the drop ended the dial.
    const rec = pool.get('h');
    expect(rec?.status).toBe('reconnecting');
    expect(rec?.error?.code).toBe('CONNECTION_CLOSED');
    expect(rec?.error?.message).toMatch(/while listing its tools/);
    // The retries meet the same server: it ends in error after the configured attempts, not sticky-connecting.
    await waitFor(() => pool.get('h')?.status === 'error', { timeoutMs: 30_000, message: 'gave up' });
    expect(pool.get('h')?.error?.code).toBe('RECONNECT_FAILED');
    expect(counts['tools/list']).toBe(3);
  });
});
