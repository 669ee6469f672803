import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The path of the loopback redirect URI. */
export const CALLBACK_PATH = '/callback';

/** What the authorization server sent back to the redirect URI. */
export interface AuthorizationResponse {
  code: string;
}

/** Why a redirect is not accepted. Never carries the code. */
export class CallbackError extends Error {
  override readonly name = 'CallbackError';
  constructor(
    readonly reason: 'state' | 'denied' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Read the query of a redirect (`?code=...&state=...` or `?error=...`).
 * Pure. Throws {@link CallbackError} for a wrong `state` (a forged or stale
 * callback), an `error` answer, or a redirect without a code.
 */
export function parseRedirect(url: URL, expectedState: string): AuthorizationResponse {
  const q = url.searchParams;
  const state = q.get('state');
  if (state !== expectedState) {
    throw new CallbackError(
      'state',
      'The sign-in redirect has the wrong "state" (it is not the answer to this sign-in); it was refused.',
    );
  }
  const error = q.get('error');
  if (error !== null) {
    const description = q.get('error_description');
    throw new CallbackError(
      'denied',
      `The authorization server refused the sign-in: ${error.slice(0, 100)}${description ? ` (${description.slice(0, 200)})` : ''}.`,
    );
  }
  const code = q.get('code');
  if (code === null || code === '')
    throw new CallbackError('malformed', 'The sign-in redirect has no authorization code.');
  return { code };
}

/**
 * Read a redirect URL pasted by a person (headless sign-in: the browser ran
 * elsewhere and could not reach the loopback listener). Accepts the whole URL,
 * or just its query string. Pure.
 */
export function parsePastedRedirect(text: string, expectedState: string): AuthorizationResponse {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    url = new URL(`http://127.0.0.1${CALLBACK_PATH}${trimmed.startsWith('?') ? '' : '?'}${trimmed}`);
  }
  return parseRedirect(url, expectedState);
}

/** A loopback listener waiting for one authorization redirect. */
export interface LoopbackListener {
  /** `http://127.0.0.1:<port>/callback` */
  readonly redirectUrl: string;
  /**
   * Resolves with the first callback that has the right `state` (then the
   * listener closes); callbacks with a wrong state are answered 400 and
   * ignored. Rejects when the server answered with an error.
   */
  readonly result: Promise<AuthorizationResponse>;
  /** Stop listening (idempotent). */
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * Listen on 127.0.0.1 (`port`, or a random free one) for the redirect of one
 * sign-in with `state`. Accepts exactly one matching callback, then closes.
 */
export async function startLoopbackListener(opts: {
  state: string;
  port?: number;
}): Promise<LoopbackListener> {
  let settle: { resolve: (r: AuthorizationResponse) => void; reject: (e: Error) => void } | undefined;
  const result = new Promise<AuthorizationResponse>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Unhandled until someone awaits it: the flow may end another way (pasted URL, abort).
  result.catch(() => {});
  let done = false;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || done) {
      res.statusCode = 404;
      res.end(PAGE('Not found', 'This address only accepts one sign-in redirect.'));
      return;
    }
    try {
      const r = parseRedirect(url, opts.state);
      done = true;
      res.end(PAGE('Signed in', 'You can close this window and return to the application.'));
      settle?.resolve(r);
    } catch (err) {
      const e = err as CallbackError;
      res.statusCode = 400;
      res.end(PAGE('Sign-in failed', e.message));
      if (e.reason !== 'state') {
        done = true;
        settle?.reject(e);
      }
      // A wrong state is refused and the listener keeps waiting for the real answer.
    }
    if (done) void close();
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`, result, close };
}
