/**
 * Stable error codes of `@wave/mcp-pool`. Hosts switch on these, never on
 * message text.
 */
export type PoolErrorCode =
  /** No server of that name is configured in this pool (or lease). */
  | 'UNKNOWN_SERVER'
  /** The server exists but is not `connected` (disconnected, connecting, reconnecting or error). */
  | 'SERVER_NOT_CONNECTED'
  /** A tool call got no answer within its timeout; the request was cancelled. */
  | 'CALL_TIMEOUT'
  /** The caller's `AbortSignal` fired during a tool call; the request was cancelled. */
  | 'CALL_ABORTED'
  /** The server answered a request with a JSON-RPC error, or sent something the client could not accept. */
  | 'SERVER_ERROR'
  /**
   * The server's answer was over the size limit of one message (stdio: one
   * stdout line, `limits.maxMessageBytes`) and was dropped; the connection stays up.
   */
  | 'RESPONSE_TOO_LARGE'
  /** The connection closed while a call was in flight (crash, drop, disconnect, destroy). */
  | 'CONNECTION_CLOSED'
  /** The server's `type` is not `stdio`, `http` or `sse`. */
  | 'TRANSPORT_UNKNOWN'
  /** The server's configuration cannot be dialed (missing command/url, unresolved variable, ...). */
  | 'CONFIG_INVALID'
  /** The server did not finish `initialize` (and the first tool listing) in time. */
  | 'CONNECT_TIMEOUT'
  /** The server could not be reached or refused the MCP handshake. */
  | 'CONNECT_FAILED'
  /** The stdio server's process could not be started (command not found, bad cwd, ...). */
  | 'SPAWN_FAILED'
  /** The stdio server's process exited (during start-up or while connected). */
  | 'SERVER_EXITED'
  /** The stdio server wrote output that is not JSON-RPC on stdout and never completed the handshake. */
  | 'INVALID_STDOUT'
  /** An http/sse connection dropped and every reconnection attempt failed. */
  | 'RECONNECT_FAILED'
  /** No connection slot was free (limit reached, every live connection busy or starting). */
  | 'CONNECTION_LIMIT'
  /** The pool (or this lease) was destroyed / released. */
  | 'POOL_DESTROYED'
  /**
   * The server needs an OAuth sign-in (it answered 401, or 403 for more
   * scope, and no refresh helped): the server is `needs-auth` until
   * `authorize()` succeeds. Also a sign-in that failed.
   */
  | 'AUTH_REQUIRED'
  /** An option given to the pool is not valid (e.g. `lease()` on a pool that is not shared). */
  | 'INVALID_ARGUMENT'
  /** A method was called in a state that does not allow it (a programming error, e.g. a transport started twice). */
  | 'INVALID_STATE';

/**
 * The one error class of this package. `code` is stable; `message` says
 * which server, what happened and what to do.
 */
export class McpPoolError extends Error {
  override readonly name = 'McpPoolError';
  /** Stable machine-readable code. */
  readonly code: PoolErrorCode;
  /** The server this error is about, when there is one. */
  readonly server: string | undefined;
  /** Process exit code, for `SERVER_EXITED`. */
  readonly exitCode: number | null | undefined;
  /** Signal that ended the process, for `SERVER_EXITED`. */
  readonly signal: string | null | undefined;
  /** Last lines the server wrote on stderr (stdio servers), if any. */
  readonly stderrTail: string | undefined;

  constructor(
    code: PoolErrorCode,
    message: string,
    opts: {
      server?: string;
      cause?: unknown;
      exitCode?: number | null;
      signal?: string | null;
      stderrTail?: string;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.server = opts.server;
    this.exitCode = opts.exitCode;
    this.signal = opts.signal;
    this.stderrTail = opts.stderrTail;
  }
}

/**
 * True when `err` is a {@link McpPoolError}, optionally with the given code.
 * Checks `name` and `code`, not `instanceof`: an error thrown by another
 * installed copy of this package is recognised too.
 */
export function isMcpPoolError(err: unknown, code?: PoolErrorCode): err is McpPoolError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'McpPoolError' && typeof e.code === 'string' && (code === undefined || e.code === code);
}
