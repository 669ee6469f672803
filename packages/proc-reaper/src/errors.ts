/** Stable codes of {@link ReaperError}. */
export type ReaperErrorCode = 'INVALID_PID' | 'SELF_TARGET' | 'SPAWN_FAILED' | 'LEDGER_IO';

/** Every error this package throws or rejects with. `code` is stable; the message says what to do. */
export class ReaperError extends Error {
  readonly code: ReaperErrorCode;
  constructor(code: ReaperErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReaperError';
    this.code = code;
  }
}
