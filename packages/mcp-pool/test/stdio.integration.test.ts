import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import {
  type FixtureName,
  findProcessesByMarker,
  fixtureServer,
  isPidAlive,
  killPids,
  listDescendants,
  makeTempDir,
  type TempDir,
  waitFor,
} from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import { defaultTransportFactory } from '../src/factory';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import type { TransportHandle } from '../src/transport';
import { heldClock } from './held-clock';
import { countingClock } from './helpers';

let ns: string;
const pools: McpPool[] = [];
const temps: TempDir[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];

beforeEach(() => {
  // A namespace per test (under the run's namespace, so the global leak check covers it too).
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:pool-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const t of temps.splice(0)) await t.cleanup();
  // No pool timer is left behind either.
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  // Every test ends with no marked process alive.
  expect(left).toEqual([]);
});

/** Resolve servers the way the agent does: through @wave/mcp-config. */
function resolve(entries: Record<string, unknown>): ResolvedServer[] {
  const { servers, issues } = mergeSources([{ source: 'constructor', servers: entries }], {
    workdir: '/tmp/wave-pool-test',
  });
  expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
  return servers;
}

function fixture(name: FixtureName, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return { ...fixtureServer(name, env), ...extra };
}

function make(entries: Record<string, unknown>, opts: Partial<McpPoolOptions> = {}): McpPool {
  const clock = countingClock();
  clocks.push(clock);
  const pool = McpPool.create({ servers: resolve(entries), markerNamespace: ns, clock, ...opts });
  pools.push(pool);
  return pool;
}

const marked = () => findProcessesByMarker(ns).filter(isPidAlive);

