import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import { type HttpFixture, startHttpFixture, waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import { countingClock } from './helpers';

const pools: McpPool[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];
const fixtures: HttpFixture[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  for (const f of fixtures.splice(0)) await f.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

function resolve(entries: Record<string, unknown>): ResolvedServer[] {
  return mergeSources([{ source: 'constructor', servers: entries }], { workdir: '/tmp/wave-pool-http' })
    .servers;
}

function make(entries: Record<string, unknown>, opts: Partial<McpPoolOptions> = {}): McpPool {
  const clock = countingClock();
  clocks.push(clock);
  const pool = McpPool.create({ servers: resolve(entries), clock, ...opts });
  pools.push(pool);
  return pool;
}

async function fixture(transport: 'http' | 'sse'): Promise<HttpFixture> {
  const f = await startHttpFixture({ transport });
  fixtures.push(f);
  return f;
}

/** A loopback server that records request headers and refuses every request. */
async function recorder(status: number): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end('nope');
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`, seen };
}

const fast = { reconnect: { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 3 } };

describe.each(['http', 'sse'] as const)('%s servers (loopback fixture)', (transport) => {
  it('connect, list tools, call, disconnect', async () => {
    const f = await fixture(transport);
    const pool = make({ remote: { type: transport, url: f.url } });
    const rec = await pool.connect('remote');
    expect(rec.status).toBe('connected');
    expect(rec.transport).toBe(transport);
    expect(rec.tools.map((t) => t.name)).toContain('echo');
    expect(rec.pid).toBeUndefined();
    expect((await pool.callTool('remote', 'echo', { text: 'over the wire' })).content).toEqual([
      { type: 'text', text: 'over the wire' },
    ]);
    expect((await pool.disconnect('remote')).status).toBe('disconnected');
  });

  it('the server drops every connection -> reconnecting -> connected again', async () => {
    const f = await fixture(transport);
    const pool = make({ remote: { type: transport, url: f.url } }, fast);
    await pool.connect('remote');
    const seen: string[] = [];
    pool.onChange((s) => {
      const st = s.servers[0]?.status;
      if (st && seen.at(-1) !== st) seen.push(st);
    });
    const gen = pool.get('remote')!.generation;
    await f.drop();
    await waitFor(() => pool.get('remote')?.status === 'connected' && pool.get('remote')!.generation > gen, {
      timeoutMs: 30_000,
    });
    expect(seen).toContain('reconnecting');
    expect(seen.at(-1)).toBe('connected');
    expect((await pool.callTool('remote', 'echo', { text: 'back' })).content).toEqual([
      { type: 'text', text: 'back' },
    ]);
  });

  it('server gone for good -> error after the configured attempts', async () => {
    const f = await fixture(transport);
    const pool = make({ remote: { type: transport, url: f.url } }, fast);
    await pool.connect('remote');
    await f.stop();
    await waitFor(() => pool.get('remote')?.status === 'error', { timeoutMs: 30_000 });
    const err = pool.get('remote')?.error;
    expect(err?.code).toBe('RECONNECT_FAILED');
    expect(err?.message).toContain('3 reconnection attempts');
    // Nothing more happens afterwards.
    const gen = pool.get('remote')!.generation;
    await new Promise((r) => setTimeout(r, 300));
    expect(pool.get('remote')).toMatchObject({ status: 'error', generation: gen });
  });

  it('manual disconnect during the backoff wait -> no reconnection', async () => {
    const f = await fixture(transport);
    const pool = make(
      { remote: { type: transport, url: f.url } },
      // random() near 1 -> the wait is (almost) the full 400 ms cap, never 0.
      { reconnect: { initialDelayMs: 400, maxDelayMs: 400, maxAttempts: 5 }, random: () => 0.999 },
    );
    await pool.connect('remote');
    // Seen through onChange, not by polling: the backoff wait may be shorter than a poll on a
    // loaded machine, and the disconnect below runs before any timer can fire.
    const reconnecting = new Promise<void>((resolve) => {
      const off = pool.onChange((snap) => {
        if (snap.servers[0]?.status === 'reconnecting') {
          off();
          resolve();
        }
      });
    });
    await f.drop();
    await reconnecting;
    const gen = pool.get('remote')!.generation;
    await pool.disconnect('remote');
    await new Promise((r) => setTimeout(r, 700));
    expect(pool.get('remote')).toMatchObject({
      status: 'disconnected',
      generation: gen,
      manuallyDisconnected: true,
    });
    expect(f.sessionCount).toBe(0);
  });
});

describe('http details', () => {
  it('configured headers are sent (variables expanded by mcp-config)', async () => {
    const r = await recorder(401);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-config's variable syntax, not a template
    const headers = { Authorization: 'Bearer ${TOKEN}' };
    const servers = mergeSources(
      [{ source: 'user', servers: { api: { type: 'http', url: r.url, headers } } }],
      { env: { TOKEN: 's3cret' }, workdir: '/w' },
    ).servers;
    const pool = McpPool.create({ servers });
    pools.push(pool);
    const rec = await pool.connect('api');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECT_FAILED');
    expect(rec.error?.message).toContain('headers');
    expect(r.seen[0]?.authorization).toBe('Bearer s3cret');
    // The expanded secret never shows in the error.
    expect(rec.error?.message).not.toContain('s3cret');
  });

  it('no http -> sse fallback: type http against an SSE-only server fails, SSE is never tried', async () => {
    const f = await fixture('sse');
    const pool = make({ legacy: { type: 'http', url: f.url } });
    const rec = await pool.connect('legacy');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECT_FAILED');
    expect(f.sessionCount).toBe(0);
  });

  it('a url with no type is http (no sse attempt either)', async () => {
    const f = await fixture('sse');
    const pool = make({ legacy: { url: f.url } });
    expect(pool.get('legacy')?.transport).toBe('http');
    expect((await pool.connect('legacy')).status).toBe('error');
    expect(f.sessionCount).toBe(0);
  });

  it('unknown type is kept and fails at connect time with TRANSPORT_UNKNOWN', async () => {
    const { servers, issues } = mergeSources(
      [{ source: 'project', servers: { ws: { type: 'websocket', url: 'ws://127.0.0.1:1/x' } } }],
      { workdir: '/w' },
    );
    expect(servers).toHaveLength(1);
    expect(issues.length).toBeGreaterThan(0);
    const pool = McpPool.create({ servers });
    pools.push(pool);
    expect(pool.get('ws')?.status).toBe('disconnected');
    const rec = await pool.connect('ws');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('TRANSPORT_UNKNOWN');
    expect(rec.error?.message).toContain('websocket');
  });

  it('connection refused -> CONNECT_FAILED naming the (unexpanded) url', async () => {
    const r = await recorder(200);
    const url = r.url;
    await new Promise((res) => servers.pop()!.close(res));
    const pool = make({ down: { type: 'http', url } });
    const rec = await pool.connect('down');
    expect(rec.error?.code).toBe('CONNECT_FAILED');
    expect(rec.error?.message).toContain(url);
    expect(rec.error?.message).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
