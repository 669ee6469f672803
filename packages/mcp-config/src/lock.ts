/**
 * A cross-process lock around read-check-write of one config file: a lock
 * file `<file>.lock` holding the owner's pid, host, a random token and its
 * creation time.
 *
 * The lock file is never seen half-written: its content is written to a
 * private temp file first and then hard-linked into place (`link` fails with
 * `EEXIST` when the lock exists), so a full disk leaves no empty lock behind.
 *
 * A lock is stale when its owner (same host) is no longer alive, or when its
 * time is further than `staleMs` from now in either direction (a clock that
 * stepped back, or a skewed host on a shared home, must not make it eternal).
 * Breaking a stale lock takes a short-lived guard (`<file>.lock.break`,
 * created exclusively) and re-reads the lock before unlinking it, so two
 * waiters never both break it. Pure part: {@link judgeConfigLock}.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type ConfigFs, errnoCode } from './fs';

/** Content of a lock file. */
export interface ConfigLockInfo {
  pid: number;
  host: string;
  token: string;
  createdAt: number;
}

/** Parse lock file content; undefined when it is not a lock record. Pure. */
export function parseConfigLock(text: string): ConfigLockInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<ConfigLockInfo> | null;
    if (
      v !== null &&
      typeof v === 'object' &&
      Number.isInteger(v.pid) &&
      typeof v.host === 'string' &&
      typeof v.token === 'string' &&
      typeof v.createdAt === 'number' &&
      Number.isFinite(v.createdAt)
    ) {
      return { pid: v.pid as number, host: v.host, token: v.token, createdAt: v.createdAt };
    }
  } catch {
    // not a record
  }
  return undefined;
}

/**
 * The pid of a lock that holds only a pid (how earlier versions locked the
 * local state file); undefined for anything else. Pure.
 */
export function parseBarePidLock(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[1-9][0-9]{0,9}$/.test(trimmed)) return undefined;
  const pid = Number(trimmed);
  return Number.isSafeInteger(pid) ? pid : undefined;
}

/** What {@link judgeConfigLock} looks at. */
export interface ConfigLockObservation {
  info: ConfigLockInfo | undefined;
  /** When `info` is missing: the pid of a bare-pid lock (see {@link parseBarePidLock}), taken to be of this host. */
  barePid?: number | undefined;
  /** The lock file's modification time (used when `info` is missing). */
  mtimeMs: number;
  now: number;
  staleMs: number;
  host: string;
  isPidAlive(pid: number): boolean;
}

/** Whether an existing lock may be broken, and why. Pure. */
export function judgeConfigLock(o: ConfigLockObservation): { stale: boolean; reason: string } {
  const since = o.info ? o.info.createdAt : o.mtimeMs;
  const age = o.now - since;
  if (o.info && o.info.host === o.host && !o.isPidAlive(o.info.pid)) {
    return { stale: true, reason: `its owner process ${o.info.pid} is no longer running` };
  }
  if (!o.info && o.barePid !== undefined && !o.isPidAlive(o.barePid)) {
    return { stale: true, reason: `its owner process ${o.barePid} is no longer running` };
  }
  if (Math.abs(age) > o.staleMs) {
    return {
      stale: true,
      reason:
        age < 0
          ? `it is dated ${Math.round(-age)} ms in the future (a clock moved)`
          : `it was taken ${Math.round(age)} ms ago`,
    };
  }
  return {
    stale: false,
    reason: o.info
      ? `it is held by process ${o.info.pid} on ${o.info.host}`
      : 'it is held by another program',
  };
}

/** Whether a process exists (signal 0; EPERM means it exists but is someone else's). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
}

/** Settings of {@link acquireConfigLock}. */
export interface ConfigLockOptions {
  fs: ConfigFs;
  /** The lock file path (`<file>.lock`). */
  lockPath: string;
  /** Longest total wait (sum of the sleeps) before giving up. */
  timeoutMs: number;
  staleMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  pid?: number;
  host?: string;
  isPidAlive?: (pid: number) => boolean;
}

/** A held lock; `release()` never throws and removes the lock only while it is still ours. */
export interface ConfigLock {
  release(): Promise<void>;
}

/** Why the lock could not be taken in time (the caller turns it into `CONFIG_CONFLICT`). */
export class ConfigLockTimeout extends Error {
  override readonly name = 'ConfigLockTimeout';
  constructor(
    readonly lockPath: string,
    readonly reason: string,
  ) {
    super(`timed out waiting for ${lockPath} (${reason})`);
  }
}

/** `link` errors meaning "this file system has no hard links". */
const NO_LINK_CODES: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

