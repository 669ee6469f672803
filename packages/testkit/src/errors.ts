/** Stable codes of {@link TestkitError}. */
export type TestkitErrorCode =
  | 'UNKNOWN_FIXTURE'
  | 'UNKNOWN_REAL_SERVER'
  | 'MISSING_OPTION'
  | 'UNSUPPORTED_PLATFORM'
  | 'WAIT_TIMEOUT'
  | 'PROCESS_LEAK';

/** Every error thrown by testkit helpers: a stable `code` and a message saying what to do. */
export class TestkitError extends Error {
  override readonly name = 'TestkitError';
  readonly code: TestkitErrorCode;

  constructor(code: TestkitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
