/**
 * Benchmark: @wave/mcp-pool vs the raw MCP SDK on the same fixture servers.
 *
 *   pnpm --filter @wave/mcp-pool bench
 *
 * Prints medians / p95 and ratios; asserts nothing. Every process started
 * carries a WAVE_REAPER_ID marker; leftovers of the raw SDK runs are counted
 * (that is the point) and then killed.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mergeSources } from '@wave/mcp-config';
import { findProcessesByMarker, fixtureServer, isPidAlive, killMarked } from '@wave/testkit';
import type { McpPool as Pool } from '../src/index';

/**
 * What is measured: the built package (`dist`, what an installed copy runs)
 * when it exists and `BENCH_SOURCE` is not set, else the TypeScript source.
 * The source runs through tsx, which wraps every function it creates to keep
 * its name: a cost per closure that the built package does not pay.
 */
const DIST = new URL('../dist/index.js', import.meta.url);
const TARGET =
  process.env.BENCH_SOURCE === undefined && existsSync(DIST) ? 'built package (dist)' : 'source (tsx)';
const { McpPool } = (await import(
  TARGET === 'source (tsx)' ? '../src/index' : DIST.href
)) as typeof import('../src/index');

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const DIALS = Number(process.env.BENCH_DIALS ?? 10);
/** Fresh raw/pool server pairs the echo calls are spread over. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 4);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))));
  return s[i]!;
}
const med = (xs: number[]) => quantile(xs, 0.5);
const p95 = (xs: number[]) => quantile(xs, 0.95);
const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** Markers for one measurement: every raw-SDK process gets its own, the pool's processes share one. */
function markers(ns: string) {
  let seq = 0;
  /** A marker for one raw-SDK process (so its leftovers can be counted and killed). */
  const rawMarker = (): string => {
    seq += 1;
    return `${ns}:raw-${seq}`;
  };
  const rawTransport = (name: 'hello' | 'spawner', env: Record<string, string> = {}) => {
    const spec = fixtureServer(name, { ...env, WAVE_REAPER_ID: rawMarker() });
    return new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      stderr: 'pipe',
    });
  };
  const poolFor = (name: 'hello' | 'spawner', env: Record<string, string> = {}): Pool => {
    const { servers } = mergeSources(
      [{ source: 'constructor', servers: { [name]: fixtureServer(name, env) } }],
      {
        workdir: process.cwd(),
      },
    );
    return McpPool.create({ servers, markerNamespace: `${ns}:pool` });
  };
  const rawDial = async (): Promise<{ client: Client; ms: number }> => {
    const t0 = performance.now();
    const client = new Client({ name: 'bench-raw', version: '0' });
    await client.connect(rawTransport('hello'));
    await client.listTools();
    return { client, ms: performance.now() - t0 };
  };
  return { rawMarker, poolFor, rawDial };
}

