import { stat } from 'node:fs/promises';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { type Ledger, spawnTracked, type TrackedProcess } from '@wave/proc-reaper';
import { type Clock, systemClock } from './clock';
import { McpPoolError } from './errors';
import { POOL_DEFAULTS } from './options';
import { oversizeLineReply } from './oversize-line';
import { TailBuffer } from './ring-buffer';
import type { TerminateResult, TransportDiagnostics, TransportHandle, TransportLoss } from './transport';

/** Options of {@link TrackedStdioTransport}. */
export interface TrackedStdioOptions {
  command: string;
  args?: string[];
  /** The complete environment of the child (the caller builds the allow-list). */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Bytes of stderr kept. @default 16384 */
  stderrBytes?: number;
  /** SIGTERM -> SIGKILL grace when killing the tree. @default 2000 */
  killGraceMs?: number;
  /** proc-reaper marker namespace. @default process.env.WAVE_REAPER_NAMESPACE ?? 'wave' */
  markerNamespace?: string | undefined;
  /**
   * Longest stdout line accepted, in bytes. A longer response fails its
   * request at once with a JSON-RPC error (`data.reason: 'RESPONSE_TOO_LARGE'`)
   * and the connection stays up; a longer line whose request id cannot be
   * read ends the connection (reported like a half-close), so no request
   * waits for an answer that was dropped. @default 10 MiB
   */
  maxLineBytes?: number;
  /**
   * How long to wait for the process to exit after it closed its stdout (or
   * its stdin broke), before the connection counts as lost. @default 500
   */
  halfCloseGraceMs?: number;
  /** Records the spawned tree (released after the tree is killed). */
  ledger?: Ledger | undefined;
  /** Told when the ledger cannot be written (the connection goes on). */
  onLedgerError?: ((err: unknown) => void) | undefined;
  /** Passed to `spawn` (Windows `cmd /c` command lines are quoted by the caller). */
  windowsVerbatimArguments?: boolean | undefined;
  /** How long to wait for the rest of stderr after the process exited, in ms. @default 100 */
  stderrDrainMs?: number;
  clock?: Clock;
  /** Server name, only for error messages. */
  serverName?: string;
  /** Called with the pid once the process runs. */
  onSpawn?: (pid: number) => void;
  /** Injected spawner (tests). @default spawnTracked from `@wave/proc-reaper` */
  spawn?: typeof spawnTracked;
}

type ExitInfo = { code: number | null; signal: string | null };

const MAX_SAMPLES = 3;
/** Bytes kept from each end of an over-long stdout line (where the request id is). */
const EDGE_BYTES = 512;
const SAMPLE_CHARS = 200;

/**
 * An SDK {@link Transport} over a child process spawned with proc-reaper's
 * `spawnTracked`: the child leads its own process group (POSIX), carries the
 * reaper marker, and `close()` kills the whole tree, not only the direct
 * child. The end of the connection is the child's `exit` event (the SDK's
 * stdio transport waits for stdout to close, which never happens while a
 * grandchild holds it). stderr is kept in a bounded buffer; stdout lines that
 * are not JSON-RPC are counted and sampled for error messages.
 */
