/**
 * Chaos with real processes, for what the other suites do not cover already:
 * destroy or disconnect landing at any moment from before the spawn to after
 * the handshake, and a root that crashes while grandchildren hold its stdout.
 * Each case ends with 0 marked survivors and a settled, correct status.
 * Seeded (CHAOS_SEED=<n>); a failure names the seed and the step.
 */
import { randomUUID } from 'node:crypto';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import { findProcessesByMarker, fixtureServer, isPidAlive, killPids, waitFor } from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import { countingClock } from './helpers';

let ns: string;
const pools: McpPool[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];

beforeEach(() => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:chaos-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  const left = marked();
  killPids(left);
  expect(left).toEqual([]);
});

const marked = () => findProcessesByMarker(ns).filter(isPidAlive);

function resolve(entries: Record<string, unknown>): ResolvedServer[] {
  const { servers, issues } = mergeSources([{ source: 'constructor', servers: entries }], {
    workdir: '/tmp/wave-pool-test',
  });
  expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
  return servers;
}

function make(entries: Record<string, unknown>, opts: Partial<McpPoolOptions> = {}): McpPool {
  const clock = countingClock();
  clocks.push(clock);
  const pool = McpPool.create({
    servers: resolve(entries),
    markerNamespace: ns,
    clock,
    timeouts: { killGraceMs: 300, connectMs: 60_000 },
    ...opts,
  });
  pools.push(pool);
  return pool;
}

function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.CHAOS_SEED ?? 1201);

/** The moments a destroy or disconnect may land on, from the same tick as the dial to after the handshake. */
type Moment = 'same-tick' | 'microtask' | 'spawned' | 'initializing' | 'connected' | 'random-delay';
const MOMENTS: Moment[] = ['same-tick', 'microtask', 'spawned', 'initializing', 'connected', 'random-delay'];

/** Resolves when `moment` is reached for server `name` (bounded), or at once for the early ones. */
async function reach(pool: McpPool, name: string, moment: Moment, rnd: () => number): Promise<void> {
  switch (moment) {
    case 'same-tick':
      return;
    case 'microtask':
      await Promise.resolve();
      return;
    case 'spawned':
      await waitFor(() => pool.get(name)?.pid !== undefined || pool.get(name)?.status !== 'connecting', {
        timeoutMs: 30_000,
        intervalMs: 1,
        message: `${name} to be spawned`,
      });
      return;
    case 'initializing':
      // slow-init answers initialize late: the marked process is up and the handshake is open.
      await waitFor(() => marked().length > 0, {
        timeoutMs: 30_000,
        intervalMs: 5,
        message: 'a process to run',
      });
      return;
    case 'connected':
      await waitFor(() => pool.get(name)?.status === 'connected', {
        timeoutMs: 30_000,
        intervalMs: 5,
        message: `${name} to connect`,
      });
      return;
    case 'random-delay':
      await new Promise((r) => setTimeout(r, Math.floor(rnd() * 400)));
  }
}

