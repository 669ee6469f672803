/** Stable codes of {@link ToolCacheError}. */
export type ToolCacheErrorCode =
  /** An argument of `get`/`list`/`write` has the wrong shape: a bug in the caller. */
  | 'WAVE_CACHE_INVALID_INPUT'
  /** An option of `createToolCache` is out of range: a bug in the caller. */
  | 'WAVE_CACHE_INVALID_OPTION';

/**
 * Thrown (or rejected) only for programmer errors: wrong argument types or
 * option values. File problems are never thrown; they go to `onDebug`.
 */
export class ToolCacheError extends Error {
  override readonly name = 'ToolCacheError';
  readonly code: ToolCacheErrorCode;

  constructor(code: ToolCacheErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
