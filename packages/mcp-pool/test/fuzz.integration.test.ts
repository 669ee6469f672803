/**
 * Bad input from servers, fuzzed: a hand-written stdio server (testkit's
 * hostile fixture) writes garbage lines, huge lines, invalid UTF-8, answers
 * to unknown and duplicate ids, malformed notifications, a 50 MB result, a
 * 10 000-tool list and cyclic schemas. The host never crashes, each call ends
 * in its result or a typed error, the server ends in the right status and no
 * process is left.
 *
 * Seeded and reproducible: FUZZ_SEED=<n> reruns one seed (FUZZ_RUNS=<k> more
 * of them); a failure names the seed and the modes.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import { findProcessesByMarker, isPidAlive, killPids } from '@wave/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import type { PoolWarning } from '../src/warnings';
import { countingClock } from './helpers';

const HOSTILE = fileURLToPath(new URL('../../testkit/fixtures/hostile.mjs', import.meta.url));

let ns: string;
const pools: McpPool[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];
const crashes: unknown[] = [];
const onCrash = (err: unknown) => crashes.push(err);

beforeAll(() => {
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
});
afterAll(() => {
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
});

beforeEach(() => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:fuzz-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
  // The host never crashed: nothing reached the process-level handlers.
  expect(crashes.splice(0)).toEqual([]);
});

function resolve(env: Record<string, string>): ResolvedServer[] {
  const { servers, issues } = mergeSources(
    [{ source: 'constructor', servers: { h: { command: process.execPath, args: [HOSTILE], env } } }],
    { workdir: '/tmp/wave-pool-test' },
  );
  expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
  return servers;
}

function make(env: Record<string, string>, opts: Partial<McpPoolOptions> = {}) {
  const clock = countingClock();
  clocks.push(clock);
  const warnings: PoolWarning[] = [];
  const pool = McpPool.create({
    servers: resolve(env),
    markerNamespace: ns,
    clock,
    timeouts: { connectMs: 60_000, callMs: 60_000, killGraceMs: 1_000 },
    onWarning: (w) => warnings.push(w),
    ...opts,
  });
  pools.push(pool);
  return { pool, warnings };
}

type Outcome = { ok: true; text: string } | { ok: false; code: string; message: string };

async function outcome(p: Promise<{ content?: unknown }>): Promise<Outcome> {
  try {
    const r = await p;
    const text = ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('');
    return { ok: true, text };
  } catch (err) {
    if (err instanceof McpPoolError) return { ok: false, code: err.code, message: err.message };
    return { ok: false, code: `UNTYPED ${String(err)}`, message: String(err) };
  }
}

/** Every error the pool may answer a call to a hostile server with: each one is typed and says what happened. */
const CALL_CODES = new Set([
  'SERVER_ERROR',
  'RESPONSE_TOO_LARGE',
  'CONNECTION_CLOSED',
  'SERVER_NOT_CONNECTED',
  'CALL_TIMEOUT',
]);

