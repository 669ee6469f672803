/** One tool as shown in a panel. Only these fields are kept; anything else a server sends is dropped. */
export interface CachedTool {
  name: string;
  title?: string;
  description?: string;
  /** The tool's JSON Schema for its arguments, as the server reported it. */
  inputSchema?: object;
  /** MCP tool annotations (`readOnlyHint`, `destructiveHint`, ...), as the server reported them. */
  annotations?: object;
}

/**
 * What one server offered the last time it was connected in one workdir.
 *
 * For display only: never declare these tools to a model or call them; a
 * snapshot may describe tools that no longer exist.
 */
export interface ToolSnapshot {
  /** The workdir (absolute, normalized) the snapshot belongs to. */
  workdir: string;
  /** The server name as configured. */
  server: string;
  /** The configuration fingerprint the server had when these tools were listed. */
  fingerprint: string;
  /** The tools, in the order the server listed them. May be empty. */
  tools: CachedTool[];
  /** The server's `instructions` from `initialize`, if it gave any. */
  instructions?: string;
  /** When the server was last connected (epoch ms). */
  lastConnectedAt: number;
}

/** What a caller writes: a snapshot without its workdir (given once per write). */
export type ToolSnapshotInput = Omit<ToolSnapshot, 'workdir'>;

/**
 * Time source and timer. Only `now()` is required; `setTimeout` (when given)
 * is used for the waits between lock attempts, so tests can run them on fake
 * time. `now()` must be wall-clock epoch milliseconds: it is compared with
 * `lastConnectedAt` (TTL) and with lock file ages. The shared clock of the
 * wave packages (@wave/proc-reaper's `Clock`) fits it; a test keeps them in agreement.
 */
export interface Clock {
  now(): number;
  setTimeout?(fn: () => void, ms: number): unknown;
}

/** Stable codes of {@link ToolCacheDebugEvent}. */
export type ToolCacheDebugCode =
  /** The cache file exists but could not be read (permissions, a symlink loop, a parent that is not a directory...). Read as empty. */
  | 'read-failed'
  /** The file is not a cache of a known version (bad JSON, binary, wrong types, wrong version, not a regular file). Read as empty. */
  | 'corrupt'
  /** Some entries of an otherwise valid file were malformed and ignored. */
  | 'entry-dropped'
  /** The lock could not be taken in time; this write was skipped. */
  | 'lock-timeout'
  /** A stale lock (dead owner, or older than `lockStaleMs`) was removed. */
  | 'lock-broken'
  /** When releasing, the lock file was no longer ours (someone judged it stale). */
  | 'lock-lost'
  /** Something in the way of the cache file (a directory) was renamed aside. */
  | 'moved-aside'
  /** A write failed (no permission, disk full, ...); nothing was changed. */
  | 'write-failed';

/** A diagnostic from the cache: every problem is reported here and nowhere else (never thrown). */
export interface ToolCacheDebugEvent {
  code: ToolCacheDebugCode;
  /** What happened, in words, naming the file. */
  message: string;
  /** The cache file concerned. */
  file: string;
  /** The underlying error, when there is one. */
  error?: unknown;
}
