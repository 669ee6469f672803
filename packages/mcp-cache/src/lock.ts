/**
 * A cross-process lock: an O_EXCL lock file (`<cache file>.lock`) holding the
 * owner's pid, host, a random token and its creation time.
 *
 * Pure part: {@link parseLockInfo}, {@link judgeLock}, {@link backoffDelay}.
 * I/O part: {@link acquireLock} over a {@link CacheFs}.
 *
 * A lock is stale when its owner (same host) is no longer alive, or when it
 * is older than `staleMs`. Breaking a stale lock takes a second, short-lived
 * O_EXCL file (`<lock>.break`) and re-checks the lock's identity before
 * unlinking it, so two waiters never both break and one never deletes the
 * fresh lock the other just created. The one remaining window (an owner that
 * held the lock longer than `staleMs` releasing at the very moment it is
 * broken) can at worst lose one update: the cache file itself is always
 * replaced by an atomic rename, so it is never torn.
 *
 * The lock record and the stale rule are those of @wave/mcp-config's config
 * file lock, which owns them; this package depends on no other @wave package
 * at run time, so it keeps this copy, and `test/lock.test.ts` asserts the two
 * parse and judge records the same way.
 */
import { randomUUID } from 'node:crypto';
import type { CacheFs } from './fs';
import type { ToolCacheDebugCode } from './types';

/** Content of a lock file. */
export interface LockInfo {
  pid: number;
  host: string;
  token: string;
  createdAt: number;
}

/** Parses lock file content; undefined when it is not a complete lock record (e.g. still being written). */
export function parseLockInfo(text: string): LockInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockInfo> | null;
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
    // fall through
  }
  return undefined;
}

/** Inputs of {@link judgeLock}. */
export interface LockObservation {
  /** Parsed content, or undefined if unreadable/incomplete. */
  info: LockInfo | undefined;
  /** The lock file's modification time (used when `info` is missing). */
  mtimeMs: number;
  now: number;
  staleMs: number;
  /** This machine's host name: pids are only checked for locks taken on this host. */
  host: string;
  isPidAlive(pid: number): boolean;
}

/**
 * How long a lock file without a complete owner record is taken to be in the
 * middle of being written (that takes microseconds); after this it was left
 * by a writer that failed (a full disk) and is broken.
 */
export const INCOMPLETE_LOCK_GRACE_MS = 2000;

/**
 * Decides whether an existing lock may be broken. Ages count in both
 * directions: a lock dated further than the limit in the future (a clock
 * stepped back, a skewed host on a shared home) is stale too.
 */
export function judgeLock(o: LockObservation): { stale: boolean; reason: string } {
  if (o.info === undefined) {
    const age = o.now - o.mtimeMs;
    const limit = Math.min(o.staleMs, INCOMPLETE_LOCK_GRACE_MS);
    return Math.abs(age) > limit
      ? {
          stale: true,
          reason: `it has no valid owner record and is ${age < 0 ? `dated ${Math.round(-age)} ms in the future` : `${Math.round(age)} ms old`}`,
        }
      : { stale: false, reason: 'it is being created by another process' };
  }
  if (o.info.host === o.host && !o.isPidAlive(o.info.pid)) {
    return { stale: true, reason: `its owner process ${o.info.pid} is no longer running` };
  }
  const age = o.now - o.info.createdAt;
  if (age < -o.staleMs) {
    return {
      stale: true,
      reason: `it is dated ${Math.round(-age)} ms in the future by process ${o.info.pid} on ${o.info.host} (a clock moved; limit ${o.staleMs} ms)`,
    };
  }
  if (age > o.staleMs) {
    return {
      stale: true,
      reason: `it was taken ${Math.round(age)} ms ago by process ${o.info.pid} on ${o.info.host} (limit ${o.staleMs} ms)`,
    };
  }
  return { stale: false, reason: `it is held by process ${o.info.pid} on ${o.info.host}` };
}

/** Wait before attempt `attempt + 1`: exponential from `minMs`, capped at `maxMs`, with jitter in [50%, 100%]. */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random: number): number {
  const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.max(1, Math.round(cap * (0.5 + random / 2)));
}

