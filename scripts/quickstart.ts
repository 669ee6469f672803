/**
 * The quick start (`pnpm demo`): builds the `wave` binary and runs it on
 * examples/quickstart with a throw-away WAVE_HOME, so your real ~/.wave is
 * never touched. No model and no API key are needed. At the end it checks
 * that no process it started (found by the proc-reaper marker) is alive.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findProcessesByMarker, waitFor } from '@wave/testkit';

const root = resolve(import.meta.dirname, '..');
const cliDir = join(root, 'apps/cli');
const example = join(root, 'examples/quickstart');

function run(file: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; show?: string }) {
  if (opts.show) console.log(`\n$ ${opts.show}`);
  const r = spawnSync(file, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: 'inherit',
    timeout: 120_000,
  });
  return r.status ?? 1;
}

async function main(): Promise<number> {
  const tsup = createRequire(join(cliDir, 'package.json')).resolve('tsup/dist/cli-default.js');
  console.log('Building the wave binary (apps/cli/dist/bin.js)...');
  if (run(process.execPath, [tsup, '--silent'], { cwd: cliDir }) !== 0) return 1;
  const bin = join(cliDir, 'dist/bin.js');
  const home = await mkdtemp(join(tmpdir(), 'wave-quickstart-'));
  const namespace = `wave-quickstart-${process.pid}`;
  const env = { ...process.env, WAVE_HOME: home, WAVE_REAPER_NAMESPACE: namespace };
  const steps: [string[], number][] = [
    [['mcp', 'list'], 0],
    [['mcp', 'connect', 'hello', '--trust'], 0],
    [['mcp', 'call', 'everything', 'echo', '{"message":"hello from wave"}', '--trust'], 0],
    [['mcp', 'doctor'], 0],
    [['mcp', 'list'], 0],
  ];
  let failed = 0;
  try {
    for (const [args, expected] of steps) {
      const code = run(process.execPath, [bin, ...args], {
        cwd: example,
        env,
        show: `wave ${args.map((a) => (/[\s"{}]/.test(a) ? `'${a}'` : a)).join(' ')}`,
      });
      if (code !== expected) {
        console.error(`  -> exit code ${code}, expected ${expected}`);
        failed++;
      }
    }
    const left = await waitFor(() => findProcessesByMarker(namespace).length === 0, {
      timeoutMs: 10_000,
    }).then(
      () => 0,
      () => findProcessesByMarker(namespace).length,
    );
    console.log(`\nProcesses left behind: ${left}`);
    if (left > 0) failed++;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  console.log(failed === 0 ? 'Quick start: OK' : `Quick start: ${failed} step(s) failed`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
