import type { ChildProcess, SpawnOptions as NodeSpawnOptions } from 'node:child_process';

/**
 * Options of {@link spawnTracked}: every `child_process.spawn` option except
 * `detached`, which the reaper decides (POSIX: always a group and session
 * leader; Windows: never, so no console window appears).
 */
export interface SpawnOptions extends Omit<NodeSpawnOptions, 'detached'> {
  /**
   * Namespace put in front of the marker value (`<namespace>:<uuid>`), so a
   * supervisor or a test run can find every process it started.
   * @default process.env.WAVE_REAPER_NAMESPACE ?? 'wave'
   */
  markerNamespace?: string;
  /**
   * Reaper used by `handle.kill()` (and, through its adapter, to read the
   * start time at spawn). Tests inject one; hosts never need to.
   * @default createReaper()
   */
  reaper?: Reaper;
}

export interface KillOptions {
  /**
   * First signal sent to every member of the tree. `SIGKILL` skips the grace
   * period and goes straight to freeze-and-kill. Ignored on Windows, where
   * nothing is graceful (`taskkill /F`).
   * @default 'SIGTERM'
   */
  signal?: NodeJS.Signals;
  /** How long to wait after the first signal before SIGKILL. @default 2000 */
  graceMs?: number;
}

export interface KillResult {
  /** Every pid found in the tree (snapshot plus late joiners), root first. */
  pids: number[];
  /** Pids still alive at the end (e.g. EPERM, or stuck in uninterruptible sleep). */
  survivors: number[];
  /** True when SIGKILL (Windows: forced termination) was needed. */
  forced: boolean;
  /** Wall time of the whole kill, in ms. */
  ms: number;
}

export interface TrackedProcess {
  child: ChildProcess;
  pid: number;
  /** Value of `WAVE_REAPER_ID` in the child's environment: `<namespace>:<uuid>`. */
  marker: string;
  /** Process group id: equal to `pid` on POSIX (the child leads its group); `undefined` on Windows. */
  pgid: number | undefined;
  /**
   * Start time of the child, for telling it apart from a later process that
   * reuses its pid. Linux: clock ticks since boot (field 22 of
   * `/proc/<pid>/stat`), read at spawn. Other platforms: `undefined` here;
   * the ledger resolves it when recording.
   */
  startTime: number | undefined;
  /** Kill the whole tree of this process: same as `killTree(handle, opts)`. */
  kill(opts?: KillOptions): Promise<KillResult>;
  /**
   * `await using child = spawnTracked(...)`: kills the whole tree with the
   * default options when the scope ends. Same as `kill()`, result dropped.
   */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * One row of the process table. Everything but `pid` and `ppid` is optional
 * because not every platform reports it.
 */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group id (POSIX). */
  pgid?: number;
  /** Session id (Linux). */
  sid?: number;
  /**
   * One-letter state as `ps`/`/proc` show it: `R`, `S`, `D`, `T` (stopped),
   * `t`, `Z` (zombie), `X` (dead). Zombies and dead rows count as gone.
   */
  state?: string;
  /**
   * Start time in a platform unit that only needs to be comparable on one
   * machine: Linux clock ticks since boot; macOS epoch ms (second
   * resolution, from `lstart`); Windows epoch ms (from CIM `CreationDate`).
   */
  startTime?: number;
}

/** What to kill: a pid plus whatever identity is known about it. */
export interface ReapTarget {
  pid: number;
  /** Expected start time; when given, a live pid with another start time is a recycled pid and is left alone. */
  startTime?: number;
  /** Marker value (`WAVE_REAPER_ID`) carried by the tree. */
  marker?: string;
  /**
   * Whether a live process with this pid may be taken as the root when no
   * `startTime` is known. `killTree(pid)` trusts the caller; the ledger never
   * trusts a pid without a start time.
   */
  trustPid: boolean;
}

/** Outcome of one `kill(2)`: delivered, no such process, or not permitted. */
export type SignalOutcome = 'ok' | 'gone' | 'denied';

/** Runs a command and collects its output. Injected in tests. */
export type CommandRunner = (
  file: string,
  args: readonly string[],
  opts?: { timeoutMs?: number },
) => Promise<{ stdout: string; stderr: string; code: number | null }>;

/** `process.kill`-shaped function (negative pid = process group on POSIX). */
export type KillFn = (pid: number, signal: NodeJS.Signals | 0) => void;