/** Whether a process exists (signal 0). EPERM means it exists but belongs to someone else. */
export function defaultIsPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Dependencies and settings of {@link acquireLock}. */
export interface LockOptions {
  fs: CacheFs;
  lockPath: string;
  timeoutMs: number;
  staleMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  pid: number;
  host: string;
  now(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
  isPidAlive(pid: number): boolean;
  report(code: ToolCacheDebugCode, message: string, error?: unknown): void;
}

/** A held lock. `release()` never throws. */
export interface LockHandle {
  release(): Promise<void>;
}

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;
const decode = (data: Uint8Array): string => Buffer.from(data).toString('utf8');

/** Most immediate retries (after a vanished or broken lock) before waiting anyway. */
const MAX_FAST_RETRIES = 8;

interface Observed {
  text: string;
  key: string;
  mtimeMs: number;
}

/** Reads the lock file with a consistent identity; `undefined` if gone, `'unreadable'` if it cannot be judged. */
async function observe(fs: CacheFs, path: string): Promise<Observed | undefined | 'unreadable'> {
  try {
    const st = await fs.stat(path);
    const { data, key } = await fs.readFile(path, 64 * 1024);
    if (key !== st.key) return undefined; // replaced in between: look again
    return { text: decode(data), key, mtimeMs: st.mtimeMs };
  } catch (error) {
    return errno(error) === 'ENOENT' ? undefined : 'unreadable';
  }
}

/** Removes `observed` if it is still the lock file, under the `.break` guard. Returns whether the lock is gone. */
async function breakStale(o: LockOptions, observed: Observed): Promise<boolean> {
  const breakPath = `${o.lockPath}.break`;
  try {
    await o.fs.writeFile(breakPath, JSON.stringify({ pid: o.pid, createdAt: o.now() }), {
      exclusive: true,
      mode: 0o600,
      fsync: false,
    });
  } catch (error) {
    if (errno(error) === 'EEXIST') {
      // Someone else is breaking it. A guard is held for microseconds; an old one was left by a crash.
      const guard = await o.fs.stat(breakPath).catch(() => undefined);
      if (guard && o.now() - guard.mtimeMs > o.staleMs) await o.fs.unlink(breakPath).catch(() => {});
    }
    return false;
  }
  try {
    const current = await observe(o.fs, o.lockPath);
    if (current === undefined) return true;
    if (current === 'unreadable' || current.key !== observed.key || current.text !== observed.text)
      return false;
    await o.fs.unlink(o.lockPath);
    return true;
  } catch {
    return false;
  } finally {
    await o.fs.unlink(breakPath).catch(() => {});
  }
}

/**
 * Takes the lock, waiting with backoff up to `timeoutMs` in total (the sum of
 * the waits, so it is bounded whatever the clock does). Resolves `undefined`
 * on timeout. Rejects only when the lock file cannot be created for a reason
 * other than contention (no permission, read-only disk, ...).
 */
export async function acquireLock(o: LockOptions): Promise<LockHandle | undefined> {
  const token = randomUUID();
  let content = '';
  let waited = 0;
  let attempt = 0;
  let fastRetries = 0;
  let lastReason = 'it is held by another process';
  for (;;) {
    content = JSON.stringify({ pid: o.pid, host: o.host, token, createdAt: o.now() } satisfies LockInfo);
    try {
      await o.fs.writeFile(o.lockPath, content, { exclusive: true, mode: 0o600, fsync: false });
      return { release: () => release(o, content) };
    } catch (error) {
      if (errno(error) !== 'EEXIST') throw error;
    }

    const observed = await observe(o.fs, o.lockPath);
    let retryNow = false;
    if (observed === undefined) {
      retryNow = true; // released in between
    } else if (observed === 'unreadable') {
      lastReason = 'it exists but cannot be read (is it a directory?)';
    } else {
      const verdict = judgeLock({
        info: parseLockInfo(observed.text),
        mtimeMs: observed.mtimeMs,
        now: o.now(),
        staleMs: o.staleMs,
        host: o.host,
        isPidAlive: o.isPidAlive,
      });
      lastReason = verdict.reason;
      if (verdict.stale && (await breakStale(o, observed))) {
        o.report('lock-broken', `Removed the stale lock ${o.lockPath}: ${verdict.reason}.`);
        retryNow = true;
      }
    }
    if (retryNow && fastRetries < MAX_FAST_RETRIES) {
      fastRetries++;
      continue;
    }
    fastRetries = 0;
    if (waited >= o.timeoutMs) {
      o.report(
        'lock-timeout',
        `Gave up waiting ${waited} ms for the lock ${o.lockPath} (${lastReason}); this cache write was skipped. ` +
          `If no wave process is running, delete ${o.lockPath}.`,
      );
      return undefined;
    }
    const delay = Math.min(
      backoffDelay(attempt++, o.retryMinMs, o.retryMaxMs, o.random()),
      o.timeoutMs - waited,
    );
    await o.sleep(Math.max(1, delay));
    waited += Math.max(1, delay);
  }
}

async function release(o: LockOptions, content: string): Promise<void> {
  try {
    const { data } = await o.fs.readFile(o.lockPath, 64 * 1024);
    if (decode(data) === content) {
      await o.fs.unlink(o.lockPath);
      return;
    }
  } catch (error) {
    if (errno(error) !== 'ENOENT') {
      o.report('lock-lost', `Could not release the lock ${o.lockPath}.`, error);
      return;
    }
  }
  o.report(
    'lock-lost',
    `The lock ${o.lockPath} was taken from this process (judged stale) before it finished.`,
  );
}
