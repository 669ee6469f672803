import { stat } from 'node:fs/promises';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { spawnTracked, type TrackedProcess } from '@wave/proc-reaper';
import { type Clock, systemClock } from './clock';
import { McpPoolError } from './errors';
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
  /** Longest stdout line accepted, in bytes. @default 10 MiB */
  maxLineBytes?: number;
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

  private tracked: TrackedProcess | undefined;
  private readonly stderr: TailBuffer;
  private stdoutPending: Buffer | undefined;
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
    this.stderr = new TailBuffer(opts.stderrBytes ?? 16_384);
    this.clock = opts.clock ?? systemClock();
  }

  /** Pid of the direct child, once spawned (kept after it exits). */
  get pid(): number | undefined {
    return this.tracked?.pid;
  }

  /** Spawn the process. Resolves once it is running; rejects with `SPAWN_FAILED`. */
  async start(): Promise<void> {
    if (this.started) throw new Error('TrackedStdioTransport already started');
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
      });
    } catch (err) {
      throw this.spawnError(err);
    }
    this.tracked = tracked;
    const child = tracked.child;
    child.stdin?.on('error', (err) => this.onerror?.(err));
    child.stdout?.on('error', (err) => this.onerror?.(err));
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
      // was killed), so no send() is left pending forever.
      const settle = (err?: Error) => {
        stdin.off('drain', onDrain);
        stdin.off('close', onClose);
        stdin.off('error', settle);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => settle();
      const onClose = () => settle(new Error('Not connected: the server closed its stdin'));
      stdin.on('drain', onDrain);
      stdin.on('close', onClose);
      stdin.on('error', settle);
    });
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
      const tracked = this.tracked;
      if (!tracked) return { pids: [], survivors: [], forced: false, ms: 0 };
      try {
        tracked.child.stdin?.end();
      } catch {
        // ignore: the pipe may be gone already
      }
      try {
        const r = await tracked.kill({ graceMs: this.opts.killGraceMs ?? 2_000 });
        return { pids: r.pids, survivors: r.survivors, forced: r.forced, ms: r.ms };
      } catch (err) {
        return { pids: [tracked.pid], survivors: [], forced: false, ms: 0, error: String(err) };
      } finally {
        this.stdoutPending = undefined;
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
    const max = this.opts.maxLineBytes ?? 10 * 1024 * 1024;
    let buf = this.stdoutPending ? Buffer.concat([this.stdoutPending, chunk]) : chunk;
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl === -1) break;
      const line = buf.toString('utf8', 0, nl).replace(/\r$/, '');
      buf = buf.subarray(nl + 1);
      this.onLine(line);
    }
    if (buf.length > max) {
      this.noteGarbage(`(a line longer than ${max} bytes)`);
      buf = Buffer.alloc(0);
    }
    this.stdoutPending = buf.length > 0 ? buf : undefined;
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