describe('destroy and disconnect at any moment of a dial (seeded)', () => {
  const cases = MOMENTS.flatMap((m, i) => [[m, 'spawner', i] as const, [m, 'slow-init', i] as const]);

  it.each(cases)(
    'destroy at %s (%s): settles, refuses later calls, 0 survivors',
    async (moment, fixture, i) => {
      const rnd = mulberry32(SEED + i);
      const label = `CHAOS_SEED=${SEED} moment=${moment} fixture=${fixture}`;
      const env: Record<string, string> =
        fixture === 'spawner' ? { SPAWNER_MODE: 'all' } : { SLOW_INIT_MS: '300' };
      const pool = make({ s: fixtureServer(fixture, env) });
      const dialed = pool.ensureConnected();
      await reach(pool, 's', moment, rnd);
      await pool.destroy();
      await dialed.catch(() => undefined);
      expect(marked(), label).toEqual([]);
      expect(pool.destroyed, label).toBe(true);
      const err = await pool.callTool('s', 'echo', { text: 'x' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err instanceof McpPoolError ? err.code : String(err), label).toBe('POOL_DESTROYED');
      expect(marked(), label).toEqual([]);
    },
  );

  it.each(cases)(
    'disconnect at %s (%s), then connect: exactly one live tree, connected, works; destroy leaves 0',
    async (moment, fixture, i) => {
      const rnd = mulberry32(SEED + 100 + i);
      const label = `CHAOS_SEED=${SEED} moment=${moment} fixture=${fixture}`;
      const env: Record<string, string> =
        fixture === 'spawner' ? { SPAWNER_MODE: 'all' } : { SLOW_INIT_MS: '300' };
      const pool = make({ s: fixtureServer(fixture, env) });
      const dialed = pool.ensureConnected();
      await reach(pool, 's', moment, rnd);
      const after = await pool.disconnect('s');
      await dialed.catch(() => undefined);
      expect(after.status, label).toBe('disconnected');
      expect(pool.get('s')?.status, label).toBe('disconnected');
      expect(marked(), label).toEqual([]);
      const rec = await pool.connect('s');
      expect(rec.status, label).toBe('connected');
      const r = await pool.callTool('s', 'echo', { text: 'again' });
      expect(JSON.stringify(r.content), label).toContain('again');
      // One tree only: the root of this connection (and, for the spawner, its three grandchildren).
      // `pids` answers once every grandchild is up (and the double fork's intermediate has exited).
      if (fixture === 'spawner') await pool.callTool('s', 'pids', {});
      const live = marked();
      expect(live, label).toContain(rec.pid);
      expect(live.length, label).toBe(fixture === 'spawner' ? 4 : 1);
      await pool.destroy();
      expect(marked(), label).toEqual([]);
    },
  );
});

describe('a root that crashes while its grandchildren hold stdout', () => {
  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'root killed by %s: the crash is seen (error, with the signal), the grandchildren are reaped without destroy',
    async (signal) => {
      const pool = make({ s: fixtureServer('spawner', { SPAWNER_MODE: 'all', SPAWNER_INHERIT_STDIO: '1' }) });
      const rec = await pool.connect('s');
      expect(rec.status).toBe('connected');
      const r = await pool.callTool('s', 'pids', {});
      const grandchildren = (r.structuredContent as { pids: number[] }).pids;
      expect(grandchildren).toHaveLength(3);
      expect(grandchildren.every(isPidAlive)).toBe(true);
      const root = rec.pid as number;
      // The grandchildren keep the stdout pipe open: no EOF comes, only the root's exit.
      process.kill(root, signal);
      await waitFor(() => pool.get('s')?.status === 'error', {
        timeoutMs: 30_000,
        message: 'the crash of the root to be seen',
      });
      const after = pool.get('s');
      expect(after?.error?.message).toMatch(new RegExp(signal));
      // Reaped by the pool itself (no destroy yet): the escaped grandchildren too.
      await waitFor(() => marked().length === 0, {
        timeoutMs: 30_000,
        message: 'the grandchildren of the crashed root to be reaped',
      }).catch(() => undefined);
      expect(marked()).toEqual([]);
      const err = await pool.callTool('s', 'echo', { text: 'x' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err instanceof McpPoolError ? err.code : String(err)).toBe('SERVER_NOT_CONNECTED');
    },
  );

  it('root exits by itself (exit code) mid-call while grandchildren hold stdout: the call fails at once, error, 0 survivors', async () => {
    const pool = make({ s: fixtureServer('spawner', { SPAWNER_MODE: 'all', SPAWNER_INHERIT_STDIO: '1' }) });
    const rec = await pool.connect('s');
    await pool.callTool('s', 'pids', {});
    const root = rec.pid as number;
    // A call in flight when the root dies: it must not wait for an EOF that never comes.
    const call = pool.callTool('s', 'sleep', { ms: 60_000 }, { timeoutMs: 120_000 }).then(
      () => 'resolved',
      (e: unknown) => (e instanceof McpPoolError ? e.code : String(e)),
    );
    process.kill(root, 'SIGKILL');
    const started = Date.now();
    const code = await call;
    expect(['CONNECTION_CLOSED', 'SERVER_ERROR']).toContain(code);
    expect(Date.now() - started).toBeLessThan(30_000);
    await waitFor(() => pool.get('s')?.status === 'error', { timeoutMs: 30_000, message: 'error status' });
    await waitFor(() => marked().length === 0, { timeoutMs: 30_000, message: 'no survivors' }).catch(
      () => undefined,
    );
    expect(marked()).toEqual([]);
  });
});
