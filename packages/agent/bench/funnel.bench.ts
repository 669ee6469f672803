/**
 * Per-call overhead of the agent's tool funnel (identity -> rules -> approval
 * -> pool.callTool -> output guard) against a raw SDK `Client.callTool` on the
 * same fixture server. Calls interleave one by one so all see the same machine load.
 * Goal: funnel p50 <= 1.05x raw p50.
 *
 * `measureToolCalls({ exec: true })` adds a fourth path: the Exec tool running
 * a script that makes one nested call (sandbox -> funnel -> pool), as the
 * agent routes it; the printed run here leaves it out.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '@wave/mcp-pool';
import { fixtureServer, killMarked, makeTempDir } from '@wave/testkit';
import { execExposure } from '../src/exposure/exec-exposure';
import { Funnel } from '../src/funnel';
import { createOutputGuard } from '../src/guard/output-guard';
import { fmt, quantile } from './stats';

/** Per-call samples (ms), interleaved call by call on the same `hello` fixture server. */
export interface ToolCallSamples {
  raw: number[];
  viaPool: number[];
  viaFunnel: number[];
  /** The Exec tool with a script making one nested `echo` call; empty unless asked for. */
  viaExec: number[];
}

/**
 * Echo calls through the raw SDK Client, `McpPool.callTool`, the agent's
 * funnel and (with `exec`) the Exec tool with one nested call.
 */
export async function measureToolCalls(
  opts: { calls?: number; warmup?: number; exec?: boolean; execGapMs?: number } = {},
): Promise<ToolCallSamples> {
  const execGapMs = opts.execGapMs ?? 5;
  const calls = opts.calls ?? Number(process.env.BENCH_CALLS ?? 2000);
  const warmup = opts.warmup ?? 50;
  const ns = `wave-bench-agent:${randomUUID().slice(0, 8)}`;
  const tmp = await makeTempDir('wave-bench-');
  const spec = fixtureServer('hello', { WAVE_REAPER_ID: `${ns}:raw` });
  const client = new Client({ name: 'bench-raw', version: '0' });
  await client.connect(
    new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: 'pipe' }),
  );

  const { servers } = mergeSources([{ source: 'constructor', servers: { hello: fixtureServer('hello') } }], {
    workdir: tmp.path,
  });
  const pool = McpPool.create({ servers, markerNamespace: `${ns}:pool` });
  await pool.ensureConnected();
  const funnel = new Funnel({
    pool,
    servers: () => servers.map((server) => ({ server })),
    builtins: new Map(),
    builtinContext: () => ({
      workdir: tmp.path,
      home: tmp.path,
      sessionDir: tmp.path,
      reloadConfig: async () => {},
    }),
    rules: () => ({ allow: ['mcp__hello__*'] }),
    remembered: new Map(),
    guard: createOutputGuard({ dir: tmp.path }),
    supportsVision: false,
  });

  const raw: number[] = [];
  const viaFunnel: number[] = [];
  const viaPool: number[] = [];
  const viaExec: number[] = [];
  const args = { text: 'benchmark payload' };
  const exec = opts.exec ? execExposure() : undefined;
  const execRoute = exec
    ?.plan({
      tools: [{ server: 'hello', name: 'echo', fullName: 'mcp__hello__echo', description: 'Echo the text' }],
      builtins: [],
      servers: [],
    })
    .route({
      id: 'bench',
      name: 'Exec',
      arguments: { code: `return await tools.mcp__hello__echo(${JSON.stringify(args)})` },
    });
  const runExec = async () => {
    if (execRoute?.kind !== 'custom') throw new Error('Exec did not route to its handler');
    const r = await execRoute.run({ callTool: (name, a, o) => funnel.call(name, a, o) });
    if (r.isError) throw new Error(`Exec call failed: ${JSON.stringify(r.content)}`);
  };
  for (let i = 0; i < warmup; i++) {
    await client.callTool({ name: 'echo', arguments: args });
    await funnel.call('mcp__hello__echo', args);
    if (exec) await runExec();
  }
  // Interleaved call by call, in a rotating order, so all three see the same load.
  const runners: (() => Promise<void>)[] = [
    async () => {
      const t0 = performance.now();
      await client.callTool({ name: 'echo', arguments: args });
      raw.push(performance.now() - t0);
    },
    async () => {
      const t0 = performance.now();
      const r = await funnel.call('mcp__hello__echo', args);
      viaFunnel.push(performance.now() - t0);
      if (r.isError) throw new Error(`funnel call failed: ${JSON.stringify(r.content)}`);
    },
    async () => {
      const t0 = performance.now();
      await pool.callTool('hello', 'echo', args);
      viaPool.push(performance.now() - t0);
    },
  ];
  if (exec) {
    runners.push(async () => {
      const t0 = performance.now();
      await runExec();
      viaExec.push(performance.now() - t0);
    });
  }
  // After a run the Exec sandbox prepares the next one off the clock, as it does between two model
  // turns. So that this work never lands on the next call, with Exec every call follows a short pause.
  const pause = () => (exec ? new Promise((resolve) => setTimeout(resolve, execGapMs)) : undefined);
  for (let i = 0; i < calls; i++) {
    for (let k = 0; k < runners.length; k++) {
      await pause();
      await (runners[(i + k) % runners.length] as () => Promise<void>)();
    }
  }
  await exec?.close();
  await client.close();
  await pool.destroy();
  await killMarked(ns);
  await tmp.cleanup();
  return { raw, viaPool, viaFunnel, viaExec };
}

export default async function run(): Promise<void> {
  const calls = Number(process.env.BENCH_CALLS ?? 2000);
  const { raw, viaPool, viaFunnel } = await measureToolCalls({ calls });

  const p50 = (xs: number[]) => quantile(xs, 0.5);
  const p95 = (xs: number[]) => quantile(xs, 0.95);
  console.log(`tool call, ${calls} calls each (hello fixture, echo):`);
  console.log(`  raw SDK Client.callTool  p50 ${fmt(p50(raw))}  p95 ${fmt(p95(raw))}`);
  console.log(`  pool.callTool            p50 ${fmt(p50(viaPool))}  p95 ${fmt(p95(viaPool))}`);
  console.log(`  agent funnel             p50 ${fmt(p50(viaFunnel))}  p95 ${fmt(p95(viaFunnel))}`);
  const paired = viaFunnel.map((f, i) => f - (viaPool[i] as number));
  console.log(`  funnel / raw p50: ${(p50(viaFunnel) / p50(raw)).toFixed(3)}x (goal <= 1.05x)`);
  console.log(`  funnel - pool.callTool, paired per call: p50 ${fmt(p50(paired))} (the funnel's own work)`);
}
