/**
 * What the http/sse transport needs from OAuth: a bearer token for each
 * request, and what to do when the server refuses one. Implemented by
 * `ServerAuth` (./manager.ts); the transport knows nothing else of OAuth.
 */
export interface HttpAuth {
  /** The access token to send now (refreshed first when it is about to expire), or undefined. */
  token(): Promise<string | undefined>;
  /**
   * The server answered 401, or 403 with `insufficient_scope`, to a request
   * that carried `sent` (undefined: no token was sent). Resolves with a new
   * token to retry once with (a refresh, or a token another pool or process
   * refreshed meanwhile), or undefined when the user must sign in again.
   */
  challenge(res: Response, sent: string | undefined): Promise<string | undefined>;
}

/** The server needs a (new) sign-in. Never carries a token. */
export class AuthRequiredError extends Error {
  override readonly name = 'AuthRequiredError';
  constructor(
    message: string,
    /** HTTP status that said so (401, or 403 for insufficient_scope). */
    readonly status: number,
  ) {
    super(message);
  }
}

/** True when `err` (or its `cause`, a few levels deep) is an {@link AuthRequiredError}. */
export function isAuthRequired(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    if (e instanceof AuthRequiredError) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
