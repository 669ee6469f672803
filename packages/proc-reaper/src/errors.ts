/**
 * Stable codes of {@link ProcReaperError}.
 *
 * - `INVALID_PID`: the pid is not a positive integer (a bug in the caller).
 * - `SELF_TARGET`: the pid is the caller, an ancestor of it, or pid 0/1.
 * - `SPAWN_FAILED`: no process was created (command not found, not executable, missing `cwd`).
 * - `LEDGER_IO`: the ledger file could not be written.
 */
export type ProcReaperErrorCode = 'INVALID_PID' | 'SELF_TARGET' | 'SPAWN_FAILED' | 'LEDGER_IO';

const CODES: ReadonlySet<string> = new Set<ProcReaperErrorCode>([
  'INVALID_PID',
  'SELF_TARGET',
  'SPAWN_FAILED',
  'LEDGER_IO',
]);

/** Every error this package throws or rejects with. `code` is stable; the message says what to do. */
export class ProcReaperError extends Error {
  override readonly name = 'ProcReaperError';
  readonly code: ProcReaperErrorCode;
  constructor(code: ProcReaperErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * True when `err` is a {@link ProcReaperError} (optionally with the given
 * code). Checks `name` and `code`, not `instanceof`, so an error from another
 * installed copy of this package is recognised too.
 */
export function isProcReaperError(err: unknown, code?: ProcReaperErrorCode): err is ProcReaperError {
  if (!(err instanceof Error) || err.name !== 'ProcReaperError') return false;
  const actual = (err as { code?: unknown }).code;
  return typeof actual === 'string' && CODES.has(actual) && (code === undefined || actual === code);
}