describe('hostile stdio server, one misbehaviour at a time', () => {
  it('control: the well-behaved hostile fixture works', async () => {
    const { pool } = make({});
    await pool.ensureConnected();
    expect(pool.get('h')?.status).toBe('connected');
    expect(await outcome(pool.callTool('h', 'echo', { text: 'hi' }))).toEqual({ ok: true, text: 'hi' });
  });

  it.each(['garbage', 'unknown-ids', 'duplicate-ids', 'bad-notify'])(
    '%s: skipped or ignored; every call still gets its own answer; connected',
    async (mode) => {
      const { pool } = make({ HOSTILE_MODES: mode, HOSTILE_SEED: '7' });
      await pool.ensureConnected();
      expect(pool.get('h')?.status).toBe('connected');
      for (let i = 0; i < 5; i++) {
        expect(await outcome(pool.callTool('h', 'echo', { text: `m${i}` }))).toEqual({
          ok: true,
          text: `m${i}`,
        });
      }
      // Parallel calls are not confused by stray or repeated ids either.
      const all = await Promise.all(
        Array.from({ length: 8 }, (_, i) => outcome(pool.callTool('h', 'echo', { text: `p${i}` }))),
      );
      expect(all).toEqual(Array.from({ length: 8 }, (_, i) => ({ ok: true, text: `p${i}` })));
      expect(pool.get('h')?.status).toBe('connected');
    },
  );

  it('invalid UTF-8: stray lines are skipped; an answer with invalid bytes arrives with replacement characters', async () => {
    const { pool } = make({ HOSTILE_MODES: 'invalid-utf8', HOSTILE_SEED: '3' });
    await pool.ensureConnected();
    const r = await outcome(pool.callTool('h', 'echo', { text: 'abc' }));
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.text.startsWith('abc')).toBe(true);
    expect(pool.get('h')?.status).toBe('connected');
  });

  it('a 50 MB tool result: RESPONSE_TOO_LARGE at once, the connection stays up and keeps working', async () => {
    const { pool } = make({});
    await pool.ensureConnected();
    const r = await outcome(pool.callTool('h', 'big', {}, { timeoutMs: 120_000 }));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('RESPONSE_TOO_LARGE');
      expect(r.message).toMatch(/maxMessageBytes/);
    }
    expect(pool.get('h')?.status).toBe('connected');
    expect(await outcome(pool.callTool('h', 'echo', { text: 'after' }))).toEqual({ ok: true, text: 'after' });
  });

  it('a huge garbage line (no id to blame): the connection ends with a clear error, no process left', async () => {
    const { pool } = make({ HOSTILE_MODES: 'huge-line' });
    await pool.ensureConnected();
    const r = await outcome(pool.callTool('h', 'echo', { text: 'x' }, { timeoutMs: 120_000 }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(CALL_CODES.has(r.code)).toBe(true);
    // Settles in error (stdio is not reconnected), naming what the server did.
    const deadline = Date.now() + 30_000;
    while (pool.get('h')?.status !== 'error' && Date.now() < deadline)
      await new Promise((res) => setTimeout(res, 20));
    const rec = pool.get('h');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.message).toMatch(/line of .* MiB/);
  });

  it('10 000 tools: 64 kept, the rest counted; cyclic and 2000-deep schemas do not hang or crash the host', async () => {
    const { pool } = make({ HOSTILE_MODES: 'many-tools,cyclic-schema' });
    await pool.ensureConnected();
    const rec = pool.get('h');
    expect(rec?.status).toBe('connected');
    expect(rec?.tools.length).toBeLessThanOrEqual(64);
    expect((rec?.tools.length ?? 0) + (rec?.toolsDropped ?? 0)).toBeGreaterThanOrEqual(10_000);
    expect(await outcome(pool.callTool('h', 'echo', { text: 'ok' }))).toEqual({ ok: true, text: 'ok' });
  });

  it('cyclic schemas alone: listing and serializing the tools terminates', async () => {
    const { pool, warnings } = make({ HOSTILE_MODES: 'cyclic-schema' });
    await pool.ensureConnected();
    const rec = pool.get('h');
    expect(rec?.status).toBe('connected');
    const names = rec?.tools.map((t) => t.name) ?? [];
    expect(names).toContain('echo');
    // Each cyclic tool is either kept (its $refs are plain data) or dropped with a warning naming it.
    for (const n of ['cyclic_self', 'cyclic_pair', 'cyclic_bare_ref', 'deep_schema']) {
      const kept = names.includes(n);
      const warned = warnings.some((w) => w.message.includes(n));
      expect(kept || warned, n).toBe(true);
    }
    // The 2000-deep one would overflow the stack of hosts that walk schemas: dropped, named.
    expect(names).not.toContain('deep_schema');
    expect(warnings.find((w) => w.message.includes('deep_schema'))?.message).toMatch(/nested deeper than 64/);
    expect(() => JSON.stringify(rec?.tools)).not.toThrow();
  });
});

/** Light modes that may be combined freely (heavy ones are tested alone above). */
const MIXABLE = ['garbage', 'invalid-utf8', 'unknown-ids', 'duplicate-ids', 'bad-notify', 'cyclic-schema'];

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

function seeds(): number[] {
  const one = process.env.FUZZ_SEED;
  const runs = Number(process.env.FUZZ_RUNS ?? 6);
  const base = one !== undefined ? Number(one) : 20261201;
  return Array.from(
    { length: one !== undefined && process.env.FUZZ_RUNS === undefined ? 1 : runs },
    (_, i) => base + i,
  );
}

describe('hostile stdio server, seeded mixes', () => {
  it.each(seeds())('seed %i', async (seed) => {
    const rnd = mulberry32(seed);
    const modes = MIXABLE.filter(() => rnd() < 0.5);
    const calls = 3 + Math.floor(rnd() * 5);
    const label = `FUZZ_SEED=${seed} modes=${modes.join(',') || '(none)'}`;
    try {
      const { pool } = make({ HOSTILE_MODES: modes.join(','), HOSTILE_SEED: String(seed) });
      await pool.ensureConnected();
      expect(pool.get('h')?.status).toBe('connected');
      const results = await Promise.all(
        Array.from({ length: calls }, (_, i) =>
          outcome(pool.callTool('h', 'echo', { text: `s${seed}-${i}` })),
        ),
      );
      results.forEach((r, i) => {
        if (r.ok) {
          // invalid-utf8 appends replacement characters after the text; otherwise exact.
          if (modes.includes('invalid-utf8')) expect(r.text.startsWith(`s${seed}-${i}`)).toBe(true);
          else expect(r.text).toBe(`s${seed}-${i}`);
        } else expect(CALL_CODES.has(r.code), r.code).toBe(true);
      });
      // None of these misbehaviours is fatal: every call is answered and the server stays connected.
      expect(results.every((r) => r.ok)).toBe(true);
      expect(pool.get('h')?.status).toBe('connected');
      await pool.disconnect('h');
      expect(pool.get('h')?.status).toBe('disconnected');
      expect(findProcessesByMarker(ns).filter(isPidAlive)).toEqual([]);
    } catch (err) {
      throw new Error(`${label}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  });
});