describe('stdio servers (real processes)', () => {
  it('creating a pool of 32 servers spawns nothing', async () => {
    const entries: Record<string, unknown> = {};
    for (let i = 0; i < 32; i++) entries[`s${i}`] = fixture('hello', { HELLO_NAME: `s${i}` });
    const pool = make(entries);
    expect(pool.list()).toHaveLength(32);
    expect(pool.list().every((r) => r.status === 'disconnected')).toBe(true);
    // Give a (wrongly) spawned process time to show up.
    await new Promise((r) => setTimeout(r, 200));
    expect(marked()).toEqual([]);
  });

  it('hello: connect, list tools, instructions, call, refresh on list_changed, disconnect leaves nothing', async () => {
    const pool = make({ hello: fixture('hello') });
    const rec = await pool.connect('hello');
    expect(rec.status).toBe('connected');
    expect(rec.pid).toBeTypeOf('number');
    expect(rec.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['echo', 'add', 'sleep', 'fail', 'add_tool']),
    );
    expect(rec.instructions).toContain('\n');
    expect(marked()).toContain(rec.pid);
    // env: the allow-list plus the marker, not the whole host environment.
    const environ = readFileSync(`/proc/${rec.pid}/environ`, 'utf8').split('\0');
    expect(environ.some((e) => e.startsWith('WAVE_REAPER_ID='))).toBe(true);
    expect(environ.some((e) => e.startsWith('WAVE_REAPER_NAMESPACE='))).toBe(false);

    expect((await pool.callTool('hello', 'echo', { text: 'hi' })).content).toEqual([
      { type: 'text', text: 'hi' },
    ]);
    const failed = await pool.callTool('hello', 'fail', {});
    expect(failed.isError).toBe(true);

    await pool.callTool('hello', 'add_tool', { name: 'late_tool' });
    await waitFor(() => pool.get('hello')?.tools.some((t) => t.name === 'late_tool'), { timeoutMs: 30_000 });

    const pid = rec.pid!;
    const t0 = Date.now();
    const after = await pool.disconnect('hello');
    const ms = Date.now() - t0;
    expect(after).toMatchObject({ status: 'disconnected', manuallyDisconnected: true });
    expect(isPidAlive(pid)).toBe(false);
    expect(marked()).toEqual([]);
    // Generous bound: the SDK's close takes ~2 s for the same server; we kill at once.
    expect(ms).toBeLessThan(1_500);
  });

  it('call timeout and abort on a real server: typed errors, the connection stays usable', async () => {
    const pool = make({ hello: fixture('hello') });
    await pool.connect('hello');
    const e1 = await pool
      .callTool('hello', 'sleep', { ms: 10_000 }, { timeoutMs: 150 })
      .catch((e: unknown) => e);
    expect((e1 as McpPoolError).code).toBe('CALL_TIMEOUT');
    const ac = new AbortController();
    const p = pool.callTool('hello', 'sleep', { ms: 10_000 }, { signal: ac.signal }).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 50);
    expect(((await p) as McpPoolError).code).toBe('CALL_ABORTED');
    expect((await pool.callTool('hello', 'echo', { text: 'alive' })).content).toEqual([
      { type: 'text', text: 'alive' },
    ]);
    expect(pool.get('hello')?.status).toBe('connected');
  });

  it('HELLO_EXTRA_TOOLS=80: 64 tools kept, 16+ reported dropped', async () => {
    const pool = make({ many: fixture('hello', { HELLO_EXTRA_TOOLS: '80' }) });
    const rec = await pool.connect('many');
    expect(rec.tools).toHaveLength(64);
    expect(rec.toolsDropped).toBeGreaterThanOrEqual(16);
  });

  it('ensureConnected dials in parallel (≈ slowest, not the sum); a second call dials nothing', async () => {
    const entries: Record<string, unknown> = {};
    for (let i = 0; i < 4; i++) entries[`slow${i}`] = fixture('slow-init', { SLOW_INIT_MS: '800' });
    const pool = make(entries);
    const p = pool.ensureConnected();
    // All four processes exist at the same time while their handshakes are pending: the dials
    // run in parallel (an event, not a wall-clock bound that a loaded machine can miss).
    await waitFor(() => pool.list().every((r) => r.status === 'connecting' && r.pid !== undefined), {
      timeoutMs: 30_000,
      intervalMs: 5,
    });
    expect(marked()).toHaveLength(4);
    await p;
    expect(pool.list().every((r) => r.status === 'connected')).toBe(true);
    const pids = pool.list().map((r) => r.pid);
    let settled = false;
    const again = pool.ensureConnected().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(true);
    await again;
    expect(pool.list().map((r) => r.pid)).toEqual(pids);
  });

  it('a failed dial is not retried by ensureConnected; connect() retries it', async () => {
    const dir = await makeTempDir('pool-retry');
    temps.push(dir);
    const pool = make({ late: fixture('hello', {}, { cwd: `${dir.path}/not-yet` }) });
    await pool.ensureConnected();
    const rec = pool.get('late');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.code).toBe('SPAWN_FAILED');
    expect(rec?.error?.message).toContain('not-yet');
    await pool.ensureConnected();
    expect(pool.get('late')?.generation).toBe(rec?.generation);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(`${dir.path}/not-yet`);
    expect((await pool.connect('late')).status).toBe('connected');
  });

  it('manual disconnect kills the whole spawner tree (ignore-term, setsid, double-fork) and sticks', async () => {
    const pool = make(
      { spawner: fixture('spawner', { SPAWNER_MODE: 'all' }) },
      { timeouts: { killGraceMs: 500 } },
    );
    const rec = await pool.connect('spawner');
    const r = await pool.callTool('spawner', 'pids', {});
    const grandchildren = (r.structuredContent as { pids: number[] }).pids;
    expect(grandchildren).toHaveLength(3);
    expect(grandchildren.every(isPidAlive)).toBe(true);
    expect(marked().length).toBeGreaterThanOrEqual(4);
    const after = await pool.disconnect('spawner');
    expect(after.status).toBe('disconnected');
    expect(isPidAlive(rec.pid!)).toBe(false);
    expect(grandchildren.filter(isPidAlive)).toEqual([]);
    expect(marked()).toEqual([]);
    await pool.ensureConnected();
    expect(marked()).toEqual([]);
    expect(pool.get('spawner')?.status).toBe('disconnected');
  });

  it('grandchildren holding stdout/stderr open do not stop teardown (SPAWNER_INHERIT_STDIO)', async () => {
    const pool = make(
      { spawner: fixture('spawner', { SPAWNER_MODE: 'all', SPAWNER_INHERIT_STDIO: '1' }) },
      { timeouts: { killGraceMs: 500 } },
    );
    await pool.connect('spawner');
    const r = await pool.callTool('spawner', 'pids', {});
    const grandchildren = (r.structuredContent as { pids: number[] }).pids;
    await pool.destroy();
    expect(grandchildren.filter(isPidAlive)).toEqual([]);
    expect(marked()).toEqual([]);
  });

  it('destroy while dials are in flight (slow-init, hang) leaves no process and settles', async () => {
    const pool = make(
      {
        slow: fixture('slow-init', { SLOW_INIT_MS: '10000' }),
        hang: fixture('hang', { HANG_IGNORE_TERM: '1' }),
      },
      { timeouts: { killGraceMs: 300 } },
    );
    const ensure = pool.ensureConnected();
    await waitFor(() => pool.list().every((r) => r.pid !== undefined), { timeoutMs: 30_000, intervalMs: 5 });
    const pids = pool.list().map((r) => r.pid!);
    await pool.destroy();
    await ensure;
    expect(pids.filter(isPidAlive)).toEqual([]);
    expect(marked()).toEqual([]);
    expect(pool.list().every((r) => r.status === 'disconnected')).toBe(true);
  });

  it('connect() during destroy: a dial completing after destroy closes at once', async () => {
    const pool = make({ slow: fixture('slow-init', { SLOW_INIT_MS: '300' }) });
    const connecting = pool.connect('slow');
    await waitFor(() => pool.get('slow')?.pid, { timeoutMs: 30_000, intervalMs: 5 });
    const destroyed = pool.destroy();
    const rec = await connecting;
    await destroyed;
    expect(rec.status).toBe('disconnected');
    await new Promise((r) => setTimeout(r, 400));
    expect(marked()).toEqual([]);
  });

  it('crashy: unexpected exit -> error with exit code and stderr tail; no survivors', async () => {
    const pool = make({ crashy: fixture('crashy', { CRASHY_AFTER_MS: '200', CRASHY_EXIT_CODE: '7' }) });
    const rec = await pool.connect('crashy');
    expect(rec.status).toBe('connected');
    await waitFor(() => pool.get('crashy')?.status === 'error', { timeoutMs: 30_000 });
    const err = pool.get('crashy')?.error;
    expect(err?.code).toBe('SERVER_EXITED');
    expect(err?.exitCode).toBe(7);
    expect(err?.stderrTail).toContain('crashy: about to exit with code 7');
    expect(err?.message).toContain('exited with code 7');
    expect(err?.message).toContain('crashy: about to exit with code 7');
    expect(marked()).toEqual([]);
    // Not retried automatically.
    await pool.ensureConnected();
    expect(pool.get('crashy')?.status).toBe('error');
  });

  it('crash mid-call -> CONNECTION_CLOSED for the call, error (with signal) for the server', async () => {
    const pool = make({ crashy: fixture('crashy', { CRASHY_SIGNAL: 'SIGKILL' }) });
    await pool.connect('crashy');
    const e = await pool.callTool('crashy', 'crash', {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(McpPoolError);
    expect((e as McpPoolError).code).toBe('CONNECTION_CLOSED');
    await waitFor(() => pool.get('crashy')?.status === 'error', { timeoutMs: 30_000 });
    expect(pool.get('crashy')?.error).toMatchObject({ code: 'SERVER_EXITED', signal: 'SIGKILL' });
  });

  it('exit during start-up -> SERVER_EXITED with the code and stderr', async () => {
    const pool = make({
      broken: {
        command: process.execPath,
        args: ['-e', 'console.error("config file missing"); process.exit(4)'],
      },
    });
    const rec = await pool.connect('broken');
    expect(rec.status).toBe('error');
    expect(rec.error).toMatchObject({ code: 'SERVER_EXITED', exitCode: 4 });
    expect(rec.error?.message).toContain('config file missing');
  });

  it('hang: connect timeout -> error CONNECT_TIMEOUT, tree killed (even ignoring SIGTERM)', async () => {
    // The connect timeout starts counting only once the fixture said it is up
    // (its stderr line), however slowly a loaded machine starts it.
    const HOLD = 500;
    const clock = heldClock(HOLD);
    clocks.push(clock);
    const handles: TransportHandle[] = [];
    const pool = make(
      { hang: fixture('hang', { HANG_IGNORE_TERM: '1' }, { connectTimeoutMs: HOLD }) },
      {
        clock,
        timeouts: { killGraceMs: 300 },
        transportFactory: (server, ctx) => {
          const h = defaultTransportFactory(server, ctx);
          handles.push(h);
          return h;
        },
      },
    );
    const dial = pool.connect('hang');
    await waitFor(() => handles[0]?.diagnostics().stderrTail?.includes('hang: ready'), {
      timeoutMs: 30_000,
      message: 'the hang fixture up',
    });
    clock.fireHeld();
    const rec = await dial;
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECT_TIMEOUT');
    expect(rec.error?.message).toContain('500 ms');
    expect(rec.error?.message).toContain('hang: ready');
    expect(marked()).toEqual([]);
  });

  it('noisy-stdout garbage-only -> clear INVALID_STDOUT error quoting the garbage; the host is fine', async () => {
    // The connect timeout is what ends this dial: it starts counting only once the
    // fixture's garbage was read, however slowly the machine starts it.
    const HOLD = 3_600_000;
    const clock = heldClock(HOLD);
    clocks.push(clock);
    const handles: TransportHandle[] = [];
    const pool = make(
      { noisy: fixture('noisy-stdout', { NOISY_MODE: 'garbage-only' }, { connectTimeoutMs: HOLD }) },
      {
        clock,
        transportFactory: (server, ctx) => {
          const h = defaultTransportFactory(server, ctx);
          handles.push(h);
          return h;
        },
      },
    );
    const dial = pool.connect('noisy');
    await waitFor(() => (handles[0]?.diagnostics().invalidStdout?.count ?? 0) >= 4, {
      timeoutMs: 30_000,
      message: 'the garbage lines read',
    });
    clock.fireHeld();
    const rec = await dial;
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('INVALID_STDOUT');
    expect(rec.error?.message).toContain('noisy-stdout: starting up...');
    expect(rec.error?.message).toMatch(/only JSON-RPC/);
    expect(marked()).toEqual([]);
  });

  it.each(['before', 'interleave'])('noisy-stdout %s: garbage is skipped, the server works', async (mode) => {
    const pool = make({ noisy: fixture('noisy-stdout', { NOISY_MODE: mode }) });
    const rec = await pool.connect('noisy');
    expect(rec.status).toBe('connected');
    expect((await pool.callTool('noisy', 'echo', { text: 'x' })).content).toEqual([
      { type: 'text', text: 'x' },
    ]);
  });

  it('command not found -> SPAWN_FAILED naming the command', async () => {
    const pool = make({ ghost: { command: 'definitely-not-a-real-command-wave' } });
    const rec = await pool.connect('ghost');
    expect(rec.error?.code).toBe('SPAWN_FAILED');
    expect(rec.error?.message).toContain('definitely-not-a-real-command-wave');
  });

  it('stale exit of an earlier connection does not touch the new one', async () => {
    const pool = make({ hello: fixture('hello') });
    const first = await pool.connect('hello');
    await pool.disconnect('hello');
    const second = await pool.connect('hello');
    expect(second.pid).not.toBe(first.pid);
    expect(second.generation).toBeGreaterThan(first.generation);
    await new Promise((r) => setTimeout(r, 100));
    expect(pool.get('hello')).toMatchObject({ status: 'connected', pid: second.pid });
    expect(listDescendants(second.pid!)).toEqual([]);
  });
});

