/** Stable codes of {@link McpInstructionsError}. */
export type McpInstructionsErrorCode = 'INVALID_MAX_CHARS';

/**
 * The only error this package throws: a programming error in the options
 * (history and server data never make it throw; malformed entries are skipped).
 */
export class McpInstructionsError extends Error {
  override readonly name = 'McpInstructionsError';
  readonly code: McpInstructionsErrorCode;

  constructor(code: McpInstructionsErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Default of {@link InstructionsOptions.maxChars}: Claude Code's `MAX_MCP_DESCRIPTION_LENGTH`. */
export const DEFAULT_MAX_CHARS = 2048;

/** Validates `maxChars` and applies the default. */
export function resolveMaxChars(maxChars: unknown): number {
  if (maxChars === undefined) return DEFAULT_MAX_CHARS;
  if (
    typeof maxChars === 'number' &&
    (maxChars === Number.POSITIVE_INFINITY || (Number.isInteger(maxChars) && maxChars >= 1))
  ) {
    return maxChars;
  }
  throw new McpInstructionsError(
    'INVALID_MAX_CHARS',
    `@wave/mcp-instructions: option maxChars must be a positive integer or Infinity, got ${String(maxChars)}. ` +
      `Pass a number such as 2048 (the default), or leave it out.`,
  );
}

/**
 * True when `err` is an {@link McpInstructionsError} (optionally with the
 * given code). Checks `name` and `code`, not `instanceof`, so an error from
 * another installed copy of this package is recognised too.
 */
export function isMcpInstructionsError(
  err: unknown,
  code?: McpInstructionsErrorCode,
): err is McpInstructionsError {
  if (!(err instanceof Error) || err.name !== 'McpInstructionsError') return false;
  const actual = (err as { code?: unknown }).code;
  return actual === 'INVALID_MAX_CHARS' && (code === undefined || actual === code);
}
