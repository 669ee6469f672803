/**
 * The measurements of one run of the suite. Each step calls the measuring
 * function a package's own bench exports (so `pnpm --filter X bench` and this
 * suite time the same code) and turns its samples into figures next to the
 * raw `@modelcontextprotocol/sdk` Client measured at the same moments.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { findProcessesByMarker, fixtureServer, isPidAlive, killMarked } from '@wave/testkit';
import { buildCli, measureMcpList } from '../../apps/cli/bench/run.ts';
import { measureAgentCreate } from '../../packages/agent/bench/create.bench.ts';
import { measureToolCalls } from '../../packages/agent/bench/funnel.bench.ts';
import { toolSurfaceTokens } from '../../packages/agent/bench/gateway-surface.bench.ts';
import { measureSearchLatency } from '../../packages/agent/bench/search-latency.bench.ts';
import { measureCache } from '../../packages/mcp-cache/bench/run.ts';
import { measureInstructionsDelta } from '../../packages/mcp-instructions/bench/run.ts';
import { measurePool } from '../../packages/mcp-pool/bench/run.ts';
import { type Measured, median, quantile } from './report.ts';

/** How many timings each step takes. */
export interface BenchSizes {
  /** Echo calls per path (raw, pool, funnel, Exec), interleaved. */
  calls: number;
  /** Dials and disconnects of the `hello` fixture, raw and pool each. */
  dials: number;
  /** `Agent.create` calls (after 5 unmeasured). */
  creates: number;
  /** Raw SDK hosts connecting all 32 servers at start. */
  rawConnects: number;
  /** Calls of the instructions delta per situation. */
  deltaRuns: number;
  /** Timings per cache operation. */
  cacheRuns: number;
  /** `wave mcp list` runs. */
  listRuns: number;
}

export const FULL_SIZES: BenchSizes = {
  calls: 1000,
  dials: 10,
  creates: 30,
  rawConnects: 1,
  deltaRuns: 200,
  cacheRuns: 7,
  listRuns: 11,
};

/** One timing of everything: for a smoke run, not for figures. */
export const SMOKE_SIZES: BenchSizes = {
  calls: 1,
  dials: 1,
  creates: 1,
  rawConnects: 1,
  deltaRuns: 1,
  cacheRuns: 1,
  listRuns: 1,
};

/** A step of the suite; `log` says what it is doing (stderr, so stdout stays the table). */
type Log = (line: string) => void;

/** Raw SDK figures measured early in a run that later steps use as their yardstick. */
interface Yardsticks {
  rawDial: number;
  rawEchoP50: number;
}

const RAW = 'raw SDK Client';

/** A raw SDK host that connects all 32 configured servers at start: wall time and processes it runs. */
async function rawConnectAll(servers: number): Promise<{ ms: number; processes: number }> {
  const ns = `wave-bench-raw32:${randomUUID().slice(0, 8)}`;
  const clients: Client[] = [];
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: servers }, async (_, i) => {
        const spec = fixtureServer('hello', { HELLO_NAME: `s${i}`, WAVE_REAPER_ID: `${ns}:${i}` });
        const client = new Client({ name: 'bench-raw', version: '0' });
        clients.push(client);
        await client.connect(
          new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: 'pipe' }),
        );
        await client.listTools();
      }),
    );
    const ms = performance.now() - t0;
    const processes = findProcessesByMarker(ns).filter(isPidAlive).length;
    return { ms, processes };
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await killMarked(ns);
  }
}

async function poolStep(sizes: BenchSizes, log: Log): Promise<{ figures: Measured[]; rawDial: number }> {
  log(`dial and disconnect, raw SDK vs McpPool (${sizes.dials} each, then the spawner tree)`);
  const p = await measurePool({ calls: 0, warmup: 0, dials: sizes.dials });
  const rawDial = median(p.rawDials);
  const g = 'Dial and disconnect (hello / spawner fixtures)';
  return {
    rawDial,
    figures: [
      {
        id: 'dial.pool',
        group: g,
        label: 'dial (spawn + initialize + tools/list), McpPool.connect',
        unit: 'ms',
        value: median(p.poolDials),
        samples: p.poolDials.length,
        reference: { label: RAW, value: rawDial },
      },
      {
        id: 'disconnect.hello',
        group: g,
        label: 'disconnect, well-behaved server',
        unit: 'ms',
        value: median(p.poolClose),
        samples: p.poolClose.length,
        reference: { label: `${RAW} close()`, value: median(p.rawClose) },
      },
      {
        id: 'disconnect.spawner',
        group: g,
        label: 'disconnect, spawner tree (ignores SIGTERM, setsid, double fork)',
        unit: 'ms',
        value: p.poolSpMs,
        samples: 1,
        reference: { label: `${RAW} close()`, value: p.rawSpMs },
      },
      {
        id: 'disconnect.spawner.survivors',
        group: g,
        label: 'spawner processes left after disconnect (by marker)',
        unit: 'processes',
        value: p.poolSurvivors,
        samples: 1,
        reference: { label: `${RAW} close()`, value: p.rawSurvivors },
      },
    ],
  };
}

