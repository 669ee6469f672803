import { readdirSync, readFileSync } from 'node:fs';
import { TestkitError } from './errors';

/**
 * Environment variable carrying the proc-reaper marker `<namespace>:<id>`.
 * A copy of proc-reaper's `MARKER_ENV` (testkit cannot depend on proc-reaper,
 * whose tests use testkit); proc-reaper's `test/exports.test.ts` asserts they agree.
 */
export const MARKER_ENV = 'WAVE_REAPER_ID';

/** Fields of `/proc/<pid>/stat` that the helpers need. */
export interface ProcStat {
  pid: number;
  /** One-letter state: R, S, D, Z (zombie), T, ... */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
}

/**
 * Parses the text of `/proc/<pid>/stat`. The command name sits in parentheses
 * and may itself contain spaces and parentheses, so fields are read after the
 * last `)`. Returns undefined for text that is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 1 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const [state, ppid, pgid, sid] = [rest[0], Number(rest[1]), Number(rest[2]), Number(rest[3])];
  if (
    !Number.isInteger(pid) ||
    state === undefined ||
    state === '' ||
    ![ppid, pgid, sid].every(Number.isInteger)
  ) {
    return undefined;
  }
  return { pid, state, ppid, pgid, sid };
}

/** Value of `name` in the NUL-separated text of `/proc/<pid>/environ`, if set. */
export function environValue(environ: string, name: string): string | undefined {
  const prefix = `${name}=`;
  for (const entry of environ.split('\0')) {
    if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  }
  return undefined;
}

/**
 * Whether a marker value matches `prefixOrValue`: equal to it, or starting with
 * it followed by `:` (so a namespace matches all of its markers, and namespace
 * `test` does not match `test-other:...`). A query ending in `:` is a plain prefix.
 */
export function markerMatches(value: string | undefined, prefixOrValue: string): boolean {
  if (value === undefined || prefixOrValue === '') return false;
  if (value === prefixOrValue) return true;
  const prefix = prefixOrValue.endsWith(':') ? prefixOrValue : `${prefixOrValue}:`;
  return value.startsWith(prefix);
}

/** Descendants of `root` in a pid -> ppid table, breadth first (root excluded). */
export function descendantsOf(root: number, parents: ReadonlyMap<number, number>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out: number[] = [];
  const seen = new Set<number>([root]);
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    for (const child of children.get(queue[i] as number) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** True on Linux with a readable `/proc` (the process scans work only there). */
export function supportsProcScan(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
}

function requireProc(what: string): void {
  if (!supportsProcScan()) {
    throw new TestkitError(
      'UNSUPPORTED_PLATFORM',
      `${what} reads /proc and works only on Linux (this is ${process.platform}); guard the test with supportsProcScan()`,
    );
  }
}

function listPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/** `/proc/<pid>/stat` of one process, or undefined if it is gone (Linux). */
export function readProcStat(pid: number): ProcStat | undefined {
  const text = readProc(pid, 'stat');
  return text === undefined ? undefined : parseProcStat(text);
}

/** The command line of `pid` joined by spaces (Linux), or undefined if unreadable. */
export function readCmdline(pid: number): string | undefined {
  const text = readProc(pid, 'cmdline');
  if (text === undefined) return undefined;
  return text.replace(/\0+$/, '').split('\0').join(' ');
}

const MARKER_KEY = Buffer.from(`${MARKER_ENV}=`);
const MARKER_NEEDLE = Buffer.from(`\0${MARKER_ENV}=`);

/** The `WAVE_REAPER_ID` marker of `pid` (Linux), or undefined. */
export function readMarker(pid: number): string | undefined {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
  // Cheap byte search first: most processes carry no marker.
  const first = environ.subarray(0, MARKER_KEY.length).equals(MARKER_KEY);
  if (!first && !environ.includes(MARKER_NEEDLE)) return undefined;
  return environValue(environ.toString('utf8'), MARKER_ENV);
}

/**
 * Pids of live (non-zombie) processes whose environment has
 * `WAVE_REAPER_ID` equal to `prefixOrValue` or starting with `prefixOrValue:`.
 * Linux only (scans `/proc/<pid>/environ`); throws `UNSUPPORTED_PLATFORM` elsewhere.
 * The calling process is never included.
 */
export function findProcessesByMarker(prefixOrValue: string): number[] {
  requireProc('findProcessesByMarker');
  const found: number[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    if (!markerMatches(readMarker(pid), prefixOrValue)) continue;
    if (readProcStat(pid)?.state === 'Z') continue;
    found.push(pid);
  }
  return found;
}

/**
 * Every live descendant of `pid` (children, grandchildren, ...) by parent pid,
 * from one `/proc` snapshot. An independent oracle for asserting what a reaper
 * must kill: processes re-parented away from the tree are not descendants.
 * Zombies are left out. Linux only.
 */
export function listDescendants(pid: number): number[] {
  requireProc('listDescendants');
  const parents = new Map<number, number>();
  const zombies = new Set<number>();
  for (const p of listPids()) {
    const stat = readProcStat(p);
    if (!stat) continue;
    parents.set(p, stat.ppid);
    if (stat.state === 'Z') zombies.add(p);
  }
  return descendantsOf(pid, parents).filter((p) => !zombies.has(p));
}

/**
 * Whether `pid` names a running process. A zombie (exited, not yet reaped:
 * common here because PID 1 in containers often does not reap orphans)
 * counts as dead. Works on every platform; the zombie check is Linux only.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform === 'linux') {
    const stat = readProcStat(pid);
    if (stat === undefined || stat.state === 'Z') return false;
  }
  return true;
}

/**
 * Sends `signal` (default SIGKILL) to each pid, ignoring pids that are gone.
 * Returns the pids that were signalled. Never throws for a dead pid.
 */
export function killPids(pids: Iterable<number>, signal: NodeJS.Signals = 'SIGKILL'): number[] {
  const signalled: number[] = [];
  for (const pid of pids) {
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      process.kill(pid, signal);
      signalled.push(pid);
    } catch {
      // ESRCH: already gone; EPERM: not ours. Neither is the caller's problem here.
    }
  }
  return signalled;
}
