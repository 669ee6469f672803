import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createReaper } from './engine';
import { ProcReaperError } from './errors';
import { isGone, type ProcessTable, toTable } from './tree';
import type { KillOptions, KillResult, Ledger, LedgerOptions, TrackedProcess } from './types';

/** One recorded tree. */
export interface LedgerEntry {
  pid: number;
  pgid?: number;
  /** Start time of the root (platform unit, see `ProcessInfo.startTime`); absent if it could not be read. */
  startTime?: number;
  marker: string;
  /** Epoch ms, for people reading the file. */
  recordedAt: number;
}

/** Contents of one ledger file: the host that wrote it and its live trees. */
export interface LedgerFile {
  version: 1;
  host: { pid: number; startTime?: number; platform: string };
  entries: LedgerEntry[];
}

/** `host-<pid>-<instance>.json`, optionally `.claim-<pid>-<instance>` while a sweeper works on it. */
const FILE_RE = /^host-(\d+)-([0-9a-f]+)\.json(?:\.claim-(\d+)-([0-9a-f]+))?$/;
const TMP_RE = /^host-(\d+)-([0-9a-f]+)\.json\.tmp$/;

/**
 * Parse a ledger file; `undefined` when it is not one (corrupt, foreign).
 * Pure.
 */
export function parseLedgerFile(text: string): LedgerFile | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Partial<LedgerFile>;
  const h = d.host;
  if (d.version !== 1 || typeof h !== 'object' || h === null || !Array.isArray(d.entries)) return undefined;
  if (!Number.isInteger(h.pid) || h.pid <= 0) return undefined;
  // Only fields of the right type are kept: a mangled start time would make a
  // live host look dead (and its trees be reaped); without one, the host
  // counts as alive while its pid runs.
  const host: LedgerFile['host'] = {
    pid: h.pid,
    platform: typeof h.platform === 'string' ? h.platform : 'unknown',
  };
  if (typeof h.startTime === 'number' && Number.isFinite(h.startTime)) host.startTime = h.startTime;
  const entries = d.entries.filter(
    (e): e is LedgerEntry =>
      typeof e === 'object' &&
      e !== null &&
      Number.isInteger(e.pid) &&
      e.pid > 0 &&
      typeof e.marker === 'string' &&
      e.marker !== '' &&
      (e.startTime === undefined || typeof e.startTime === 'number'),
  );
  return { version: 1, host, entries };
}

/**
 * Is the host that wrote a ledger file still running? Its pid must be
 * present, not a zombie, and (when recorded) have the same start time: a
 * live process that merely reuses the pid is not the host. When in doubt
 * (no start time recorded), the host counts as alive: never reap the trees
 * of a host that may still be using them. Pure.
 */
export function isHostAlive(host: LedgerFile['host'], table: ProcessTable): boolean {
  const row = table.get(host.pid);
  if (row === undefined || isGone(row)) return false;
  if (host.startTime === undefined || row.startTime === undefined) return true;
  return row.startTime === host.startTime;
}

/**
 * Replace `file` by `text` atomically: `<file>.tmp` in the same folder (the
 * sweep recognises and removes a dead host's temp file by that name), mode
 * 0600 (a ledger lists commands and arguments), then a rename over `file`.
 * A reader sees the old file or the new one; on failure the temp file is
 * removed and the error rethrown.
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/**
 * A ledger of tracked trees, kept in `dir` so that the next host can reap
 * what a crashed one left behind.
 *
 * Concurrency: each ledger instance writes only its own file,
 * `host-<pid>-<random>.json` (temp file + rename, so a reader never sees half
 * a file), so hosts never contend for a lock. `sweep()` claims a dead host's
 * file by renaming it to `...claim-<pid>-<random>`: rename is atomic, so
 * when two hosts sweep at once exactly one of them reaps each file. A claim
 * left by a sweeper that itself died is taken over by the next sweep.
 */
