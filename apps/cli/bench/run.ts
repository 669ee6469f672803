/**
 * `wave mcp list` with 32 configured servers: wall time of the whole command
 * (Node start-up included), and the processes it starts (goal: < 300 ms, 0).
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findProcessesByMarker } from '@wave/testkit';

const cliDir = resolve(import.meta.dirname, '..');
const out = join(cliDir, 'node_modules/.cache/wave-bench');

/** Builds the CLI into node_modules/.cache/wave-bench (tsup); returns the path of its bin.js. */
export function buildCli(): string {
  const tsup = createRequire(join(cliDir, 'package.json')).resolve('tsup/dist/cli-default.js');
  const built = spawnSync(process.execPath, [tsup, '--silent', '--out-dir', out, '--no-sourcemap'], {
    cwd: cliDir,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error(`building the CLI failed (tsup exit ${built.status})`);
  return join(out, 'bin.js');
}

/** Wall times (ms) of `wave mcp list --json` and of `node -e 0` at the same moments, and processes started. */
export interface McpListSamples {
  times: number[];
  bare: number[];
  /**
   * CPU time (user + system, ms) of each `wave mcp list --json` process and of each `node -e 0`,
   * start-up included: what the command costs without the waiting for a core that a loaded
   * machine adds to the wall times.
   */
  cpu: number[];
  bareCpu: number[];
  spawned: number;
}

/**
 * A module preloaded (`--import`) into a measured process: when it exits, it writes its CPU
 * time (user + system since the process started, in ms) to the file named by WAVE_BENCH_CPU_OUT.
 */
const CPU_PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); writeFileSync(process.env.WAVE_BENCH_CPU_OUT, String((u.user + u.system) / 1000)); });",
)}`;

/** Runs `wave mcp list --json` `runs` times with 32 configured servers (build the CLI with {@link buildCli} first). */
export async function measureMcpList(bin: string, opts: { runs?: number } = {}): Promise<McpListSamples> {
  const runs = opts.runs ?? 21;
  const root = await mkdtemp(join(tmpdir(), 'wave-bench-'));
  try {
    const home = join(root, 'home');
    const workdir = join(root, 'project');
    await mkdir(home);
    await mkdir(workdir);
    const servers: Record<string, unknown> = {};
    for (let i = 0; i < 32; i++) {
      servers[`server-${i}`] =
        i % 2 === 0
          ? { command: 'node', args: [`/nonexistent/server-${i}.js`], env: { API_KEY: '${API_KEY:-x}' } }
          : { url: `https://mcp-${i}.example/mcp`, headers: { Authorization: 'Bearer ${TOKEN:-t}' } };
    }
    await writeFile(join(home, 'mcp.json'), JSON.stringify({ mcpServers: servers }, null, 2));
    const namespace = `wave-bench-${process.pid}`;
    const env = { ...process.env, WAVE_HOME: home, WAVE_REAPER_NAMESPACE: namespace, NO_COLOR: '1' };

    const times: number[] = [];
    const cpu: number[] = [];
    let spawned = 0;
    // `node -e 0` interleaved with the runs: on a loaded machine the difference is what wave costs.
    const bare: number[] = [];
    const bareCpu: number[] = [];
    const cpuOut = join(root, 'cpu');
    const readCpu = async () => Number(await readFile(cpuOut, 'utf8'));
    for (let i = 0; i < runs; i++) {
      // Wall times without the preload; CPU times from a second, preloaded run of each.
      const b0 = performance.now();
      spawnSync(process.execPath, ['-e', '0'], { env });
      bare.push(performance.now() - b0);
      spawnSync(process.execPath, ['--import', CPU_PRELOAD, '-e', '0'], {
        env: { ...env, WAVE_BENCH_CPU_OUT: cpuOut },
      });
      bareCpu.push(await readCpu());
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [bin, 'mcp', 'list', '--json'], {
        cwd: workdir,
        env,
        encoding: 'utf8',
      });
      times.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(r.stderr);
      if (i === 0 && JSON.parse(r.stdout).servers.length !== 32) throw new Error('expected 32 servers');
      spawned += findProcessesByMarker(namespace).length;
      const c = spawnSync(process.execPath, ['--import', CPU_PRELOAD, bin, 'mcp', 'list', '--json'], {
        cwd: workdir,
        env: { ...env, WAVE_BENCH_CPU_OUT: cpuOut },
        encoding: 'utf8',
      });
      if (c.status !== 0) throw new Error(c.stderr);
      cpu.push(await readCpu());
      spawned += findProcessesByMarker(namespace).length;
    }
    return { times, bare, cpu, bareCpu, spawned };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  let bin: string;
  try {
    bin = buildCli();
  } catch {
    process.exit(1);
  }
  const { times, bare, cpu, bareCpu, spawned } = await measureMcpList(bin);
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
  console.log(`wave mcp list, 32 servers (whole command, Node start-up included), ${times.length} runs:`);
  console.log(
    `  median ${q(0.5).toFixed(0)} ms, p95 ${q(0.95).toFixed(0)} ms, min ${q(0).toFixed(0)} ms (goal < 300 ms)`,
  );
  bare.sort((a, b) => a - b);
  const bareMedian = bare[Math.floor(bare.length / 2)] ?? 0;
  console.log(
    `  node -e 0 (same moments): median ${bareMedian.toFixed(0)} ms; wave's own cost: ~${(q(0.5) - bareMedian).toFixed(0)} ms (median), ${(q(0) - (bare[0] ?? 0)).toFixed(0)} ms (min)`,
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  console.log(
    `  CPU time (user + system, start-up included): median ${median(cpu).toFixed(0)} ms; node -e 0: ${median(bareCpu).toFixed(0)} ms`,
  );
  console.log(`  processes started: ${spawned} (goal 0)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
