import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  CACHE_FILE_NAME,
  type CacheRecord,
  checkRecord,
  DEFAULT_TTL_MS,
  indexRecords,
  isExpired,
  mergeEntries,
  normalizeInput,
  parseCacheFile,
  type RecordIndex,
  recordOf,
  serializeRecords,
} from './core';
import { McpCacheError } from './errors';
import { type CacheFs, nodeCacheFs } from './fs';
import { resolveWaveHome } from './home';
import { acquireLock, defaultIsPidAlive } from './lock';
import { replaceFileAtomic } from './replace';
import type {
  Clock,
  ToolCacheDebugCode,
  ToolCacheDebugEvent,
  ToolSnapshot,
  ToolSnapshotInput,
} from './types';

type NormalizedInput = ToolSnapshotInput;

/** Options of {@link createToolCache}. */
export interface ToolCacheOptions {
  /**
   * The wave home directory; the cache file is `<home>/mcp-tools-cache.json`.
   * @default `$WAVE_HOME`, else `~/.wave`
   */
  home?: string;
  /** The cache file path itself (overrides `home`). */
  file?: string;
  /**
   * Environment used to resolve `$WAVE_HOME`.
   * @default process.env
   */
  env?: Record<string, string | undefined>;
  /**
   * Entries whose `lastConnectedAt` is older than this are hidden from reads
   * and dropped on the next write (in every workdir). `Infinity` keeps all.
   * @default 604800000 (7 days)
   */
  ttlMs?: number;
  /**
   * Wall-clock time (TTL, lock ages) and the timer for lock waits.
   * @default Date.now and the global setTimeout
   */
  clock?: Clock;
  /**
   * Longest total wait for the lock before a write is skipped (reported as
   * `lock-timeout`). Reads never wait.
   * @default 5000
   */
  lockTimeoutMs?: number;
  /**
   * A lock older than this is considered abandoned and broken, even if its
   * owner's pid is alive (pid reuse, another host on a shared home).
   * @default 15000
   */
  lockStaleMs?: number;
  /**
   * A cache file larger than this is not read (it reads as empty, reported
   * as `corrupt`, and the next write replaces it). Counted while reading.
   * @default 67108864 (64 MiB)
   */
  maxFileBytes?: number;
  /**
   * fsync the new file before renaming it into place (durability across
   * power loss, at some cost per write).
   * @default false
   */
  fsync?: boolean;
  /**
   * Receives every problem the cache meets (unreadable or corrupt file, lock
   * timeout, failed write...). Nothing is thrown or logged otherwise.
   * Exceptions thrown by the hook are ignored.
   */
  onDebug?: (event: ToolCacheDebugEvent) => void;
  /** File-system adapter (tests, unusual hosts). @default node:fs */
  fs?: CacheFs;
  /** Liveness check for lock owners on this host. @default `process.kill(pid, 0)` */
  isPidAlive?: (pid: number) => boolean;
  /** Random source for backoff jitter, in [0, 1). @default Math.random */
  random?: () => number;
}

/**
 * The per-machine tool snapshot cache. For panels only: what a server offered
 * the last time it was connected. Never a source of tool declarations or
 * callable tools for a model.
 */
export interface ToolCache {
  /** The cache file this instance reads and writes. */
  readonly file: string;
  /**
   * The snapshot of `server` in `workdir`, only if it was taken with the same
   * configuration `fingerprint` (and is within the TTL); otherwise undefined.
   * Never rejects for file problems (they read as "no cache").
   */
  get(workdir: string, server: string, fingerprint: string): Promise<ToolSnapshot | undefined>;
  /**
   * Every snapshot of `workdir` within the TTL, sorted by server name,
   * whatever its fingerprint: the caller matches them against the current
   * configuration (names no longer configured and changed fingerprints must
   * not be shown). Never rejects for file problems.
   */
  list(workdir: string): Promise<ToolSnapshot[]>;
  /**
   * Replaces `workdir`'s snapshots of the given servers (an empty tool list
   * replaces too), deletes `workdir`'s snapshots of servers not in
   * `configuredNames` (the servers written count as configured), drops
   * entries past the TTL, and leaves every other workdir alone. Safe with
   * several processes writing at once (lock, re-read, merge, atomic rename).
   * Resolves once written or skipped; file problems are reported to
   * `onDebug`, never rejected. Rejects only with a {@link McpCacheError}
   * (`INVALID_INPUT`) for malformed arguments.
   */
  write(workdir: string, entries: ToolSnapshotInput[], configuredNames: string[]): Promise<void>;
}