async function toolCallStep(
  sizes: BenchSizes,
  log: Log,
): Promise<{ figures: Measured[]; rawEchoP50: number }> {
  log(`echo calls, interleaved: raw SDK, McpPool, funnel, Exec (${sizes.calls} each)`);
  const t = await measureToolCalls({ calls: sizes.calls, warmup: Math.min(50, sizes.calls), exec: true });
  const g = 'Tool call (hello fixture, echo)';
  const rawEchoP50 = quantile(t.raw, 0.5);
  const paths: [string, string, number[]][] = [
    ['pool', 'McpPool.callTool', t.viaPool],
    ['funnel', "the agent's funnel (rules, approval, guard)", t.viaFunnel],
    ['exec', 'Exec, a script with one nested call', t.viaExec],
  ];
  const figures: Measured[] = [];
  for (const [id, label, xs] of paths) {
    for (const [q, name] of [
      [0.5, 'p50'],
      [0.95, 'p95'],
    ] as const) {
      figures.push({
        id: `echo.${id}.${name}`,
        group: g,
        label: `echo ${name} through ${label}`,
        unit: 'ms',
        value: quantile(xs, q),
        samples: xs.length,
        reference: { label: `${RAW} callTool ${name}`, value: quantile(t.raw, q) },
      });
    }
  }
  return { figures, rawEchoP50 };
}

async function createStep(sizes: BenchSizes, log: Log): Promise<Measured[]> {
  log(`Agent.create with 32 servers (${sizes.creates}), raw SDK host connecting 32 (${sizes.rawConnects})`);
  const c = await measureAgentCreate({ runs: sizes.creates, warmup: Math.min(5, sizes.creates) });
  const raw: { ms: number; processes: number }[] = [];
  for (let i = 0; i < sizes.rawConnects; i++) raw.push(await rawConnectAll(c.servers));
  const ref = `${RAW}, all ${c.servers} connected at start`;
  const g = `Agent start-up (${c.servers} configured servers)`;
  return [
    {
      id: 'create.time',
      group: g,
      label: 'Agent.create',
      unit: 'ms',
      value: median(c.times),
      samples: c.times.length,
      reference: { label: ref, value: median(raw.map((r) => r.ms)) },
    },
    {
      id: 'create.processes',
      group: g,
      label: 'processes started by Agent.create',
      unit: 'processes',
      value: c.maxProcs,
      samples: c.times.length,
      reference: { label: ref, value: Math.max(...raw.map((r) => r.processes)) },
    },
  ];
}

function instructionsStep(sizes: BenchSizes, y: Yardsticks, log: Log): Measured[] {
  log(`instructions delta on a 100 000-message history (${sizes.deltaRuns} calls per situation)`);
  const d = measureInstructionsDelta({ runs: sizes.deltaRuns });
  const g = `Instructions delta (${d.messages.toLocaleString('en').replace(/,/g, ' ')} messages, 32 servers)`;
  const ref = { label: `one ${RAW} echo call (p50)`, value: y.rawEchoP50 };
  return d.rows.slice(0, 2).map((row, i) => ({
    id: i === 0 ? 'instructions.steady' : 'instructions.changed',
    group: g,
    label: i === 0 ? 'computeInstructionsDelta, nothing new' : 'computeInstructionsDelta, one server changed',
    unit: 'ms',
    value: median(row.times),
    samples: row.times.length,
    reference: ref,
  }));
}

