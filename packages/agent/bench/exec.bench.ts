/**
 * Benchmark: the Exec round trip against a direct call of the same host function.
 *
 *   tsx --conditions=@wave/source bench/exec.bench.ts
 *
 * For two host functions (an in-memory one, and a real MCP server call through
 * @wave/mcp-pool: server-everything's `echo` over stdio) it measures, interleaved:
 * a direct call, an Exec run of an empty script, and an Exec run of a script
 * making one nested call. Prints p50 / p95 and the ratio to the direct call
 * (goal: one nested call <= 1.3x a direct call, p50). Asserts nothing.
 *
 * Each run is preceded by a short idle gap, as between two model turns in an
 * agent (where the worker prepares the next fresh context); a second table
 * runs the scripts back to back, where that preparation is on the clock.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '@wave/mcp-pool';
import { realServer } from '@wave/testkit';
import { type CatalogTool, renderCatalog } from '../src/exposure/catalog';
import type { NestedToolResult } from '../src/exposure/exec/result';
import { createExecSandbox, type ExecHost } from '../src/exposure/exec/sandbox';

const ROUNDS = Number(process.env.BENCH_EXEC_ROUNDS ?? 300);
const WARMUP = 30;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))));
  return s[i] ?? Number.NaN;
}
const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

type Call = (args: unknown, signal?: AbortSignal) => Promise<NestedToolResult>;

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(label: string, call: Call, gapMs: number): Promise<void> {
  const tool: CatalogTool = {
    server: 'bench',
    name: 'echo',
    fullName: 'mcp__bench__echo',
    description: 'Echo',
  };
  // Phases of the nested run: start -> the call reaches the host, the call itself, its result -> run ends.
  let callIn = 0;
  let callOut = 0;
  const host: ExecHost = {
    listTools: () => [tool],
    call: async (_name, args, signal) => {
      callIn = performance.now();
      try {
        return await call(args, signal);
      } finally {
        callOut = performance.now();
      }
    },
    search: () => [],
  };
  const toCall: number[] = [];
  const fromCall: number[] = [];
  const sandbox = createExecSandbox();
  const direct: number[] = [];
  const empty: number[] = [];
  const nested: number[] = [];
  try {
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      if (gapMs > 0) await idle(gapMs);
      let t0 = performance.now();
      await call({ message: 'hi' });
      const d = performance.now() - t0;
      if (gapMs > 0) await idle(gapMs);
      t0 = performance.now();
      const r1 = await sandbox.run('return 1', host);
      const e = performance.now() - t0;
      if (gapMs > 0) await idle(gapMs);
      t0 = performance.now();
      const r2 = await sandbox.run('return await tools.mcp__bench__echo({ message: "hi" })', host);
      const end = performance.now();
      const n = end - t0;
      if (r1.isError || r2.isError) throw new Error(`bench run failed: ${JSON.stringify([r1, r2])}`);
      if (i >= WARMUP) {
        direct.push(d);
        empty.push(e);
        nested.push(n);
        toCall.push(callIn - t0);
        fromCall.push(end - callOut);
      }
    }
  } finally {
    await sandbox.close();
  }
  const p50 = quantile(direct, 0.5);
  const row = (name: string, xs: number[]) =>
    `  ${name.padEnd(28)} p50 ${fmt(quantile(xs, 0.5)).padStart(9)}  p95 ${fmt(quantile(xs, 0.95)).padStart(9)}  ${(quantile(xs, 0.5) / p50).toFixed(2)}x direct`;
  const mode = gapMs > 0 ? `runs ${gapMs} ms apart` : 'back to back';
  console.log(`${label} (${ROUNDS} rounds, interleaved, ${mode})`);
  console.log(row('direct host call', direct));
  console.log(row('Exec, empty script', empty));
  console.log(row('Exec, one nested call', nested));
  const own = toCall.map((x, i) => x + (fromCall[i] ?? 0));
  console.log(
    `  Exec's own time around the call, p50: ${fmt(quantile(own, 0.5))}` +
      ` (run start -> call at the host ${fmt(quantile(toCall, 0.5))}, call result -> run end ${fmt(quantile(fromCall, 0.5))});` +
      ` direct + own = ${((p50 + quantile(own, 0.5)) / p50).toFixed(2)}x direct`,
  );
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
  const sets: [string, string[]][] = [
    ['1 server (github)', ['github']],
    ['3 servers (github, filesystem, memory)', ['github', 'filesystem', 'memory']],
    [
      '10 servers',
      [
        'github',
        'filesystem',
        'memory',
        'slack',
        'notion',
        'stripe',
        'supabase',
        'playwright',
        'sentry',
        'gitlab',
      ],
    ],
  ];
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
  const memory: Call = async (args) => ({ content: JSON.stringify(args) });
  await measure('in-memory host function', memory, 5);
  await measure('in-memory host function', memory, 0);

  const { servers } = mergeSources(
    [{ source: 'constructor', servers: { everything: realServer('everything') } }],
    {
      workdir: process.cwd(),
    },
  );
  const pool = McpPool.create({ servers, markerNamespace: 'wave-bench:exec' });
  try {
    await pool.connect('everything');
    const real: Call = async (args, signal) => {
      const res = await pool.callTool('everything', 'echo', args as Record<string, unknown>, { signal });
      return {
        content: (res.content as { type: 'text'; text: string }[]).map((b) => ({
          type: 'text',
          text: b.text,
        })),
      };
    };
    await measure('real MCP call (server-everything echo over stdio, via McpPool)', real, 5);
    await measure('real MCP call (server-everything echo over stdio, via McpPool)', real, 0);
  } finally {
    await pool.destroy();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