/**
 * Read errors that say nothing about the file (resource exhaustion, I/O):
 * a write then is skipped rather than replacing the file with only its own
 * entries. Other read errors (EACCES, ELOOP, ...) mean the file is unusable,
 * and the next write replaces it.
 */
const TRANSIENT_READ_ERRORS = new Set([
  'EMFILE',
  'ENFILE',
  'EIO',
  'EAGAIN',
  'EBUSY',
  'ENOMEM',
  'EINTR',
  'ETIMEDOUT',
]);

/** Default of {@link ToolCacheOptions.maxFileBytes}. */
const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

const LOCK_RETRY_MIN_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

function checkOption(
  name: string,
  value: number | undefined,
  fallback: number,
  allowInfinity: boolean,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < 0 ||
    (!allowInfinity && !Number.isFinite(value))
  ) {
    throw new McpCacheError(
      'INVALID_OPTION',
      `createToolCache: option ${name} must be a number >= 0${allowInfinity ? ' (or Infinity)' : ''}, got ${String(value)}.`,
    );
  }
  return value;
}

function checkWorkdir(method: string, workdir: unknown): string {
  if (typeof workdir !== 'string' || workdir.length === 0) {
    throw new McpCacheError(
      'INVALID_INPUT',
      `ToolCache.${method}: workdir must be a non-empty string, got ${typeof workdir === 'string' ? 'an empty string' : typeof workdir}.`,
    );
  }
  return resolve(workdir);
}

function checkString(method: string, name: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new McpCacheError(
      'INVALID_INPUT',
      `ToolCache.${method}: ${name} must be a string, got ${typeof value}.`,
    );
  }
  return value;
}

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;

/**
 * Creates a cache over `<home>/mcp-tools-cache.json`. Does no I/O until the
 * first call; holds no timers or handles between calls (nothing to close).
 *
 * @example
 * const cache = createToolCache({ home: '/tmp/wave-home' });
 * await cache.write('/work/app', [{ server: 'fs', fingerprint: fp, tools, lastConnectedAt: Date.now() }], ['fs']);
 * const snap = await cache.get('/work/app', 'fs', fp); // undefined once the config (fingerprint) changes
 */