async function echoLoop(call: () => Promise<unknown>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Samples (ms) of the raw SDK and of McpPool on the same fixture servers, measured interleaved. */
export interface PoolMeasurements {
  rawDials: number[];
  poolDials: number[];
  rawClose: number[];
  poolClose: number[];
  rawCalls: number[];
  poolCalls: number[];
  rawSpMs: number;
  poolSpMs: number;
  rawSurvivors: number;
  poolSurvivors: number;
  /** Processes of the raw SDK runs still alive at the end (killed before returning). */
  leftovers: number;
}

/**
 * Dial, echo call and disconnect (well-behaved `hello`, and the `spawner`
 * tree) through the raw SDK Client and through McpPool. Leaves no process.
 */
export async function measurePool(
  opts: { calls?: number; dials?: number; warmup?: number; pairs?: number } = {},
): Promise<PoolMeasurements> {
  const calls = opts.calls ?? CALLS;
  const pairs = opts.pairs ?? PAIRS;
  const dials = opts.dials ?? DIALS;
  const warmup = opts.warmup ?? 200;
  const NS = `wave-bench:${randomUUID().slice(0, 8)}`;
  const { rawMarker, poolFor, rawDial } = markers(NS);
  try {
    // ---- dial time
    const rawDials: number[] = [];
    const poolDials: number[] = [];
    const rawClose: number[] = [];
    const poolClose: number[] = [];
    for (let i = 0; i < dials; i++) {
      const { client, ms } = await rawDial();
      rawDials.push(ms);
      const t0 = performance.now();
      await client.close();
      rawClose.push(performance.now() - t0);

      const pool = poolFor('hello');
      const t1 = performance.now();
      await pool.connect('hello');
      poolDials.push(performance.now() - t1);
      const t2 = performance.now();
      await pool.disconnect('hello');
      poolClose.push(performance.now() - t2);
      await pool.destroy();
    }

    // ---- echo calls: the same server fixture, both warm, alternating call by
    // call so machine noise hits both sides alike. Each side talks to its own
    // server process, and where the scheduler puts two processes can favour
    // either side for a whole run (single runs drifted by up to 20%): so the
    // calls are spread over `pairs` fresh raw/pool pairs, each side going
    // first in every other pair.
    const rawCalls: number[] = [];
    const poolCalls: number[] = [];
    const perPair = Math.ceil(calls / Math.max(1, pairs));
    for (let k = 0; calls > 0 && k < pairs; k++) {
      const { client } = await rawDial();
      const pool = poolFor('hello');
      await pool.ensureConnected();
      const rawCall = () => client.callTool({ name: 'echo', arguments: { text: 'ping' } });
      const poolCall = () => pool.callTool('hello', 'echo', { text: 'ping' });
      await echoLoop(rawCall, warmup);
      await echoLoop(poolCall, warmup);
      for (let i = 0; i < perPair; i++) {
        if (k % 2 === 0) {
          rawCalls.push(...(await echoLoop(rawCall, 1)));
          poolCalls.push(...(await echoLoop(poolCall, 1)));
        } else {
          poolCalls.push(...(await echoLoop(poolCall, 1)));
          rawCalls.push(...(await echoLoop(rawCall, 1)));
        }
      }
      await client.close();
      await pool.destroy();
    }

    // ---- spawner: grandchildren that ignore SIGTERM, setsid, double fork
    const rawSp = new Client({ name: 'bench-raw', version: '0' });
    const spMarker = rawMarker();
    const spSpec = fixtureServer('spawner', { WAVE_REAPER_ID: spMarker });
    await rawSp.connect(
      new StdioClientTransport({
        command: spSpec.command,
        args: spSpec.args,
        env: spSpec.env,
        stderr: 'pipe',
      }),
    );
    await rawSp.callTool({ name: 'pids', arguments: {} });
    const t3 = performance.now();
    await rawSp.close();
    const rawSpMs = performance.now() - t3;
    await new Promise((r) => setTimeout(r, 200));
    const rawSurvivors = findProcessesByMarker(spMarker).filter(isPidAlive).length;
    await killMarked(spMarker);

    const spPool = poolFor('spawner');
    await spPool.connect('spawner');
    await spPool.callTool('spawner', 'pids', {});
    const t4 = performance.now();
    await spPool.disconnect('spawner');
    const poolSpMs = performance.now() - t4;
    await new Promise((r) => setTimeout(r, 200));
    const poolSurvivors = findProcessesByMarker(`${NS}:pool`).filter(isPidAlive).length;
    await spPool.destroy();

    // Nothing of ours may be left.
    const left = findProcessesByMarker(NS).filter(isPidAlive);
    if (left.length > 0) await killMarked(NS);
    return {
      rawDials,
      poolDials,
      rawClose,
      poolClose,
      rawCalls,
      poolCalls,
      rawSpMs,
      poolSpMs,
      rawSurvivors,
      poolSurvivors,
      leftovers: left.length,
    };
  } catch (err) {
    await killMarked(NS).catch(() => {});
    throw err;
  }
}

async function main(): Promise<void> {
  console.log(
    `@wave/mcp-pool benchmark (node ${process.version}, ${CALLS} calls, ${DIALS} dials; pool: ${TARGET})\n`,
  );
  const { rawDials, poolDials, rawClose, poolClose, rawCalls, poolCalls, rawSpMs, poolSpMs, ...rest } =
    await measurePool();
  const { rawSurvivors, poolSurvivors, leftovers } = rest;

  // ---- report
  const rows: [string, string, string, string][] = [
    ['echo call p50', fmt(med(rawCalls)), fmt(med(poolCalls)), ratio(med(poolCalls), med(rawCalls))],
    ['echo call p95', fmt(p95(rawCalls)), fmt(p95(poolCalls)), ratio(p95(poolCalls), p95(rawCalls))],
    [
      'dial (spawn + initialize + tools/list) median',
      fmt(med(rawDials)),
      fmt(med(poolDials)),
      ratio(med(poolDials), med(rawDials)),
    ],
    [
      'disconnect, well-behaved hello, median',
      fmt(med(rawClose)),
      fmt(med(poolClose)),
      ratio(med(poolClose), med(rawClose)),
    ],
    ['disconnect, spawner tree', fmt(rawSpMs), fmt(poolSpMs), ratio(poolSpMs, rawSpMs)],
    ['spawner survivors after disconnect', String(rawSurvivors), String(poolSurvivors), '-'],
  ];
  const w = [46, 12, 12, 8];
  const line = (c: string[]) => c.map((x, i) => x.padEnd(w[i]!)).join(' | ');
  console.log(line(['measure', 'raw SDK', 'mcp-pool', 'pool/raw']));
  console.log(w.map((n) => '-'.repeat(n)).join('-|-'));
  for (const r of rows) console.log(line(r));
  console.log(
    `\nGoals: echo p50 <= 1.05x raw; well-behaved disconnect <= 100 ms; 0 spawner survivors.` +
      `\nraw SDK close() ends stdin, then waits up to 2 s before SIGTERM and 2 s before SIGKILL, direct child only.`,
  );

  if (leftovers > 0) console.log(`cleaning up ${leftovers} leftover process(es) of the raw SDK runs`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
