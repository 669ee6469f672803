/**
 * Benchmark: killTree vs the npm `tree-kill` package on the same trees, plus
 * the cost of reading /proc. Prints figures; asserts nothing.
 *
 *   pnpm --filter @wave/proc-reaper bench          (BENCH_RUNS=N to change the run count)
 *
 * Trees (each: sh -> node tree.mjs -> grandchildren):
 * - well-behaved: every process exits on SIGTERM;
 * - hostile: one grandchild ignores SIGTERM, one is setsid'd, one double-forked.
 * Wall time = until the call resolves (tree-kill: until its callback, i.e.
 * signals sent). Survivors = processes of the tree still running 300 ms
 * after that, counted by reading /proc here, independently of both.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import treeKill from 'tree-kill';
import { createLinuxAdapter } from '../src/adapters/linux';
import { killTree } from '../src/api';
import { createReaper } from '../src/engine';
import { spawnTracked } from '../src/spawn';
import type { TrackedProcess } from '../src/types';

if (process.platform !== 'linux') {
  console.log('proc-reaper bench: Linux only (it starts real process trees); skipped.');
  process.exit(0);
}

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const treeFile = fileURLToPath(new URL('../test/fixtures/tree.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function running(pid: number): boolean {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function carriers(marker: string): number[] {
  const needle = `WAVE_REAPER_ID=${marker}\0`;
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(needle) && running(Number(name)))
        out.push(Number(name));
    } catch {}
  }
  return out;
}

async function startTree(shape: 'well' | 'hostile'): Promise<{ p: TrackedProcess; all: number[] }> {
  const p = spawnTracked('sh', ['-c', `"${process.execPath}" "${treeFile}"; exit $?`], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, TREE_SHAPE: shape },
  });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('tree did not start within 10 s')), 10_000);
    const rl = createInterface({ input: p.child.stdout! });
    rl.on('line', (l) => {
      if (!l.startsWith('PIDS ')) return;
      clearTimeout(timer);
      rl.close();
      resolve(l.slice(5));
    });
  });
  const pids = Object.values(JSON.parse(line) as Record<string, number>);
  await sleep(50); // let the shell children of the well-behaved tree start
  return { p, all: [p.pid, ...pids, ...carriers(p.marker)].filter((v, i, a) => a.indexOf(v) === i) };
}

/** SIGKILL, by pid, whatever a contender left behind, so that runs do not pile up. */
async function cleanup(p: TrackedProcess, all: number[]): Promise<void> {
  for (const pid of new Set([...all, ...carriers(p.marker)])) {
    try {
      if (running(pid)) process.kill(pid, 'SIGKILL');
    } catch {}
  }
  await sleep(20);
}

type Contender = (p: TrackedProcess) => Promise<unknown>;
const contenders: Record<string, Contender> = {
  'killTree (SIGTERM, grace 2000 ms)': (p) => killTree(p),
  'killTree (SIGTERM, grace 200 ms)': (p) => killTree(p, { graceMs: 200 }),
  'tree-kill SIGTERM': (p) => new Promise((r) => treeKill(p.pid, 'SIGTERM', r)),
  'tree-kill SIGKILL': (p) => new Promise((r) => treeKill(p.pid, 'SIGKILL', r)),
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] ?? 0)
    : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)] ?? 0;

async function compare(): Promise<void> {
  console.log(
    `\nkillTree vs tree-kill, ${RUNS} runs per cell (survivors = total over all runs / processes started)`,
  );
  console.log('| tree | contender | median ms | p95 ms | survivors |');
  console.log('|---|---|---:|---:|---:|');
  for (const shape of ['well', 'hostile'] as const) {
    for (const [name, kill] of Object.entries(contenders)) {
      const times: number[] = [];
      let survivors = 0;
      let started = 0;
      for (let i = 0; i < RUNS; i++) {
        const { p, all } = await startTree(shape);
        started += all.length;
        const t0 = performance.now();
        await kill(p);
        times.push(performance.now() - t0);
        await sleep(300);
        survivors += all.filter(running).length;
        await cleanup(p, all);
      }
      const label = shape === 'well' ? 'well-behaved' : 'hostile (ignorer+setsid+double fork)';
      console.log(
        `| ${label} | ${name} | ${median(times).toFixed(1)} | ${p95(times).toFixed(1)} | ${survivors}/${started} |`,
      );
    }
  }
}

async function procCost(): Promise<void> {
  const linux = createLinuxAdapter();
  const time = async (fn: () => unknown, n = 30) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await fn();
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  const reaper = createReaper();
  const report = async (label: string) => {
    const rows = await linux.listProcesses();
    const snapshot = await time(() => reaper.listDescendants(process.pid), 10);
    const previous = new Map(rows.map((r) => [r.pid, r]));
    const full = await time(() => linux.listProcesses());
    const incr = await time(() =>
      linux.listProcesses({ previous, reread: new Set(rows.slice(0, 5).map((r) => r.pid)) }),
    );
    const env = await time(() => {
      for (const r of rows) linux.readMarker?.(r.pid);
    });
    console.log(
      `| ${label} | ${rows.length} | ${full.toFixed(2)} | ${incr.toFixed(2)} | ${env.toFixed(2)} | ${snapshot.toFixed(2)} |`,
    );
  };
  console.log('\n/proc cost (median ms per call)');
  console.log(
    '| machine | processes | full listing | poll rescan (5 members) | environ of every process | snapshot (listDescendants) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  await report('as is');
  const extra = spawnTracked('sh', ['-c', 'for i in $(seq 400); do sleep 1000 & done; wait'], {
    stdio: 'ignore',
  });
  await sleep(1000);
  await report('+400 sleeps');
  const r = await extra.kill();
  console.log(
    `(killTree of the 400 sleeps: ${r.pids.length} pids in ${r.ms.toFixed(0)} ms, ${r.survivors.length} survivors)`,
  );
}

await compare();
await procCost();
