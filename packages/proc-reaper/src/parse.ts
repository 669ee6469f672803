/**
 * Pure parsers of what each platform reports about processes. No I/O here:
 * the adapters read, these functions interpret.
 */
import { MARKER_ENV } from './marker';
import type { ProcessInfo } from './types';

/**
 * Parse one `/proc/<pid>/stat` line. The command name (field 2) is in
 * parentheses and may itself contain spaces and `)`, so fields are counted
 * from the LAST `)`. Fields used: 3 state, 4 ppid, 5 pgrp, 6 session,
 * 22 starttime (clock ticks since boot). Returns `undefined` for text that
 * is not a stat line (e.g. read while the process was exiting).
 */
export function parseProcStat(text: string): ProcessInfo | undefined {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open));
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3, so field N is rest[N - 3].
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgid = Number(rest[2]);
  const sid = Number(rest[3]);
  const startTime = Number(rest[19]);
  if (
    !Number.isInteger(pid) ||
    pid <= 0 ||
    !state ||
    !Number.isInteger(ppid) ||
    !Number.isFinite(startTime)
  ) {
    return undefined;
  }
  return { pid, ppid, pgid, sid, state, startTime };
}

/**
 * Value of `WAVE_REAPER_ID` in the NUL-separated contents of
 * `/proc/<pid>/environ`, or `undefined`.
 */
export function parseEnvironMarker(environ: Buffer): string | undefined {
  const key = `${MARKER_ENV}=`;
  let at = environ.indexOf(key);
  while (at !== -1) {
    // Must start a variable, not be the tail of another one (FOO_WAVE_REAPER_ID=).
    if (at === 0 || environ[at - 1] === 0) {
      const start = at + key.length;
      const end = environ.indexOf(0, start);
      return environ.toString('utf8', start, end === -1 ? environ.length : end);
    }
    at = environ.indexOf(key, at + 1);
  }
  return undefined;
}

/** Arguments of the one `ps` run per listing on macOS (and other non-Linux POSIX). */
export const PS_ARGS: readonly string[] = ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Parse `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` (run with `LC_ALL=C` and
 * `TZ=UTC`). `lstart` looks like `Mon Nov 30 12:35:00 2025`; its wall-clock
 * fields are read as UTC, which (with `TZ=UTC`) gives epoch ms at second
 * resolution, the same in every process whatever its own time zone. Lines
 * that do not parse are skipped.
 */
export function parsePsOutput(text: string): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4) continue;
    const pid = Number(f[0]);
    const ppid = Number(f[1]);
    const pgid = Number(f[2]);
    const stat = f[3] ?? '';
    if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || stat === '') continue;
    const info: ProcessInfo = { pid, ppid, pgid, state: stat[0] };
    const startTime = parseLstart(f.slice(4));
    if (startTime !== undefined) info.startTime = startTime;
    out.push(info);
  }
  return out;
}

function parseLstart(f: string[]): number | undefined {
  // [weekday, month, day, hh:mm:ss, year]
  if (f.length !== 5) return undefined;
  const month = MONTHS.indexOf(f[1] ?? '');
  const day = Number(f[2]);
  const hms = (f[3] ?? '').split(':').map(Number);
  const year = Number(f[4]);
  if (month < 0 || hms.length !== 3 || hms.some((n) => !Number.isInteger(n)) || !Number.isInteger(day)) {
    return undefined;
  }
  return Date.UTC(year, month, day, hms[0], hms[1], hms[2]);
}

/**
 * PowerShell script run once per listing on Windows: one line
 * `<pid> <ppid> <creation FILETIME>` per process (`0` when the creation date
 * is unknown, e.g. the System process). FILETIME is locale-free, unlike the
 * CSV rendering of a DateTime.
 */
export const CIM_SCRIPT =
  'Get-CimInstance -ClassName Win32_Process | ForEach-Object { ' +
  "'{0} {1} {2}' -f $_.ProcessId, $_.ParentProcessId, " +
  '$(if ($_.CreationDate) { $_.CreationDate.ToFileTimeUtc() } else { 0 }) }';

/** Milliseconds between 1601-01-01 (FILETIME epoch) and 1970-01-01. */
const FILETIME_EPOCH_MS = 11_644_473_600_000n;

/** Parse the output of {@link CIM_SCRIPT}. Start times become epoch ms. */
export function parseCimOutput(text: string): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const line of text.split(/\r?\n/)) {
    const f = line.trim().split(/\s+/);
    if (f.length !== 3) continue;
    const pid = Number(f[0]);
    const ppid = Number(f[1]);
    if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !/^\d+$/.test(f[2] ?? '')) continue;
    const info: ProcessInfo = { pid, ppid };
    // FILETIME (100 ns units) exceeds 2^53, so divide as a bigint first.
    const ft = BigInt(f[2] ?? '0');
    if (ft > 0n) info.startTime = Number(ft / 10_000n - FILETIME_EPOCH_MS);
    out.push(info);
  }
  return out;
}
