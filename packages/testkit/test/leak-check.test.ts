import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { collectLeaks, type LeakedProcess, type LeakScanner } from '../src/leak-check';
import { markerEnv } from '../src/markers';
import { isPidAlive, killPids } from '../src/procfs';
import { makeTempDir, type TempDir } from '../src/temp';
import { waitFor } from '../src/wait';
import { useCleanup } from './support';

const cleanup = useCleanup();

describe('WAVE_REAPER_NAMESPACE', () => {
  it('is set by the global setup and inherited by the test worker', () => {
    expect(process.env.WAVE_REAPER_NAMESPACE).toMatch(/^test-testkit-[0-9a-f]{8}$/);
  });
});

describe('collectLeaks (fake scanner)', () => {
  const leak = (pid: number): LeakedProcess => ({ pid, marker: `ns:${pid}`, cmdline: `cmd ${pid}` });

  function fakeScanner(scans: LeakedProcess[][], alive: (pid: number, call: number) => boolean) {
    const killed: number[][] = [];
    let sleeps = 0;
    let scansDone = 0;
    let aliveCalls = 0;
    const scanner: LeakScanner = {
      scan: () => scans[Math.min(scansDone++, scans.length - 1)] ?? [],
      isAlive: (pid) => alive(pid, aliveCalls++),
      kill: (pids) => void killed.push(pids),
      sleep: async () => {
        sleeps += 1;
      },
    };
    return { scanner, killed, sleeps: () => sleeps, scans: () => scansDone };
  }

  it.each([
    // name, scans, isAlive(pid, call), expected leaked pids, sleeps, full scans
    ['nothing marked: one scan, no wait', [[]], () => true, [], 0, 1],
    ['exits within the grace', [[leak(1)], []], (_p: number, call: number) => call < 2, [], 3, 2],
    ['survivor is killed and reported', [[leak(1), leak(2)], [leak(2)]], (p: number) => p === 2, [2], 20, 2],
    ['a child spawned during the grace is caught', [[leak(1)], [leak(3)]], () => false, [3], 1, 2],
  ])('%s', async (_name, scans, alive, expectedPids, expectedSleeps, expectedScans) => {
    const fake = fakeScanner(scans, alive);
    const leaks = await collectLeaks('ns', fake.scanner, { graceMs: 1000, pollMs: 50 });
    expect(leaks.map((l) => l.pid)).toEqual(expectedPids);
    expect(fake.killed).toEqual(expectedPids.length ? [expectedPids] : []);
    expect(fake.sleeps()).toBe(expectedSleeps);
    expect(fake.scans()).toBe(expectedScans);
  });
});

describe.runIf(process.platform === 'linux')('leak check in a real vitest run', () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const project = join(here, 'leak-project');
  const vitestBin = join(
    dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
    'vitest.mjs',
  );
  const dirs: TempDir[] = [];
  afterEach(async () => {
    // The inner sleeper carries the inner run's namespace, not ours: kill it by pid.
    for (const dir of dirs) {
      const pid = Number(readFileSync(join(dir.path, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      if (pid > 0) killPids([pid]);
    }
    await Promise.all(dirs.splice(0).map((d) => d.cleanup()));
  });
  // A whole vitest run inside a test: slow on a loaded machine.
  const INNER_TIMEOUT = 180_000;

  async function runInner(mode: 'leak' | 'clean') {
    const dir = await makeTempDir('wave-testkit-leak-');
    dirs.push(dir);
    const pidFile = join(dir.path, 'pid');
    const env: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST')) env[k] = v;
    const child = spawn(process.execPath, [vitestBin, 'run', '--root', project], {
      cwd: project,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, LEAK_MODE: mode, LEAK_PID_FILE: pidFile, NO_COLOR: '1', ...markerEnv(cleanup.marker()) },
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const sleeper = Number(readFileSync(pidFile, 'utf8'));
    return { code, output, sleeper };
  }

  it(
    'a leaked marked process fails the run, is listed with pid and command line, and is killed',
    async () => {
      const { code, output, sleeper } = await runInner('leak');
      expect(code).toBe(1);
      expect(output).toMatch(
        /1 process of test namespace test-leak-project-[0-9a-f]{8} outlived the test run/,
      );
      expect(output).toContain(`pid ${sleeper} [test-leak-project-`);
      expect(output).toContain('leaky-sleeper');
      await waitFor(() => !isPidAlive(sleeper), { message: 'leaked sleeper to be killed by the leak check' });
    },
    INNER_TIMEOUT,
  );

  it(
    'a run that kills what it started passes',
    async () => {
      const { code, output, sleeper } = await runInner('clean');
      expect(output).not.toContain('outlived');
      expect(code).toBe(0);
      expect(isPidAlive(sleeper)).toBe(false);
    },
    INNER_TIMEOUT,
  );
});