export function createToolCache(opts: ToolCacheOptions = {}): ToolCache {
  const file = resolve(
    opts.file ?? join(resolveWaveHome(opts.home, opts.env ?? process.env), CACHE_FILE_NAME),
  );
  const ttlMs = checkOption('ttlMs', opts.ttlMs, DEFAULT_TTL_MS, true);
  const lockTimeoutMs = checkOption('lockTimeoutMs', opts.lockTimeoutMs, 5000, false);
  const lockStaleMs = checkOption('lockStaleMs', opts.lockStaleMs, 15_000, false);
  const maxFileBytes = checkOption('maxFileBytes', opts.maxFileBytes, DEFAULT_MAX_FILE_BYTES, false);
  const fs = opts.fs ?? nodeCacheFs();
  const clock = opts.clock;
  const now = (): number => (clock ? clock.now() : Date.now());
  const sleep = (ms: number): Promise<void> =>
    new Promise((done) => {
      if (clock?.setTimeout) clock.setTimeout(done, ms);
      else setTimeout(done, ms);
    });
  const host = hostname();
  const dir = dirname(file);

  const report = (code: ToolCacheDebugCode, message: string, error?: unknown): void => {
    if (!opts.onDebug) return;
    try {
      opts.onDebug(error === undefined ? { code, message, file } : { code, message, file, error });
    } catch {
      // a failing logger must not break the cache
    }
  };

  /** The last read problem reported: the same problem is reported once, not on every read. */
  let lastProblem: string | undefined;
  const reportRead = (
    problemKey: string,
    code: ToolCacheDebugCode,
    message: string,
    error?: unknown,
  ): void => {
    if (problemKey === lastProblem) return;
    lastProblem = problemKey;
    report(code, message, error);
  };

  interface Loaded {
    records: readonly CacheRecord[];
    index: RecordIndex;
    /** Set when the file could not be read for a reason that may pass (too many open files, I/O error). */
    transient?: string;
  }
  /** The last file version read or written: re-read only when the file's identity (inode, size, mtime) changes. */
  let memo: (Loaded & { key: string }) | undefined;
  /** Writes of this instance run one after another (the file lock orders them against other instances). */
  let queue: Promise<void> = Promise.resolve();

  const EMPTY: Loaded = { records: [], index: new Map() };

  const reportDropped = (problems: string[]): void => {
    if (problems.length === 0) return;
    const shown = problems.slice(0, 3).join('; ') + (problems.length > 3 ? '; ...' : '');
    report(
      'entry-dropped',
      `The tool cache ${file} has ${problems.length} malformed entr${problems.length === 1 ? 'y' : 'ies'}, ignored (the next write drops them): ${shown}`,
    );
  };

  const describeDropped = (r: CacheRecord): string =>
    `workdir "${r.workdir}" server "${r.server}" ${r.invalid ?? ''}`;

  /** Parses one record for a caller; a malformed one is reported (once: the record remembers) and skipped. */
  const materialize = (record: CacheRecord): ToolSnapshot | undefined => {
    const wasUnchecked = record.valid === undefined;
    const snapshot = checkRecord(record);
    if (!snapshot && wasUnchecked) reportDropped([describeDropped(record)]);
    return snapshot;
  };

  async function read(): Promise<Loaded> {
    let key: string;
    try {
      const st = await fs.stat(file);
      if (st.kind !== 'file') {
        reportRead(
          `kind:${st.key}`,
          'corrupt',
          `The tool cache ${file} is not a regular file (${st.kind}); reading it as empty.`,
        );
        return EMPTY;
      }
      key = st.key;
      if (memo?.key === key) return memo;
      const got = await fs.readFile(file, maxFileBytes);
      key = got.key;
      const previous = memo ? new Map(memo.records.map((r) => [r.raw, r])) : undefined;
      const parsed = parseCacheFile(got.data, previous);
      if (parsed.problem) {
        report(
          'corrupt',
          `The tool cache ${file} is unusable (${parsed.problem}); reading it as empty. The next write replaces it.`,
        );
      }
      reportDropped(parsed.dropped);
      lastProblem = undefined;
      memo = { key, records: parsed.records, index: indexRecords(parsed.records) };
      return memo;
    } catch (error) {
      const code = errno(error);
      if (code === 'ENOENT') {
        lastProblem = undefined;
        return EMPTY;
      }
      if (code === 'EFBIG') {
        reportRead(
          `code:${code}`,
          'corrupt',
          `The tool cache ${file} is larger than ${maxFileBytes} bytes; reading it as empty. The next write replaces it.`,
          error,
        );
      } else if (code === 'EWAVENOTFILE') {
        reportRead(
          `code:${code}`,
          'corrupt',
          `The tool cache ${file} is not a regular file; reading it as empty.`,
          error,
        );
      } else {
        const message = `Could not read the tool cache ${file} (${code ?? String(error)}); reading it as empty.`;
        reportRead(`code:${code ?? String(error)}`, 'read-failed', message, error);
        if (code !== undefined && TRANSIENT_READ_ERRORS.has(code)) return { ...EMPTY, transient: code };
      }
      return EMPTY;
    }
  }

  const live = (s: { lastConnectedAt: number }): boolean => !isExpired(s, now(), ttlMs);

  const replaceFile = (text: string): Promise<string> =>
    replaceFileAtomic(fs, file, text, {
      fsync: opts.fsync ?? false,
      now,
      onMovedAside: (aside) =>
        report(
          'moved-aside',
          `A directory was in the place of the tool cache ${file}; renamed it to ${aside}.`,
        ),
    });

  async function writeLocked(
    workdir: string,
    entries: NormalizedInput[],
    configuredNames: string[],
  ): Promise<void> {
    let lock: Awaited<ReturnType<typeof acquireLock>>;
    try {
      await fs.mkdir(dir);
      lock = await acquireLock({
        fs,
        lockPath: `${file}.lock`,
        timeoutMs: lockTimeoutMs,
        staleMs: lockStaleMs,
        retryMinMs: LOCK_RETRY_MIN_MS,
        retryMaxMs: LOCK_RETRY_MAX_MS,
        pid: process.pid,
        host,
        now,
        sleep,
        random: opts.random ?? Math.random,
        isPidAlive: opts.isPidAlive ?? defaultIsPidAlive,
        report,
      });
    } catch (error) {
      report(
        'write-failed',
        `Could not lock the tool cache ${file} (${errno(error) ?? String(error)}); nothing was written.`,
        error,
      );
      return;
    }
    if (!lock) return; // lock-timeout already reported
    try {
      const current = await read();
      if (current.transient) {
        // Writing now would replace entries we merely failed to read this time: skip instead.
        report(
          'write-failed',
          `Skipped writing the tool cache ${file}: reading it failed with ${current.transient}, which may pass; the next write will try again.`,
        );
        return;
      }
      // validate what has not been validated yet (normally only lines another process wrote since our last read)
      const dropped: string[] = [];
      const existing = current.records.filter((r) => {
        if (r.valid === undefined && !checkRecord(r)) dropped.push(describeDropped(r));
        return r.valid === true;
      });
      reportDropped(dropped);
      const written = entries.map((e) => recordOf({ workdir, ...e }));
      const merged = mergeEntries(existing, written, { workdir, configuredNames, now: now(), ttlMs });
      const key = await replaceFile(serializeRecords(merged));
      memo = { key, records: merged, index: indexRecords(merged) };
    } catch (error) {
      report(
        'write-failed',
        `Could not write the tool cache ${file} (${errno(error) ?? String(error)}); it was left as it was.`,
        error,
      );
    } finally {
      await lock.release();
    }
  }

  return {
    file,
    async get(workdir, server, fingerprint) {
      const wd = checkWorkdir('get', workdir);
      checkString('get', 'server', server);
      checkString('get', 'fingerprint', fingerprint);
      const record = (await read()).index.get(wd)?.get(server);
      if (!record || !live(record)) return undefined;
      const snapshot = materialize(record); // a fresh object: the caller may keep or change it
      return snapshot?.fingerprint === fingerprint ? snapshot : undefined;
    },
    async list(workdir) {
      const wd = checkWorkdir('list', workdir);
      const servers = (await read()).index.get(wd);
      if (!servers) return [];
      const out: ToolSnapshot[] = [];
      for (const record of servers.values()) {
        const snapshot = live(record) ? materialize(record) : undefined;
        if (snapshot) out.push(snapshot);
      }
      return out.sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
    },
    async write(workdir, entries, configuredNames) {
      const wd = checkWorkdir('write', workdir);
      if (!Array.isArray(entries)) {
        throw new McpCacheError(
          'INVALID_INPUT',
          `ToolCache.write: entries must be an array, got ${typeof entries}.`,
        );
      }
      if (!Array.isArray(configuredNames) || configuredNames.some((n) => typeof n !== 'string')) {
        throw new McpCacheError(
          'INVALID_INPUT',
          'ToolCache.write: configuredNames must be an array of strings.',
        );
      }
      const normalized: NormalizedInput[] = entries.map((entry, i) => {
        const result = normalizeInput(entry);
        if (typeof result === 'string') {
          throw new McpCacheError('INVALID_INPUT', `ToolCache.write: entries[${i}] ${result}.`);
        }
        return result;
      });
      const names = [...configuredNames];
      const run = queue.then(() => writeLocked(wd, normalized, names));
      queue = run.catch(() => {}); // a failed write never blocks the next one
      return run;
    },
  };
}
