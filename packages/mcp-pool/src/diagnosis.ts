/**
 * Failure diagnosis: pure builders of the errors a person reads when a dial
 * fails, a connection is lost or a server is not connected. No I/O and no
 * clock: the caller gathers the facts (exit status, diagnostics, time).
 */

import { isMcpPoolError, McpPoolError, type PoolErrorCode } from './errors';
import type { CloseReason, MachineState, ServerErrorInfo } from './machine';
import type { TransportDiagnostics, TransportLoss } from './transport';

/** Abort reasons of a dial. */
export type DialAbort =
  | { kind: 'timeout'; ms: number }
  /** The connection dropped after the handshake, while the dial was still listing tools. */
  | { kind: 'lost'; loss: TransportLoss }
  | { kind: 'closed'; reason: CloseReason }
  | { kind: 'limit' };

/** `o` without its `undefined` properties (in place). */
export function withoutUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** An error's message, with its cause's code or message when that adds something. */
export function errText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const c = cause && typeof cause === 'object' ? (cause.code ?? cause.message) : undefined;
    return c && !err.message.includes(String(c)) ? `${err.message} (${c})` : err.message;
  }
  return String(err);
}

/** `message`, followed by the server's last stderr lines when there are any. */
export function withTail(message: string, tail: string | undefined): string {
  return tail ? `${message}\nLast stderr lines:\n${tail}` : message;
}

/** What is known about a failed dial. */
export interface DialFailure {
  /** Server name. */
  name: string;
  /** `stdio`, `http` or `sse`. */
  transport: string;
  /** The server's URL as it may be shown (http/sse). */
  url?: string | undefined;
  /** `limits.maxConnections`, for `CONNECTION_LIMIT`. */
  maxConnections: number;
  /** Why the dial was aborted, if it was. */
  reason: DialAbort | undefined;
  /** What the dial threw. */
  err: unknown;
  /** The process's exit status, when it exited. */
  exit?: { code: number | null; signal: string | null } | undefined;
  /** The transport's diagnostics. */
  diag: TransportDiagnostics;
  at: number;
}

/**
 * Does the diagnosis of this failure depend on the process's exit status?
 * (Then the caller waits briefly for it before calling {@link dialFailure}.)
 */
export function needsExitStatus(reason: DialAbort | undefined, err: unknown): boolean {
  if (reason?.kind === 'limit' || reason?.kind === 'lost' || reason?.kind === 'timeout') return false;
  return !(isMcpPoolError(err) && reason === undefined);
}

/** The error a failed dial leaves on its server, most telling cause first. */
export function dialFailure(f: DialFailure): ServerErrorInfo {
  const { name, reason, err, at, diag } = f;
  if (reason?.kind === 'limit') {
    return {
      code: 'CONNECTION_LIMIT',
      message: `MCP server "${name}" was not started: ${f.maxConnections} connections are live and none is idle. Disconnect a server, or raise limits.maxConnections.`,
      at,
    };
  }
  if (reason?.kind === 'lost') {
    return {
      code: 'CONNECTION_CLOSED',
      message: `MCP server "${name}" connection lost while listing its tools: ${reason.loss.message}.`,
      at,
    };
  }
  if (isMcpPoolError(err) && reason === undefined) {
    return withoutUndefined({ code: err.code, message: err.message, stderrTail: err.stderrTail, at });
  }
  const exit = f.exit ?? diag.exit;
  const tail = diag.stderrTail;
  if (exit && reason?.kind !== 'timeout') {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return withoutUndefined({
      code: 'SERVER_EXITED' as PoolErrorCode,
      message: withTail(`MCP server "${name}" ${how} during start-up.`, tail),
      exitCode: exit.code,
      signal: exit.signal,
      stderrTail: tail,
      at,
    });
  }
  const garbage = diag.invalidStdout;
  if (garbage && (diag.messages ?? 0) === 0) {
    const sample = garbage.samples.map((l) => `  ${l}`).join('\n');
    return withoutUndefined({
      code: 'INVALID_STDOUT' as PoolErrorCode,
      message: withTail(
        `MCP server "${name}" wrote ${garbage.count} line${garbage.count === 1 ? '' : 's'} on stdout that ${garbage.count === 1 ? 'is' : 'are'} not JSON-RPC and never completed the MCP handshake. A stdio MCP server must write only JSON-RPC messages on stdout (logs go to stderr). First lines:\n${sample}`,
        tail,
      ),
      stderrTail: tail,
      at,
    });
  }
  if (reason?.kind === 'timeout') {
    return withoutUndefined({
      code: 'CONNECT_TIMEOUT' as PoolErrorCode,
      message: withTail(
        `MCP server "${name}" did not complete the MCP handshake within ${reason.ms} ms; it was stopped. Check that it starts on its own, or raise "connectTimeoutMs".`,
        tail,
      ),
      stderrTail: tail,
      at,
    });
  }
  const where = f.transport === 'stdio' ? '' : ` at ${f.url ?? ''} (${f.transport})`;
  let hint = '';
  const status = (err as { code?: unknown })?.code;
  if (status === 401 || status === 403) hint = ' Check the "headers" (credentials) of this server.';
  else if (status === 404) hint = ' Check the URL; note there is no automatic fallback between http and sse.';
  return withoutUndefined({
    code: 'CONNECT_FAILED' as PoolErrorCode,
    message: withTail(`MCP server "${name}" could not be connected${where}: ${errText(err)}.${hint}`, tail),
    stderrTail: tail,
    at,
  });
}

/** The error a lost connection leaves on its server. */
export function lossError(name: string, loss: TransportLoss, at: number): ServerErrorInfo {
  const what =
    loss.kind === 'exit'
      ? `MCP server "${name}" ${loss.message.replace(/^process /, '')} unexpectedly. Use connect() to start it again.`
      : `MCP server "${name}" connection lost: ${loss.message}.`;
  return withoutUndefined({
    code: (loss.kind === 'exit' ? 'SERVER_EXITED' : 'CONNECTION_CLOSED') as PoolErrorCode,
    message: withTail(what, loss.stderrTail),
    exitCode: loss.exitCode,
    signal: loss.signal,
    stderrTail: loss.stderrTail || undefined,
    at,
  });
}

/** `SERVER_NOT_CONNECTED` for a call of `tool`, saying what to do in the server's state. */
export function notConnectedError(name: string, state: Pick<MachineState, 'status' | 'error'>, tool: string) {
  const why =
    state.status === 'error' && state.error
      ? ` It failed: ${state.error.message.split('\n')[0]} Use connect("${name}") to retry.`
      : state.status === 'needs-auth'
        ? ` Sign in first: authorize("${name}").`
        : state.status === 'reconnecting'
          ? ' It is reconnecting; try again shortly.'
          : state.status === 'connecting'
            ? ' It is still connecting; await ensureConnected() or connect() first.'
            : ` Use ensureConnected() or connect("${name}") first.`;
  return new McpPoolError(
    'SERVER_NOT_CONNECTED',
    `Cannot call "${tool}": MCP server "${name}" is ${state.status}.${why}`,
    { server: name },
  );
}
