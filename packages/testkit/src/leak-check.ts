/**
 * Vitest globalSetup that fails a test run which leaves a marked process behind.
 *
 * Setup: sets `WAVE_REAPER_NAMESPACE=test-<package dir>-<random>`, so every
 * process spawned through proc-reaper (or marked with `makeMarker()`) during
 * the run carries `WAVE_REAPER_ID=<that namespace>:<id>`. Test workers are
 * forked after setup and inherit it.
 *
 * Teardown (Linux only; elsewhere it does nothing): scans `/proc` for live
 * processes of that namespace, gives them a short grace to finish exiting,
 * SIGKILLs the rest and fails the run listing pid and command line of each.
 * Vitest 4 only logs errors thrown by a global teardown, so this also sets
 * `process.exitCode = 1`.
 *
 * Wired in `vitest.shared.ts` by path; it imports only node builtins and
 * testkit's own files, so any package can use it.
 */
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { TestkitError } from './errors';
import {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  readCmdline,
  readMarker,
  readProcStat,
  supportsProcScan,
} from './procfs';

/** A marked process that outlived the test run. */
export interface LeakedProcess {
  pid: number;
  marker: string;
  cmdline: string;
}

/** The I/O the leak check needs; injectable so the loop is testable without processes. */
export interface LeakScanner {
  /** Live processes whose marker belongs to `namespace` (a full, costly scan). */
  scan(namespace: string): LeakedProcess[];
  /** Whether one pid is still running (cheap). */
  isAlive(pid: number): boolean;
  /** SIGKILLs the pids. */
  kill(pids: number[]): void;
  sleep(ms: number): Promise<void>;
}

/** `test-<dir basename>-<random>`, with characters other than `[A-Za-z0-9_.-]` replaced by `_`. */
export function leakNamespace(dir: string, random: string): string {
  const name = basename(dir).replace(/[^A-Za-z0-9_.-]/g, '_') || 'root';
  return `test-${name}-${random}`;
}

/** The message that fails the run: one line per leaked process with pid and command line. */
export function formatLeakReport(namespace: string, leaks: readonly LeakedProcess[]): string {
  const lines = leaks.map((l) => `  pid ${l.pid} [${l.marker}]: ${truncate(l.cmdline, 300)}`);
  return [
    `${leaks.length} process${leaks.length === 1 ? '' : 'es'} of test namespace ${namespace} outlived the test run (now SIGKILLed):`,
    ...lines,
    'Every test must kill what it starts (e.g. killMarked(marker) in afterEach).',
  ].join('\n');
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/**
 * Scans once; if marked processes are running, waits up to `graceMs` for
 * them to exit (polling only those pids), then scans again (catching any they
 * spawned meanwhile), SIGKILLs whatever is left and returns it (empty: no
 * leak). The list is taken before the kill, so command lines are readable.
 */
export async function collectLeaks(
  namespace: string,
  scanner: LeakScanner,
  options: { graceMs?: number; pollMs?: number } = {},
): Promise<LeakedProcess[]> {
  const { graceMs = 1000, pollMs = 50 } = options;
  const first = scanner.scan(namespace);
  if (first.length === 0) return [];
  let waiting = first.map((l) => l.pid);
  for (let waited = 0; waiting.length > 0 && waited < graceMs; waited += pollMs) {
    await scanner.sleep(pollMs);
    waiting = waiting.filter((pid) => scanner.isAlive(pid));
  }
  const left = scanner.scan(namespace);
  if (left.length > 0) scanner.kill(left.map((l) => l.pid));
  return left;
}

function ancestors(): Set<number> {
  const out = new Set<number>([process.pid]);
  for (let pid = process.ppid; pid > 1 && !out.has(pid); ) {
    out.add(pid);
    const stat = readProcStat(pid);
    if (!stat) break;
    pid = stat.ppid;
  }
  return out;
}

/** The real scanner over `/proc`. */
export const procLeakScanner: LeakScanner = {
  scan(namespace) {
    const skip = ancestors();
    return findProcessesByMarker(namespace)
      .filter((pid) => !skip.has(pid) && isPidAlive(pid))
      .map((pid) => ({ pid, marker: readMarker(pid) ?? '?', cmdline: readCmdline(pid) ?? '?' }));
  },
  isAlive: isPidAlive,
  kill(pids) {
    killPids(pids, 'SIGKILL');
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Vitest globalSetup entry: returns the teardown. */
export default function setup(project?: { config?: { root?: string } }): () => Promise<void> {
  const root = project?.config?.root ?? process.cwd();
  const namespace = leakNamespace(root, randomBytes(4).toString('hex'));
  const previous = process.env.WAVE_REAPER_NAMESPACE;
  process.env.WAVE_REAPER_NAMESPACE = namespace;

  return async function teardown() {
    if (previous === undefined) delete process.env.WAVE_REAPER_NAMESPACE;
    else process.env.WAVE_REAPER_NAMESPACE = previous;
    if (!supportsProcScan()) return;
    const leaks = await collectLeaks(namespace, procLeakScanner);
    if (leaks.length === 0) return;
    process.exitCode = 1;
    throw new TestkitError('PROCESS_LEAK', formatLeakReport(namespace, leaks));
  };
}
