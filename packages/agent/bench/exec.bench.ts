/**
 * Benchmark: an Exec round trip against one flat call through the agent's funnel.
 *
 *   tsx --conditions=@wave/source bench/exec.bench.ts
 *
 * On the same tool (the `hello` fixture's `echo`, and server-everything's `echo`,
 * both over stdio through @wave/mcp-pool and the agent's funnel: identity, rules,
 * pool call, output guard) it measures, interleaved in a rotating order: one flat
 * funnel call, an Exec run of an empty script, and an Exec run of a script making
 * one nested call. Exec runs through its exposure exactly as in a turn, its nested
 * call through the same funnel. Prints p50 / p95 and the ratio to the flat call
 * (goal: one nested call <= 1.3x a flat call, p50). Asserts nothing.
 *
 * Each measurement follows an idle gap (BENCH_EXEC_GAP_MS, default 25 ms), as
 * between two model turns, when the worker makes the next script's fresh context.
 * A fourth row is the floor under any worker-based Exec (EXEC.md): a bare worker
 * that does no sandbox work, around the same funnel call, with the four thread
 * hand-offs a script with one nested call needs (run, call, result, done).
 * A last table measures the sandbox alone around an in-memory host function (its
 * own time in microseconds), beside a bare worker's round trip: the floor under it.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '@wave/mcp-pool';
import { fixtureServer, killMarked, makeTempDir, realServer } from '@wave/testkit';
import { type CatalogTool, renderCatalog } from '../src/exposure/catalog';
import { createExecSandbox, type ExecHost } from '../src/exposure/exec/sandbox';
import { execExposure } from '../src/exposure/exec-exposure';
import type { LiveTool, ToolOutcome } from '../src/exposure/types';
import { Funnel } from '../src/funnel';
import { createOutputGuard } from '../src/guard/output-guard';
import { SURFACE_SETS } from './gateway-surface.bench';
import { fmt, quantile } from './stats';

const ROUNDS = Number(process.env.BENCH_EXEC_ROUNDS ?? 200);
const GAP_MS = Number(process.env.BENCH_EXEC_GAP_MS ?? 25);
const WARMUP = 20;

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Runner = () => Promise<{ isError: boolean }>;

/** A bare worker: it answers every message with the same message and does nothing else. */
function echoWorker(): { roundTrip: Runner; close: () => Promise<number> } {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m))",
    { eval: true },
  );
  const roundTrip: Runner = () =>
    new Promise((resolve) => {
      worker.once('message', () => resolve({ isError: false }));
      worker.postMessage({ t: 'ping', text: 'hi' });
    });
  return { roundTrip, close: () => worker.terminate() };
}

/** Runs the named runners interleaved (rotating order, an idle gap before each); p50 and p95 of each. */
async function interleaved(runners: [string, Runner][]): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>(runners.map(([name]) => [name, []]));
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    for (let k = 0; k < runners.length; k++) {
      const [name, run] = runners[(i + k) % runners.length] as [string, Runner];
      if (GAP_MS > 0) await idle(GAP_MS);
      const t0 = performance.now();
      const r = await run();
      const ms = performance.now() - t0;
      if (r.isError) throw new Error(`bench run "${name}" failed: ${JSON.stringify(r)}`);
      if (i >= WARMUP) times.get(name)?.push(ms);
    }
  }
  return times;
}

function report(label: string, times: Map<string, number[]>, base: string): void {
  const p50 = quantile(times.get(base) ?? [], 0.5);
  console.log(`${label} (${ROUNDS} rounds, interleaved, ${GAP_MS} ms idle before each)`);
  for (const [name, xs] of times) {
    console.log(
      `  ${name.padEnd(24)} p50 ${fmt(quantile(xs, 0.5)).padStart(9)}  p95 ${fmt(quantile(xs, 0.95)).padStart(9)}  ${(quantile(xs, 0.5) / p50).toFixed(2)}x ${base}`,
    );
  }
}