export class TrackedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  /** Called once when the process exits without {@link close} having been called. */
  onexit?: ((info: ExitInfo & { stderrTail: string }) => void) | undefined;
  /**
   * Called once when the connection broke while the process runs on (it
   * closed its stdout, its stdin broke, or it wrote a line that cannot be
   * answered): the owner kills the tree.
   */
  onbroken?: ((what: string) => void) | undefined;

  private tracked: TrackedProcess | undefined;
  private readonly stderr: TailBuffer;
  private stdoutPending: Buffer[] = [];
  private stdoutPendingBytes = 0;
  /** Start and end of a stdout line being skipped for being too long. */
  private oversize: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  private broken: string | undefined;
  private brokenTimer: unknown;
  /** Sends waiting for the stdin pipe to drain (one set of listeners for all of them). */
  private readonly drainWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private garbageCount = 0;
  private readonly garbageSamples: string[] = [];
  private messageCount = 0;
  private exitInfo: ExitInfo | undefined;
  private exitSettled = false;
  private readonly exitWaiters: ((info: ExitInfo) => void)[] = [];
  private started = false;
  private closing: Promise<TerminateResult> | undefined;
  private closeFired = false;
  private readonly clock: Clock;

  constructor(private readonly opts: TrackedStdioOptions) {
    this.stderr = new TailBuffer(opts.stderrBytes ?? POOL_DEFAULTS.stderrBytes);
    this.clock = opts.clock ?? systemClock();
  }

  /** Pid of the direct child, once spawned (kept after it exits). */
  get pid(): number | undefined {
    return this.tracked?.pid;
  }

  /** Spawn the process. Resolves once it is running; rejects with `SPAWN_FAILED`. */
  async start(): Promise<void> {
    if (this.started) {
      throw new McpPoolError(
        'INVALID_STATE',
        'TrackedStdioTransport.start() was called twice; create a new transport for each connection.',
        this.opts.serverName === undefined ? {} : { server: this.opts.serverName },
      );
    }
    this.started = true;
    const name = this.opts.serverName ?? this.opts.command;
    if (this.opts.cwd !== undefined) {
      const st = await stat(this.opts.cwd).catch(() => undefined);
      if (!st?.isDirectory()) {
        throw new McpPoolError(
          'SPAWN_FAILED',
          `MCP server "${name}": working directory "${this.opts.cwd}" does not exist or is not a directory. Fix "cwd" in its configuration.`,
          { server: this.opts.serverName },
        );
      }
    }
    if (this.closing)
      throw new McpPoolError('CONNECTION_CLOSED', `MCP server "${name}": transport closed before start`);
    const spawn = this.opts.spawn ?? spawnTracked;
    let tracked: TrackedProcess;
    try {
      tracked = spawn(this.opts.command, this.opts.args ?? [], {
        env: this.opts.env,
        cwd: this.opts.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
        ...(this.opts.markerNamespace !== undefined ? { markerNamespace: this.opts.markerNamespace } : {}),
        ...(this.opts.windowsVerbatimArguments ? { windowsVerbatimArguments: true } : {}),
      });
    } catch (err) {
      throw this.spawnError(err);
    }
    this.tracked = tracked;
    const child = tracked.child;
    child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
      this.settleDrain(err);
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.onBroken('closed its stdin');
      this.onerror?.(err);
    });
    child.stdin?.on('drain', () => this.settleDrain());
    child.stdin?.on('close', () => this.settleDrain(new Error('Not connected: the server closed its stdin')));
    child.stdout?.on('error', (err) => this.onerror?.(err));
    child.stdout?.on('end', () => this.onBroken('closed its stdout'));
    child.stderr?.on('error', () => {});
    child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.once('exit', (code, signal) => this.onExit({ code, signal }));
    await new Promise<void>((resolve, reject) => {
      const onSpawn = () => {
        child.off('error', onError);
        resolve();
      };
      const onError = (err: Error) => {
        child.off('spawn', onSpawn);
        this.exitInfo ??= { code: null, signal: null };
        this.exitSettled = true;
        for (const w of this.exitWaiters.splice(0)) w(this.exitInfo);
        reject(this.spawnError(err));
      };
      child.once('spawn', onSpawn);
      child.once('error', onError);
    });
    // Later 'error' events (e.g. kill failures) must never become uncaught exceptions.
    child.on('error', (err) => this.onerror?.(err));
    if (tracked.pid !== undefined) this.opts.onSpawn?.(tracked.pid);
    const ledger = this.opts.ledger;
    if (ledger && !this.closing) {
      // Recorded before the handshake, so a host killed now leaves a tree the next host can sweep.
      try {
        await ledger.record(tracked);
      } catch (err) {
        this.opts.onLedgerError?.(err);
      }
    }
  }

  /** Write one JSON-RPC message to the child's stdin. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.tracked?.child.stdin;
    if (!stdin || this.closing || this.exitInfo || stdin.destroyed || !stdin.writable) {
      return Promise.reject(new Error('Not connected'));
    }
    return new Promise((resolve, reject) => {
      try {
        if (stdin.write(serializeMessage(message))) {
          resolve();
          return;
        }
      } catch (err) {
        reject(err);
        return;
      }
      // Backpressure: wait for the pipe to drain, but settle also when the
      // pipe closes or fails first (the server exited or stopped reading and
      // was killed), so no send() is left pending forever. The listeners are
      // registered once at start, for every waiting send.
      this.drainWaiters.push({ resolve, reject });
    });
  }

  private settleDrain(err?: Error): void {
    for (const w of this.drainWaiters.splice(0)) {
      if (err) w.reject(err);
      else w.resolve();
    }
  }

  /**
   * The process closed its stdout or its stdin broke. If it does not exit
   * within the grace period (an exit explains more), the connection is lost.
   */
  private onBroken(what: string): void {
    if (this.closing || this.exitInfo || this.broken !== undefined) return;
    this.broken = what;
    this.brokenTimer = this.clock.setTimeout(() => {
      this.brokenTimer = undefined;
      if (this.closing || this.exitInfo) return;
      this.fireClose();
      this.onbroken?.(what);
    }, this.opts.halfCloseGraceMs ?? 500);
  }

  /** Close the connection and kill the whole process tree. Idempotent. */
  async close(): Promise<void> {
    await this.terminate();
  }

  /**
   * Like {@link close}, returning what the reaper did. Never rejects. The
   * `onclose` callback fires at once (pending requests fail immediately); the
   * promise settles when the tree is gone or the kill gave up.
   */
  terminate(): Promise<TerminateResult> {
    if (this.closing) return this.closing;
    this.closing = (async (): Promise<TerminateResult> => {
      this.fireClose();
      if (this.brokenTimer !== undefined) {
        this.clock.clearTimeout(this.brokenTimer);
        this.brokenTimer = undefined;
      }
      this.settleDrain(new Error('Not connected: the transport was closed'));
      const tracked = this.tracked;
      if (!tracked) return { pids: [], survivors: [], forced: false, ms: 0 };
      try {
        tracked.child.stdin?.end();
      } catch {
        // ignore: the pipe may be gone already
      }
      try {
        const r = await tracked.kill({ graceMs: this.opts.killGraceMs ?? POOL_DEFAULTS.killGraceMs });
        if (r.survivors.length === 0) await this.opts.ledger?.release(tracked).catch(this.opts.onLedgerError);
        return { pids: r.pids, survivors: r.survivors, forced: r.forced, ms: r.ms };
      } catch (err) {
        return { pids: [tracked.pid], survivors: [], forced: false, ms: 0, error: String(err) };
      } finally {
        this.stdoutPending = [];
        this.stdoutPendingBytes = 0;
        this.oversize = undefined;
        tracked.child.stdout?.removeAllListeners('data');
        tracked.child.stdout?.destroy();
        tracked.child.stderr?.destroy();
      }
    })();
    return this.closing;
  }

  /**
   * Resolves when the child has exited and its last stderr lines were read
   * (bounded wait). Never resolves for a process that never exits.
   */
  exited(): Promise<ExitInfo> {
    if (this.exitSettled && this.exitInfo) return Promise.resolve(this.exitInfo);
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  /** Last lines of stderr. */
  stderrTail(maxLines = 20): string {
    return this.stderr.tail(maxLines);
  }

  /** Exit, stderr tail and stdout garbage seen so far. */
  diagnostics(): TransportDiagnostics {
    const d: TransportDiagnostics = { messages: this.messageCount };
    if (this.exitInfo) d.exit = this.exitInfo;
    const tail = this.stderr.tail();
    if (tail) d.stderrTail = tail;
    if (this.garbageCount > 0)
      d.invalidStdout = { count: this.garbageCount, samples: [...this.garbageSamples] };
    return d;
  }

  private spawnError(err: unknown): McpPoolError {
    const name = this.opts.serverName ?? this.opts.command;
    const e = err as NodeJS.ErrnoException;
    const hint =
      e?.code === 'ENOENT'
        ? `command "${this.opts.command}" was not found. Check "command" (and PATH) in its configuration.`
        : e?.code === 'SPAWN_FAILED'
          ? `command "${this.opts.command}" could not be started (not found on PATH, or not executable). Check "command" in its configuration.`
          : e?.code === 'EACCES'
            ? `command "${this.opts.command}" is not executable (permission denied).`
            : `could not start "${this.opts.command}": ${e?.message ?? String(err)}`;
    return new McpPoolError('SPAWN_FAILED', `MCP server "${name}": ${hint}`, {
      server: this.opts.serverName,
      cause: err,
    });
  }

  private fireClose(): void {
    if (this.closeFired) return;
    this.closeFired = true;
    try {
      this.onclose?.();
    } catch {
      // a throwing callback must not break teardown
    }
  }

  private onStdout(chunk: Buffer): void {
    if (this.closing) return;
    const max = this.opts.maxLineBytes ?? POOL_DEFAULTS.maxMessageBytes;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.oversize) {
        this.growOversize(piece);
        this.endOversize(max);
        continue;
      }
      let line = piece;
      if (this.stdoutPending.length > 0) {
        this.stdoutPending.push(piece);
        line = Buffer.concat(this.stdoutPending, this.stdoutPendingBytes + piece.length);
        this.stdoutPending = [];
        this.stdoutPendingBytes = 0;
      }
      if (line.length > max) {
        this.oversize = {
          head: line.subarray(0, EDGE_BYTES),
          tail: line.subarray(-EDGE_BYTES),
          bytes: line.length,
        };
        this.endOversize(max);
        continue;
      }
      this.onLine(line.toString('utf8').replace(/\r$/, ''));
      if (this.closing) return;
    }
    if (start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.oversize) {
      this.growOversize(rest);
      return;
    }
    this.stdoutPending.push(rest);
    this.stdoutPendingBytes += rest.length;
    if (this.stdoutPendingBytes > max) {
      // Too long to keep: remember only its start and end (for the request id), skip the rest.
      const all = Buffer.concat(this.stdoutPending, this.stdoutPendingBytes);
      this.oversize = {
        head: all.subarray(0, EDGE_BYTES),
        tail: all.subarray(-EDGE_BYTES),
        bytes: all.length,
      };
      this.stdoutPending = [];
      this.stdoutPendingBytes = 0;
    }
  }

  private growOversize(piece: Buffer): void {
    const o = this.oversize;
    if (!o || piece.length === 0) return;
    o.bytes += piece.length;
    o.tail =
      piece.length >= EDGE_BYTES
        ? Buffer.from(piece.subarray(-EDGE_BYTES))
        : Buffer.concat([o.tail, piece]).subarray(-EDGE_BYTES);
  }

  /** A line over the limit ended: fail its request, or (id unknown) end the connection. */
  private endOversize(max: number): void {
    const o = this.oversize;
    this.oversize = undefined;
    if (!o) return;
    const head = o.head.toString('utf8');
    const tail = o.tail.toString('utf8').replace(/\r$/, '');
    const reply = oversizeLineReply(head, tail, o.bytes, max);
    this.noteGarbage(`(a line of ${o.bytes} bytes, over the limit of ${max}: ${head.slice(0, 80)}...)`);
    if (reply.kind === 'reply') {
      this.onmessage?.(reply.message);
      return;
    }
    if (reply.kind === 'ignore') return;
    // Which request it answered is unknown: every request would wait its full timeout.
    if (this.closing || this.exitInfo || this.broken !== undefined) return;
    this.broken = reply.what;
    this.fireClose();
    this.onbroken?.(reply.what);
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.noteGarbage(line);
      return;
    }
    this.messageCount++;
    this.onmessage?.(message);
  }

  private noteGarbage(line: string): void {
    this.garbageCount++;
    if (this.garbageSamples.length < MAX_SAMPLES) {
      this.garbageSamples.push(line.length > SAMPLE_CHARS ? `${line.slice(0, SAMPLE_CHARS)}...` : line);
    }
    this.onerror?.(new Error(`stdout line is not JSON-RPC: ${line.slice(0, SAMPLE_CHARS)}`));
  }

  private onExit(info: ExitInfo): void {
    this.exitInfo = info;
    const settle = () => {
      this.exitSettled = true;
      for (const w of this.exitWaiters.splice(0)) w(info);
      if (!this.closing) this.onexit?.({ ...info, stderrTail: this.stderr.tail() });
    };
    if (this.brokenTimer !== undefined) {
      this.clock.clearTimeout(this.brokenTimer);
      this.brokenTimer = undefined;
    }
    if (!this.closing) {
      // The child is gone: pending requests fail now (ConnectionClosed), even if
      // a grandchild still holds stdout open.
      this.fireClose();
    }
    const stderr = this.tracked?.child.stderr;
    if (this.closing || !stderr || stderr.readableEnded || stderr.destroyed) {
      settle();
      return;
    }
    // Let the last stderr lines arrive (bounded: a grandchild may hold stderr open).
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this.clock.clearTimeout(timer);
      stderr.off('end', finish);
      stderr.off('close', finish);
      settle();
    };
    const timer = this.clock.setTimeout(finish, this.opts.stderrDrainMs ?? 100);
    stderr.once('end', finish);
    stderr.once('close', finish);
  }
}

/** Wrap a {@link TrackedStdioTransport} as a {@link TransportHandle}. */
export function stdioHandle(t: TrackedStdioTransport): TransportHandle {
  let lost: ((loss: TransportLoss) => void) | undefined;
  t.onexit = (info) => {
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    lost?.({
      kind: 'exit',
      recoverable: false,
      message: `process ${how}`,
      exitCode: info.code,
      signal: info.signal,
      stderrTail: info.stderrTail,
    });
  };
  t.onbroken = (what) => {
    lost?.({
      kind: 'drop',
      recoverable: false,
      message: `the server process ${what} while still running; it was stopped`,
      stderrTail: t.stderrTail(),
    });
  };
  return {
    transport: t,
    kind: 'stdio',
    pid: () => t.pid,
    onLost: (cb) => {
      lost = cb;
    },
    terminate: () => t.terminate(),
    diagnostics: () => t.diagnostics(),
    exited: () => t.exited(),
  };
}