describe('shared pool: a lease released while its server is still dialing (real processes)', () => {
  it('kills the server tree at once, without waiting for the idle timeout', async () => {
    const clock = countingClock();
    clocks.push(clock);
    const shared = McpPool.create({
      shared: true,
      markerNamespace: ns,
      clock,
      timeouts: { idleMs: 600_000, killGraceMs: 300 },
    });
    pools.push(shared);
    // The handshake would complete a few seconds later: the connection must not outlive the release.
    const lease = shared.lease('agent-1', resolve({ slow: fixture('slow-init', { SLOW_INIT_MS: '4000' }) }));
    const ensure = lease.ensureConnected();
    const pid = await waitFor(() => lease.get('slow')?.pid, { timeoutMs: 30_000, intervalMs: 5 });
    expect(lease.get('slow')?.status).toBe('connecting');
    expect(marked()).not.toEqual([]);
    await lease.destroy();
    await ensure;
    // The event we wait for: no marked process left (bounded generously; far below the idle timeout).
    await waitFor(() => marked().length === 0, { timeoutMs: 30_000, intervalMs: 25 });
    expect(isPidAlive(pid)).toBe(false);
    expect(shared.liveConnections).toBe(0);
    expect(clock.pending()).toBe(0);
  }, 90_000);
});
