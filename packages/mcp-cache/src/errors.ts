/** Stable codes of {@link McpCacheError}. */
export type McpCacheErrorCode =
  /** An argument of `get`/`list`/`write` has the wrong shape: a bug in the caller. */
  | 'INVALID_INPUT'
  /** An option of `createToolCache` is out of range: a bug in the caller. */
  | 'INVALID_OPTION';

/**
 * Thrown (or rejected) only for programmer errors: wrong argument types or
 * option values. File problems are never thrown; they go to `onDebug`.
 */
export class McpCacheError extends Error {
  override readonly name = 'McpCacheError';
  readonly code: McpCacheErrorCode;

  constructor(code: McpCacheErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const CODES: ReadonlySet<string> = new Set<McpCacheErrorCode>(['INVALID_INPUT', 'INVALID_OPTION']);

/**
 * True when `err` is an {@link McpCacheError} (optionally with the given
 * code). Checks `name` and `code`, not `instanceof`, so an error from another
 * installed copy of this package is recognised too.
 */
export function isMcpCacheError(err: unknown, code?: McpCacheErrorCode): err is McpCacheError {
  if (!(err instanceof Error) || err.name !== 'McpCacheError') return false;
  const actual = (err as { code?: unknown }).code;
  return typeof actual === 'string' && CODES.has(actual) && (code === undefined || actual === code);
}
