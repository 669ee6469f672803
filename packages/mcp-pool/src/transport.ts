import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ResolvedServer } from '@wave/mcp-config';
import type { Ledger } from '@wave/proc-reaper';
import type { HttpAuth } from './auth/http-auth';
import type { Clock } from './clock';

/** How a transport ended without being asked to. */
export interface TransportLoss {
  /**
   * `exit`: the stdio process exited. `drop`: an http/sse stream or request
   * failed at the network level. `auth`: the server refused our OAuth token
   * and refreshing did not help (the server goes to `needs-auth`).
   */
  kind: 'exit' | 'drop' | 'auth';
  /** Recoverable losses (http/sse drops) lead to `reconnecting`; a process exit leads to `error`. */
  recoverable: boolean;
  /** A sentence about what happened, without the server name (the pool adds it). */
  message: string;
  exitCode?: number | null;
  signal?: string | null;
  stderrTail?: string;
  cause?: unknown;
}

/** What a handle knows that helps explain a failure. */
export interface TransportDiagnostics {
  /** Exit of the stdio process, if it exited. */
  exit?: { code: number | null; signal: string | null };
  /** Last lines of stderr (stdio). */
  stderrTail?: string;
  /** Lines on stdout that were not JSON-RPC (count and the first few). */
  invalidStdout?: { count: number; samples: string[] };
  /** Number of valid JSON-RPC messages received. */
  messages?: number;
}

/** Outcome of {@link TransportHandle.terminate}. */
export interface TerminateResult {
  /** Every pid that was signalled (stdio). */
  pids: number[];
  /** Pids still alive afterwards (should be empty). */
  survivors: number[];
  /** SIGKILL was needed. */
  forced: boolean;
  /** Wall time in ms. */
  ms: number;
  /** A failure while closing (reported, never thrown). */
  error?: string;
}

/**
 * One connection's transport as the pool sees it: the SDK {@link Transport}
 * given to `Client.connect`, plus process ownership and loss detection.
 */
export interface TransportHandle {
  /** The SDK transport (not started: `Client.connect` starts it). */
  readonly transport: Transport;
  /** `stdio`, `http` or `sse`. */
  readonly kind: string;
  /** Pid of the server process (stdio), once started. */
  pid(): number | undefined;
  /**
   * Register the callback for an unexpected end (process exit, stream drop).
   * Not called after {@link TransportHandle.terminate} started.
   */
  onLost(callback: (loss: TransportLoss) => void): void;
  /**
   * Close the transport and (stdio) kill the whole process tree. Idempotent:
   * later calls return the first call's promise. Never rejects; always settles.
   */
  terminate(): Promise<TerminateResult>;
  /** What is known so far that helps explain a failure. */
  diagnostics(): TransportDiagnostics;
  /** Resolves when the stdio process has exited (never, for http/sse, unless terminated). */
  exited?(): Promise<{ code: number | null; signal: string | null }>;
}

/** What the pool gives a {@link TransportFactory}. */
export interface TransportContext {
  /** Aborted when the dial is abandoned (timeout, disconnect, destroy). */
  signal: AbortSignal;
  /** Call with the pid as soon as the process is spawned (shown while connecting). */
  onPid(pid: number): void;
  /** The pool's clock (for any timer a transport needs). */
  clock: Clock;
  /** Bytes of stderr kept per stdio server. */
  stderrBytes: number;
  /** Grace between SIGTERM and SIGKILL when killing a process tree. */
  killGraceMs: number;
  /** Marker namespace for spawned processes (proc-reaper). */
  markerNamespace?: string | undefined;
  /** Largest message (stdio: stdout line) accepted, in bytes. */
  maxMessageBytes?: number | undefined;
  /** The pool's process ledger: record every spawned tree in it (release it once killed). */
  ledger?: Ledger | undefined;
  /** OAuth for this server (http/sse), when the pool handles it. */
  auth?: HttpAuth | undefined;
  /** Report a ledger that cannot be written (the connection goes on). */
  onLedgerError?: ((err: unknown) => void) | undefined;
}

/**
 * Creates the transport of one connection. The default creates stdio
 * (proc-reaper tracked spawn), Streamable HTTP or SSE transports; tests inject
 * fakes. Throwing (or rejecting) fails the dial with that error.
 */
export type TransportFactory = (
  server: ResolvedServer,
  ctx: TransportContext,
) => TransportHandle | Promise<TransportHandle>;
