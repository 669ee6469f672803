/**
 * Benchmark: a cache holding 32 servers x 64 tools x 50 workdirs.
 * Prints medians and p95 of reading and writing it; asserts nothing.
 *
 * Run: pnpm --filter @wave/mcp-cache bench
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createToolCache } from '../src/cache';
import type { ToolSnapshotInput } from '../src/types';

const SERVERS = 32;
const TOOLS = 64;
const WORKDIRS = 50;
const RUNS = 15;

function makeEntries(round: number): ToolSnapshotInput[] {
  return Array.from({ length: SERVERS }, (_, s) => ({
    server: `server-${s}`,
    fingerprint: `sha256-${s}-${round}`.padEnd(64, '0'),
    instructions: `Server ${s}: rate limit 10 calls per minute. Always pass absolute paths.`,
    lastConnectedAt: Date.now(),
    tools: Array.from({ length: TOOLS }, (_, t) => ({
      name: `tool_${t}_of_${s}`,
      description: `Does operation ${t} on the resources managed by server ${s}. Returns a JSON document describing the result, or an error explaining what to fix.`,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Absolute path of the resource' },
          limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          mode: { type: 'string', enum: ['fast', 'safe', 'dry-run'] },
          tags: { type: 'array', items: { type: 'string' } },
        },
        required: ['path'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: t % 2 === 0, openWorldHint: false },
    })),
  }));
}

function stats(samples: number[]): { median: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { median: at(0.5), p95: at(0.95) };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const fmt = (ms: number) => ms.toFixed(2).padStart(9);

/** Samples (ms) of each operation, with the cache file's size and the initial fill time. */
export interface CacheMeasurements {
  size: number;
  fillMs: number;
  rows: [label: string, samples: number[]][];
  problems: string[];
}

/** Fills a cache file with 32 x 64 x 50 entries, then times reads and writes (`runs` each). */
export async function measureCache(opts: { runs?: number } = {}): Promise<CacheMeasurements> {
  const runsPerRow = opts.runs ?? RUNS;
  const dir = mkdtempSync(join(tmpdir(), 'wave-mcp-cache-bench-'));
  const file = join(dir, 'mcp-tools-cache.json');
  const problems: string[] = [];
  const open = () => createToolCache({ file, onDebug: (e) => problems.push(`${e.code}: ${e.message}`) });
  const names = Array.from({ length: SERVERS }, (_, s) => `server-${s}`);
  const workdirs = Array.from({ length: WORKDIRS }, (_, w) => `/projects/workdir-${w}`);
  try {
    const fill = open();
    const fillStart = performance.now();
    for (const wd of workdirs) await fill.write(wd, makeEntries(0), names);
    const fillMs = performance.now() - fillStart;
    const size = statSync(file).size;

    const rows: [string, number[]][] = [];
    const sample = async (label: string, fn: (run: number) => Promise<unknown>) => {
      const samples: number[] = [];
      for (let run = 0; run < runsPerRow; run++) samples.push(await time(() => fn(run)));
      rows.push([label, samples]);
    };

    const target = workdirs[WORKDIRS - 1] as string;
    await sample('cold read: new instance, list(workdir)', () => open().list(target));
    await sample('cold read: new instance, get(workdir, server, fp)', () =>
      open().get(target, 'server-7', 'sha256-7-0'.padEnd(64, '0')),
    );
    const warm = open();
    await warm.list(target);
    await sample(`warm read: ${SERVERS} x get() on one instance`, async () => {
      for (let s = 0; s < SERVERS; s++)
        await warm.get(target, `server-${s}`, `sha256-${s}-0`.padEnd(64, '0'));
    });
    const writer = open();
    await writer.list(target);
    await sample(`write: ${SERVERS} servers of one workdir (same instance)`, (run) =>
      writer.write(workdirs[run % WORKDIRS] as string, makeEntries(run + 1), names),
    );
    await sample(`write: ${SERVERS} servers, new instance (re-parse first)`, (run) =>
      open().write(workdirs[run % WORKDIRS] as string, makeEntries(run + 100), names),
    );
    const fsyncing = createToolCache({ file, fsync: true });
    await fsyncing.list(target);
    await sample(`write with fsync: ${SERVERS} servers (same instance)`, (run) =>
      fsyncing.write(workdirs[run % WORKDIRS] as string, makeEntries(run + 200), names),
    );

    return { size, fillMs, rows, problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { size, fillMs, rows, problems } = await measureCache();
  const entries = SERVERS * WORKDIRS;
  console.log(
    `@wave/mcp-cache bench: ${SERVERS} servers x ${TOOLS} tools x ${WORKDIRS} workdirs = ${entries} entries, ${(SERVERS * TOOLS * WORKDIRS).toLocaleString('en')} tools`,
  );
  console.log(`file size: ${(size / 1024 / 1024).toFixed(2)} MiB (${size.toLocaleString('en')} bytes)`);
  console.log(
    `initial fill: ${WORKDIRS} writes in ${fillMs.toFixed(0)} ms (${(fillMs / WORKDIRS).toFixed(1)} ms/write as the file grows)`,
  );
  console.log(
    `${'operation'.padEnd(58)}${'median ms'.padStart(10)}${'p95 ms'.padStart(10)}   (runs: ${RUNS})`,
  );
  for (const [label, samples] of rows) {
    const { median, p95 } = stats(samples);
    console.log(`${label.padEnd(58)}${fmt(median)} ${fmt(p95)}`);
  }
  if (problems.length > 0) console.log(`problems reported: ${problems.join(' | ')}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