const RETRY_MIN_MS = 2;
const RETRY_MAX_MS = 100;
/** Immediate retries (after a vanished or broken lock) before waiting anyway. */
const MAX_FAST_RETRIES = 8;

async function readLock(
  fs: ConfigFs,
  path: string,
): Promise<{ text: string; mtimeMs: number } | undefined | 'unreadable'> {
  try {
    const st = await fs.stat(path);
    return { text: await fs.readFile(path, { maxBytes: 4096 }), mtimeMs: st.mtimeMs };
  } catch (err) {
    return errnoCode(err) === 'ENOENT' ? undefined : 'unreadable';
  }
}

async function breakStale(o: ConfigLockOptions, seen: string, now: () => number): Promise<boolean> {
  const guard = `${o.lockPath}.break`;
  try {
    await o.fs.writeNewFile(guard, String(o.pid ?? process.pid), 0o600);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') {
      // Someone else is breaking it; a guard lives for microseconds, an old one was left by a crash.
      const st = await o.fs.stat(guard).catch(() => undefined);
      if (st && Math.abs(now() - st.mtimeMs) > o.staleMs) await o.fs.unlink(guard).catch(() => undefined);
    }
    return false;
  }
  try {
    const current = await readLock(o.fs, o.lockPath);
    if (current === undefined) return true;
    if (current === 'unreadable' || current.text !== seen) return false;
    await o.fs.unlink(o.lockPath);
    return true;
  } catch {
    return false;
  } finally {
    await o.fs.unlink(guard).catch(() => undefined);
  }
}

/**
 * Take the lock, waiting with jittered exponential backoff (2 to 100 ms) up
 * to `timeoutMs` in total. Rejects with {@link ConfigLockTimeout} on
 * timeout, and with the file-system error when the lock cannot be created
 * for another reason (no permission, disk full...).
 */
export async function acquireConfigLock(o: ConfigLockOptions): Promise<ConfigLock> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  const random = o.random ?? Math.random;
  const pid = o.pid ?? process.pid;
  const host = o.host ?? hostname();
  const alive = o.isPidAlive ?? isPidAlive;
  const token = randomBytes(12).toString('hex');
  const temp = `${o.lockPath}.${pid}.${token}.tmp`;
  let waited = 0;
  let attempt = 0;
  let fastRetries = 0;
  let reason = 'it is held by another process';
  for (;;) {
    const content = JSON.stringify({ pid, host, token, createdAt: now() } satisfies ConfigLockInfo);
    try {
      await o.fs.writeNewFile(temp, content, 0o600);
    } catch (err) {
      await o.fs.unlink(temp).catch(() => undefined);
      throw err;
    }
    try {
      try {
        await o.fs.link(temp, o.lockPath);
      } catch (err) {
        // A file system without hard links (FAT, some network mounts): create the lock exclusively instead.
        if (!NO_LINK_CODES.has(errnoCode(err) ?? '')) throw err;
        await o.fs.writeNewFile(o.lockPath, content, 0o600);
      }
      return {
        release: async () => {
          let ours = true;
          try {
            ours = parseConfigLock(await o.fs.readFile(o.lockPath, { maxBytes: 4096 }))?.token === token;
          } catch (err) {
            // Unreadable: it is still ours unless judged stale and replaced, which its age rules out.
            if (errnoCode(err) === 'ENOENT') ours = false;
          }
          if (ours) await o.fs.unlink(o.lockPath).catch(() => undefined);
        },
      };
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    } finally {
      await o.fs.unlink(temp).catch(() => undefined);
    }
    const seen = await readLock(o.fs, o.lockPath);
    let retryNow = seen === undefined; // released in between: try again at once
    if (seen === undefined) {
      // nothing to judge
    } else if (seen === 'unreadable') {
      reason = 'it exists but cannot be read';
    } else {
      const verdict = judgeConfigLock({
        info: parseConfigLock(seen.text),
        barePid: parseBarePidLock(seen.text),
        mtimeMs: seen.mtimeMs,
        now: now(),
        staleMs: o.staleMs,
        host,
        isPidAlive: alive,
      });
      reason = verdict.reason;
      if (verdict.stale && (await breakStale(o, seen.text, now))) retryNow = true;
    }
    if (retryNow && fastRetries++ < MAX_FAST_RETRIES) continue;
    fastRetries = 0;
    if (waited >= o.timeoutMs) throw new ConfigLockTimeout(o.lockPath, reason);
    const cap = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(attempt++, 10));
    const delay = Math.max(1, Math.min(Math.round(cap * (0.5 + random() / 2)), o.timeoutMs - waited));
    await sleep(delay);
    waited += delay;
  }
}