/**
 * The platform-specific part of the reaper: how to list processes and how to
 * signal them. Everything else (which processes belong to the tree, what to
 * signal when) is shared and pure.
 */
export interface PlatformAdapter {
  readonly platform: 'linux' | 'darwin' | 'win32';
  /**
   * List every process. `hint` lets an adapter skip work: rows of
   * `hint.previous` whose pid is still present and not in `hint.reread`
   * may be reused as they are (the Linux adapter does; the others ignore it).
   */
  listProcesses(hint?: ListHint): Promise<ProcessInfo[]>;
  /**
   * Value of `WAVE_REAPER_ID` in a process's environment, `undefined` when
   * absent or unreadable. Only Linux can read it cheaply, so only the Linux
   * adapter has this method.
   */
  readMarker?(pid: number): string | undefined;
  /**
   * One process's row, read synchronously, or `undefined` when it is gone.
   * Only where that is cheap (Linux: one small file); used by `isAlive` to
   * count zombies as dead.
   */
  readProcess?(pid: number): ProcessInfo | undefined;
  /** Send a signal; negative pid = the process group. `0` probes. */
  signal(pid: number, signal: NodeJS.Signals | 0): SignalOutcome;
  /**
   * Windows only: `taskkill /PID <pid> /T /F`, which walks the tree itself
   * while the root is alive.
   */
  treeKill?(pid: number): Promise<void>;
}

export interface ListHint {
  previous: ReadonlyMap<number, ProcessInfo>;
  reread: ReadonlySet<number>;
}

/**
 * Time source and timers, injected so that unit tests never sleep. The one
 * clock shape of the wave packages (@wave/mcp-pool uses this type; testkit's
 * fake clock and @wave/mcp-cache's optional-timer clock are tested to agree).
 */
export interface Clock {
  /**
   * Milliseconds. The reaper only measures differences (its default is the
   * monotonic `performance.now()`); other users say which origin they need.
   */
  now(): number;
  /** Schedule `fn` after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancel a timer; unknown or already-fired handles are ignored. */
  clearTimeout(handle: unknown): void;
}

/** Dependencies of the reaper: a platform adapter, a clock, and who "we" are. */
export interface ReaperDeps {
  /** @default the adapter of `process.platform` */
  adapter?: PlatformAdapter;
  /** @default real timers and `performance.now()` */
  clock?: Clock;
  /** Pid of the calling process: it and its ancestors are never signalled. @default process.pid */
  selfPid?: number;
  /** Poll intervals in ms, used in order, the last one repeating. @default [10, 10, 15, 20, 25] */
  pollScheduleMs?: readonly number[];
  /** How long to wait for SIGKILLed processes to disappear before calling them survivors. @default 1000 */
  killWaitMs?: number;
}

/** A reaper bound to one set of dependencies. The top-level functions use the default one. */
export interface Reaper {
  readonly adapter: PlatformAdapter;
  killTree(target: number | TrackedProcess | ReapTarget, opts?: KillOptions): Promise<KillResult>;
  listDescendants(pid: number): Promise<number[]>;
  isAlive(pid: number): boolean;
  /** Start time of a live process, `undefined` if it is gone. */
  startTimeOf(pid: number): Promise<number | undefined>;
}

export interface LedgerOptions {
  /** Folder holding one ledger file per ledger instance; created when needed. */
  dir: string;
  /** @default the default reaper */
  reaper?: Reaper;
  /**
   * Called with a message a person can act on when a ledger file is unreadable or cannot be removed.
   * @default ignore
   */
  onWarning?: (message: string) => void;
}

/**
 * A crash-safe record of the trees a host has spawned, so that the next host
 * can reap what a dead one left behind.
 */
export interface Ledger {
  /** Path of this instance's own file (written on the first `record`). */
  readonly file: string;
  /** Remember a tracked process (written to disk before the promise resolves). */
  record(p: TrackedProcess): Promise<void>;
  /** Forget a tracked process (after it was killed or exited). */
  release(p: TrackedProcess): Promise<void>;
  /**
   * Reap the trees recorded by ledger files of hosts that are no longer
   * alive, then delete those files. Entries of live hosts are left alone; a
   * recorded pid whose start time does not match is never signalled.
   */
  sweep(opts?: KillOptions): Promise<KillResult[]>;
}