async function cacheStep(sizes: BenchSizes, y: Yardsticks, log: Log): Promise<Measured[]> {
  log(`tool cache, 32 servers x 64 tools x 50 workdirs (${sizes.cacheRuns} timings per operation)`);
  const c = await measureCache({ runs: sizes.cacheRuns });
  const g = `Tool cache (32 servers x 64 tools x 50 workdirs, ${(c.size / 1024 / 1024).toFixed(1)} MiB file)`;
  const ref = { label: `${RAW} dial of one server (to list its tools)`, value: y.rawDial };
  const pick: [string, string, string][] = [
    ['cache.read.cold', 'cold read: new instance, list(workdir)', 'read, cold (new instance, one workdir)'],
    ['cache.read.warm', 'warm read: 32 x get() on one instance', 'read, warm (32 x get)'],
    ['cache.write', 'write: 32 servers of one workdir (same instance)', 'write (32 servers of one workdir)'],
  ];
  const figures: Measured[] = [];
  for (const [id, row, label] of pick) {
    const samples = c.rows.find(([l]) => l === row)?.[1];
    if (!samples) throw new Error(`the cache bench has no row "${row}"`);
    figures.push({
      id,
      group: g,
      label,
      unit: 'ms',
      value: median(samples),
      samples: samples.length,
      reference: ref,
    });
  }
  return figures;
}

function surfaceStep(log: Log): Measured[] {
  log('tool-surface tokens (characters / 4) in flat, Exec and gateway modes');
  const figures: Measured[] = [];
  for (const s of toolSurfaceTokens()) {
    const g = 'Tool surface declared to the model (real tools, tokens = characters / 4)';
    const n = s.servers.length;
    const what = `${n} server${n === 1 ? '' : 's'}, ${s.tools} tools`;
    const ref = { label: `${RAW}: every tool as listed`, value: s.raw };
    for (const [mode, value] of [
      ['flat', s.flat],
      ['exec', s.exec],
      ['gateway', s.gateway],
    ] as const) {
      figures.push({
        id: `surface.${n}.${mode}`,
        group: g,
        label: `${what}, ${mode === 'exec' ? 'Exec' : mode} mode`,
        unit: 'tokens',
        value,
        samples: 1,
        reference: ref,
      });
    }
  }
  return figures;
}

function searchStep(y: Yardsticks, log: Log): Measured[] {
  log('tool search over 1 000 tools');
  const s = measureSearchLatency();
  const g = `Tool search (${s.tools.toLocaleString('en').replace(/,/g, ' ')} tools)`;
  const ref = { label: `one ${RAW} echo call (p50)`, value: y.rawEchoP50 };
  return [
    {
      id: 'search.p50',
      group: g,
      label: 'query p50',
      unit: 'ms',
      value: quantile(s.times, 0.5),
      samples: s.times.length,
      reference: ref,
    },
    {
      id: 'search.p95',
      group: g,
      label: 'query p95',
      unit: 'ms',
      value: quantile(s.times, 0.95),
      samples: s.times.length,
      reference: ref,
    },
    {
      id: 'search.build',
      group: g,
      label: 'index build (once per change of the tool set)',
      unit: 'ms',
      value: quantile(s.buildTimes, 0.5),
      samples: s.buildTimes.length,
      // The index is rebuilt when the set of tools changes, that is when a server connects.
      reference: { label: `${RAW} dial of one server`, value: y.rawDial },
    },
  ];
}

async function mcpListStep(sizes: BenchSizes, log: Log): Promise<Measured[]> {
  log(`wave mcp list with 32 servers (building the CLI, then ${sizes.listRuns} runs)`);
  const bin = buildCli();
  const l = await measureMcpList(bin, { runs: sizes.listRuns });
  const g = 'CLI (32 configured servers)';
  return [
    {
      id: 'cli.list',
      group: g,
      label: '`wave mcp list --json`, whole command',
      unit: 'ms',
      value: median(l.times),
      samples: l.times.length,
      reference: { label: '`node -e 0` at the same moments', value: median(l.bare) },
    },
    {
      id: 'cli.list.cpu',
      group: g,
      label: '`wave mcp list --json`, CPU time (user + system, start-up included)',
      unit: 'ms',
      value: median(l.cpu),
      samples: l.cpu.length,
      reference: { label: '`node -e 0`, CPU time', value: median(l.bareCpu) },
    },
    {
      id: 'cli.list.processes',
      group: g,
      label: 'processes started by `wave mcp list`',
      unit: 'processes',
      value: l.spawned,
      samples: l.times.length,
    },
  ];
}

/** Every measurement once, in table order. */
export async function measureAll(sizes: BenchSizes, log: Log): Promise<Measured[]> {
  const pool = await poolStep(sizes, log);
  const calls = await toolCallStep(sizes, log);
  const y: Yardsticks = { rawDial: pool.rawDial, rawEchoP50: calls.rawEchoP50 };
  return [
    ...pool.figures,
    ...calls.figures,
    ...(await createStep(sizes, log)),
    ...instructionsStep(sizes, y, log),
    ...(await cacheStep(sizes, y, log)),
    ...surfaceStep(log),
    ...searchStep(y, log),
    ...(await mcpListStep(sizes, log)),
  ];
}