export function createLedger(opts: LedgerOptions): Ledger {
  const dir = opts.dir;
  const reaper = opts.reaper ?? createReaper();
  const warn = opts.onWarning ?? (() => {});
  const instance = randomBytes(6).toString('hex');
  const hostPid = process.pid;
  const name = `host-${hostPid}-${instance}.json`;
  const file = join(dir, name);
  const entries = new Map<string, LedgerEntry>();
  let hostStart: Promise<number | undefined> | undefined;
  // Writes run one after another, in call order; a failed write does not stop the next.
  let queue: Promise<void> = Promise.resolve();

  const persist = async (): Promise<void> => {
    try {
      if (entries.size === 0) {
        await unlink(file).catch((err: NodeJS.ErrnoException) => {
          // Nothing there (or no folder at all): nothing to remove.
          if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
        });
        return;
      }
      hostStart ??= reaper.startTimeOf(hostPid);
      const host: LedgerFile['host'] = { pid: hostPid, platform: process.platform };
      const start = await hostStart;
      if (start !== undefined) host.startTime = start;
      const content: LedgerFile = { version: 1, host, entries: [...entries.values()] };
      await mkdir(dir, { recursive: true });
      await replaceFile(file, `${JSON.stringify(content, null, 2)}\n`);
    } catch (err) {
      throw new ProcReaperError(
        'LEDGER_IO',
        `proc-reaper: could not write the ledger file ${file}: ${(err as Error).message}. Check that the folder exists and is writable.`,
        { cause: err },
      );
    }
  };
  const enqueue = (): Promise<void> => {
    const next = queue.then(persist);
    queue = next.catch(() => {});
    return next;
  };

  return {
    file,
    async record(p: TrackedProcess): Promise<void> {
      const startTime = p.startTime ?? (await reaper.startTimeOf(p.pid));
      const entry: LedgerEntry = { pid: p.pid, marker: p.marker, recordedAt: Date.now() };
      if (p.pgid !== undefined) entry.pgid = p.pgid;
      if (startTime !== undefined) entry.startTime = startTime;
      entries.set(p.marker, entry);
      await enqueue();
    },
    async release(p: TrackedProcess): Promise<void> {
      if (!entries.delete(p.marker)) return;
      await enqueue();
    },
    async sweep(killOpts?: KillOptions): Promise<KillResult[]> {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return []; // no ledger folder yet: nothing to sweep
      }
      const table = toTable(await reaper.adapter.listProcesses());
      const alive = (pid: number) => !isGone(table.get(pid));
      const results: KillResult[] = [];
      for (const entryName of names) {
        const tmp = TMP_RE.exec(entryName);
        if (tmp) {
          // A half-written temp file of a dead host: never renamed, useless.
          if (!alive(Number(tmp[1]))) await unlink(join(dir, entryName)).catch(() => {});
          continue;
        }
        const m = FILE_RE.exec(entryName);
        if (!m || entryName === name) continue;
        // Claimed by a sweeper that is still running: its business.
        if (m[3] !== undefined && alive(Number(m[3]))) continue;
        const path = join(dir, entryName);
        const text = await readFile(path, 'utf8').catch(() => undefined);
        if (text === undefined) continue; // claimed or removed meanwhile
        const parsed = parseLedgerFile(text);
        if (parsed === undefined) {
          warn(
            `proc-reaper: ignoring unreadable ledger file ${path}; delete it if no process of its host is left.`,
          );
          continue;
        }
        if (m[3] === undefined && isHostAlive(parsed.host, table)) continue;
        const claimed = join(dir, `host-${m[1]}-${m[2]}.json.claim-${hostPid}-${instance}`);
        try {
          await rename(path, claimed);
        } catch {
          continue; // another sweeper won the race
        }
        try {
          for (const e of parsed.entries) {
            // trustPid: false: the root pid is signalled only if its start time
            // matches, so a pid recycled since the host died is left alone.
            const target = { pid: e.pid, marker: e.marker, trustPid: false, startTime: e.startTime };
            if (e.startTime === undefined) delete target.startTime;
            // One entry that cannot be reaped never stops the others (nor leaves the file claimed).
            try {
              results.push(await reaper.killTree(target, killOpts));
            } catch (err) {
              warn(
                `proc-reaper: could not reap pid ${e.pid} recorded in ${path}: ${(err as Error).message ?? String(err)}`,
              );
            }
          }
        } finally {
          await unlink(claimed).catch((err: Error) => {
            warn(`proc-reaper: could not remove swept ledger file ${claimed}: ${err.message}`);
          });
        }
      }
      return results;
    },
  };
}