/** A flat funnel call against Exec runs whose nested call goes through the same funnel. */
async function viaFunnel(
  label: string,
  server: string,
  spec: ReturnType<typeof fixtureServer>,
  args: Record<string, unknown>,
): Promise<void> {
  const ns = `wave-bench-exec:${randomUUID().slice(0, 8)}`;
  const tmp = await makeTempDir('wave-bench-');
  const { servers } = mergeSources([{ source: 'constructor', servers: { [server]: spec } }], {
    workdir: tmp.path,
  });
  const pool = McpPool.create({ servers, markerNamespace: ns });
  const exec = execExposure();
  const bare = echoWorker();
  try {
    const record = await pool.connect(server);
    const funnel = new Funnel({
      pool,
      servers: () => servers.map((s) => ({ server: s })),
      builtins: new Map(),
      builtinContext: () => ({
        workdir: tmp.path,
        home: tmp.path,
        sessionDir: tmp.path,
        reloadConfig: async () => {},
      }),
      rules: () => ({ allow: [`mcp__${server}__*`] }),
      remembered: new Map(),
      guard: createOutputGuard({ dir: tmp.path }),
      supportsVision: false,
    });
    const tools: LiveTool[] = record.tools.map((t) => ({
      server,
      name: t.name,
      fullName: `mcp__${server}__${t.name}`,
      ...(t.description !== undefined ? { description: t.description } : {}),
      inputSchema: t.inputSchema,
    }));
    const plan = exec.plan({ tools, builtins: [], servers: [] });
    const callTool = (n: string, a: Record<string, unknown>, o?: { signal?: AbortSignal }) =>
      funnel.call(n, a, o);
    const fullName = `mcp__${server}__echo`;
    const execRun = (code: string) => (): Promise<ToolOutcome> => {
      const route = plan.route({ id: 'bench', name: 'Exec', arguments: { code } });
      if (route.kind !== 'custom') throw new Error('Exec is not routed to its handler');
      return route.run({ callTool });
    };
    // The four thread hand-offs of a script with one nested call (run, call, result,
    // done) around the same funnel call, with no sandbox work: no context, compile or copy.
    const floor: Runner = async () => {
      await bare.roundTrip();
      await funnel.call(fullName, args);
      return bare.roundTrip();
    };
    const times = await interleaved([
      ['flat funnel call', () => funnel.call(fullName, args)],
      ['Exec, empty script', execRun('return 1')],
      ['Exec, one nested call', execRun(`return await tools.${fullName}(${JSON.stringify(args)})`)],
      ['floor: 4 hand-offs+call', floor],
    ]);
    report(label, times, 'flat funnel call');
  } finally {
    await bare.close();
    await exec.close();
    await pool.destroy();
    await killMarked(ns);
    await tmp.cleanup();
  }
}

/**
 * The sandbox alone around an in-memory host function: its own time per run,
 * beside the floor under it: a bare worker's postMessage round trip after the
 * same idle gap (an empty script needs one, a script with one nested call two).
 */
async function inMemory(): Promise<void> {
  const tool: CatalogTool = {
    server: 'bench',
    name: 'echo',
    fullName: 'mcp__bench__echo',
    description: 'Echo',
  };
  const host: ExecHost = {
    listTools: () => [tool],
    call: async (_name, args) => ({ content: JSON.stringify(args) }),
    search: () => [],
  };
  const sandbox = createExecSandbox();
  const bare = echoWorker();
  try {
    const times = await interleaved([
      [
        'direct host call',
        () =>
          host
            .call('mcp__bench__echo', { message: 'hi' }, new AbortController().signal)
            .then(() => ({ isError: false })),
      ],
      ['Exec, empty script', () => sandbox.run('return 1', host)],
      [
        'Exec, one nested call',
        () => sandbox.run('return await tools.mcp__bench__echo({ message: "hi" })', host),
      ],
      ['bare worker round trip', bare.roundTrip],
    ]);
    report("in-memory host function (the sandbox's own time)", times, 'direct host call');
  } finally {
    await sandbox.close();
    await bare.close();
  }
}

/** Catalog size against the raw tool list (name, description, input schema as JSON), both as characters / 4. */
function catalogSizes(): void {
  const raw = JSON.parse(
    readFileSync(new URL('../test/fixtures/search-catalog.json', import.meta.url), 'utf8'),
  ) as {
    server: string;
    name: string;
    description?: string;
    inputSchema?: unknown;
  }[];
  const sets = SURFACE_SETS.map(
    (servers) => [`${servers.length} server${servers.length === 1 ? '' : 's'}`, servers] as const,
  );
  console.log('tool-surface tokens (characters / 4)');
  for (const [label, servers] of sets) {
    const tools = raw.filter((t) => servers.includes(t.server));
    const rawTokens = Math.ceil(
      tools
        .map((t) =>
          JSON.stringify({
            name: `mcp__${t.server}__${t.name}`,
            description: t.description,
            inputSchema: t.inputSchema,
          }),
        )
        .join('').length / 4,
    );
    const catalog = renderCatalog(tools.map((t) => ({ ...t, fullName: `mcp__${t.server}__${t.name}` })));
    const shown = /Showing (\d+) of/.exec(catalog)?.[1] ?? String(tools.length);
    console.log(
      `  ${label.padEnd(40)} ${String(tools.length).padStart(3)} tools: raw schemas ${String(rawTokens).padStart(6)}, Exec catalog ${String(Math.ceil(catalog.length / 4)).padStart(5)} (${shown} entries shown)`,
    );
  }
}

export default async function main(): Promise<void> {
  catalogSizes();
  const load = loadavg().map((x) => x.toFixed(1));
  console.log(`machine: ${cpus().length} cores, load average ${load.join(' / ')} (figures are wall-clock)`);
  await viaFunnel('hello fixture echo over stdio, through the funnel', 'hello', fixtureServer('hello'), {
    text: 'benchmark payload',
  });
  await viaFunnel(
    'server-everything echo over stdio, through the funnel',
    'everything',
    realServer('everything'),
    { message: 'benchmark payload' },
  );
  await inMemory();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
