import type { ConfigIssue } from './types';

/**
 * Stable codes of {@link McpConfigError}.
 *
 * - `CONFIG_NOT_FOUND`: the file to edit does not exist (remove).
 * - `CONFIG_PERMISSION`: the file or its directory cannot be read or written (EACCES, EPERM, EROFS).
 * - `CONFIG_MALFORMED`: the file is not valid JSONC, or its root / `mcpServers` is not an object.
 * - `CONFIG_IO`: any other file-system failure (a directory where the file should be, disk full...).
 * - `CONFIG_CONFLICT`: the file kept changing under the edit (another writer); nothing was written.
 * - `SERVER_NOT_FOUND`: no server of that name in the file (remove).
 * - `SERVER_EXISTS`: a server of that name is already in the file (add without `overwrite`).
 * - `NAME_CONFLICT`: another server in the file has a name with the same tool identity (add).
 * - `SERVER_INVALID`: the server definition fails validation (add), or is not connectable (connect).
 * - `TRANSPORT_UNKNOWN`: `type` is not stdio, http or sse (add, connect).
 * - `VARIABLE_UNRESOLVED`: a `${VAR}` without default is not set (connect).
 * - `SERVER_DISABLED`: the server is configured with `"disabled": true` (connect).
 * - `INVALID_OPTIONS`: a function got options of the wrong shape (no `workdir`...): a bug in the caller.
 */
export type McpConfigErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_PERMISSION'
  | 'CONFIG_MALFORMED'
  | 'CONFIG_IO'
  | 'CONFIG_CONFLICT'
  | 'SERVER_NOT_FOUND'
  | 'SERVER_EXISTS'
  | 'NAME_CONFLICT'
  | 'SERVER_INVALID'
  | 'TRANSPORT_UNKNOWN'
  | 'VARIABLE_UNRESOLVED'
  | 'SERVER_DISABLED'
  | 'INVALID_OPTIONS';

const CODES: ReadonlySet<string> = new Set<McpConfigErrorCode>([
  'CONFIG_NOT_FOUND',
  'CONFIG_PERMISSION',
  'CONFIG_MALFORMED',
  'CONFIG_IO',
  'CONFIG_CONFLICT',
  'SERVER_NOT_FOUND',
  'SERVER_EXISTS',
  'NAME_CONFLICT',
  'SERVER_INVALID',
  'TRANSPORT_UNKNOWN',
  'VARIABLE_UNRESOLVED',
  'SERVER_DISABLED',
  'INVALID_OPTIONS',
]);

/** Details attached to an {@link McpConfigError}. */
export interface McpConfigErrorDetails {
  file?: string;
  server?: string;
  /** The validation issues behind a `SERVER_INVALID` / `TRANSPORT_UNKNOWN` / `VARIABLE_UNRESOLVED`. */
  issues?: ConfigIssue[];
  cause?: unknown;
}

/**
 * The one error class of this package. Thrown by the editing functions and by
 * `assertConnectable`; never by loading (loading reports {@link ConfigIssue}s).
 */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
  readonly code: McpConfigErrorCode;
  readonly file?: string;
  readonly server?: string;
  readonly issues: ConfigIssue[];

  constructor(code: McpConfigErrorCode, message: string, details: McpConfigErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.server !== undefined) this.server = details.server;
    this.issues = details.issues ?? [];
  }
}

/**
 * True when `err` is an {@link McpConfigError} (optionally with the given
 * code). Checks `name` and `code`, not `instanceof`, so an error from another
 * installed copy of this package is recognised too.
 */
export function isMcpConfigError(err: unknown, code?: McpConfigErrorCode): err is McpConfigError {
  if (!(err instanceof Error) || err.name !== 'McpConfigError') return false;
  const actual = (err as { code?: unknown }).code;
  return typeof actual === 'string' && CODES.has(actual) && (code === undefined || actual === code);
}
