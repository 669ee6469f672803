/**
 * Tool calls: their options, their deadlines (one timer per pool) and the
 * mapping of what a failed call threw to a {@link McpPoolError}.
 */
import { ErrorCode, McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from './clock';
import { errText, withoutUndefined, withTail } from './diagnosis';
import { McpPoolError } from './errors';
import { isResponseTooLarge } from './oversize-line';
import type { TransportLoss } from './transport';

/** Options of a tool call ({@link McpPoolApi.callTool}). */
export interface CallOptions {
  /** Cancels the call (the server gets `notifications/cancelled`); rejects with `CALL_ABORTED`. */
  signal?: AbortSignal | undefined;
  /**
   * Per-call timeout in ms; rejects with `CALL_TIMEOUT`. With `onProgress`, an
   * idle limit: every progress notification starts it again. Without `signal`
   * and `onProgress` it is the SDK's own request timer (real time).
   * @default server `callTimeoutMs` ?? pool `timeouts.callMs`
   */
  timeoutMs?: number | undefined;
  /**
   * Progress notifications of this call (the request carries a progress
   * token). Progress keeps the call alive past `timeoutMs`, up to `maxTotalMs`.
   */
  onProgress?: ((progress: Progress) => void) | undefined;
  /** Absolute limit of a call with `onProgress`. @default pool `timeouts.callMaxTotalMs` (3600000) */
  maxTotalMs?: number | undefined;
}

/**
 * A tool call in flight. A call with neither a signal of its own nor
 * `onProgress` hands its deadline to the SDK (`sdkTimeout`, the documented
 * `RequestOptions.timeout`); any other call gets an `AbortController` and a
 * deadline on the pool's clock.
 */
export interface PendingCall {
  /** Pool-clock deadline (calls with `abort` only); infinite when none. */
  deadline: number;
  /** Cancels the request: its signal is the SDK's documented `RequestOptions.signal`. */
  abort?: AbortController;
  /** The SDK's own request timeout, in ms, when the SDK keeps the deadline. */
  sdkTimeout?: number;
  timedOut: boolean;
  timeoutMs: number;
  /** With `onProgress`: `timeoutMs` is an idle limit that progress restarts, bounded by `maxAt`. */
  idle?: { maxAt: number; maxMs: number };
}

/**
 * Call timeouts share one timer, armed for the earliest deadline. A finished
 * call only leaves the set (no timer operation per call); when the timer
 * fires it times out what is due and re-arms for the next one.
 */
export class CallDeadlines {
  private readonly calls = new Set<PendingCall>();
  private timer: unknown;
  private at = 0;
  private stopped = false;

  constructor(private readonly clock: Clock) {}

  add(call: PendingCall): void {
    this.calls.add(call);
    if (this.timer !== undefined && call.deadline >= this.at) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.at = call.deadline;
    this.timer = this.clock.setTimeout(() => this.sweep(), call.deadline - this.clock.now());
  }

  delete(call: PendingCall): void {
    this.calls.delete(call);
  }

  /** Clear the timer; a sweep no longer re-arms it. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Time out every call that is due, then re-arm for the next deadline. */
  private sweep(): void {
    this.timer = undefined;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const call of [...this.calls]) {
      if (call.deadline <= now) {
        this.calls.delete(call);
        call.timedOut = true;
        call.abort?.abort(new Error(`timed out after ${call.timeoutMs} ms`));
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    if (next !== Number.POSITIVE_INFINITY && !this.stopped) {
      this.at = next;
      this.timer = this.clock.setTimeout(() => this.sweep(), next - now);
    }
  }
}

/**
 * Did the SDK's own request timer of `timeoutMs` end the call? The SDK rejects
 * with `RequestTimeout` (-32001) and `data: { timeout }`; the code alone is
 * not enough, a server may answer with it too.
 */
export function isSdkTimeout(err: unknown, timeoutMs: number): boolean {
  const e = err as { code?: unknown; data?: { timeout?: unknown } } | undefined;
  return e?.code === ErrorCode.RequestTimeout && e.data?.timeout === timeoutMs;
}

/** The state of the connection a failed call ran on. */
export interface CallConnection {
  /** Its loss, once reported. */
  lost: TransportLoss | undefined;
  /** It is being closed. */
  closing: boolean;
  /** The SDK client no longer has a transport (closed, loss not reported yet). */
  transportGone: boolean;
}

/** Did the call fail because its connection closed? */
function connectionClosed(err: unknown, conn: CallConnection): boolean {
  return (
    (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) ||
    conn.lost !== undefined ||
    conn.closing ||
    // The pipe to a stdio server broke (it closed its stdin): its loss is reported shortly.
    (err as { code?: unknown } | undefined)?.code === 'EPIPE' ||
    // The transport closed and its loss is not reported yet (a stdio exit waits
    // briefly for the last stderr lines): the SDK answers "Not connected".
    conn.transportGone
  );
}

/** The error a failed call of `tool` on server `name` rejects with. */
export function callFailure(
  name: string,
  tool: string,
  err: unknown,
  call: Pick<PendingCall, 'timedOut' | 'timeoutMs' | 'deadline' | 'idle'>,
  aborted: boolean,
  conn: CallConnection,
): McpPoolError {
  const timeoutMs = call.timeoutMs;
  if (call.timedOut && call.idle) {
    const total = call.deadline >= call.idle.maxAt;
    return new McpPoolError(
      'CALL_TIMEOUT',
      total
        ? `MCP server "${name}" did not finish "${tool}" within ${call.idle.maxMs} ms in all; the call was cancelled. Raise "timeouts.callMaxTotalMs" (or the call's maxTotalMs) if the tool runs longer.`
        : `MCP server "${name}" reported no progress on "${tool}" for ${timeoutMs} ms; the call was cancelled. Raise "callTimeoutMs" if the tool is slow between progress reports.`,
      { server: name, cause: err },
    );
  }
  if (call.timedOut) {
    return new McpPoolError(
      'CALL_TIMEOUT',
      `MCP server "${name}" did not answer "${tool}" within ${timeoutMs} ms; the call was cancelled. Raise "callTimeoutMs" if the tool is slow.`,
      { server: name, cause: err },
    );
  }
  if (aborted) {
    return new McpPoolError('CALL_ABORTED', `Call of "${tool}" on MCP server "${name}" was aborted.`, {
      server: name,
      cause: err,
    });
  }
  if (connectionClosed(err, conn)) {
    const lost = conn.lost;
    const why = lost
      ? lost.kind === 'exit'
        ? `the server process ${lost.message.replace(/^process /, '')}`
        : lost.message
      : 'the connection was closed';
    return new McpPoolError(
      'CONNECTION_CLOSED',
      withTail(`Call of "${tool}" on MCP server "${name}" failed: ${why}.`, lost?.stderrTail || undefined),
      withoutUndefined({
        server: name,
        cause: err,
        exitCode: lost?.exitCode,
        signal: lost?.signal,
        stderrTail: lost?.stderrTail || undefined,
      }),
    );
  }
  if (isResponseTooLarge(err)) {
    return new McpPoolError(
      'RESPONSE_TOO_LARGE',
      `MCP server "${name}" answered "${tool}", but ${err.message.replace(/^MCP error -?\d+:\s*/, '')}. Ask the tool for less (a smaller range or page), or raise limits.maxMessageBytes.`,
      { server: name, cause: err },
    );
  }
  // The SDK prefixes "MCP error <code>: " on each side of the wire: say it once.
  const detail =
    err instanceof McpError
      ? `MCP error ${err.code}: ${err.message.replace(/^(?:MCP error -?\d+:\s*)+/, '')}`
      : errText(err);
  return new McpPoolError('SERVER_ERROR', `MCP server "${name}" failed "${tool}": ${detail}`, {
    server: name,
    cause: err,
  });
}
