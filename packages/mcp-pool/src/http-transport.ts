import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AuthRequiredError, type HttpAuth } from './auth/http-auth';
import { watchPostResponse } from './post-response-watch';
import type { TerminateResult, TransportHandle, TransportLoss } from './transport';

/** Options of {@link httpHandle}. */
export interface HttpHandleOptions {
  kind: 'http' | 'sse';
  url: string;
  headers?: Record<string, string> | undefined;
  /** Injected fetch (tests). @default globalThis.fetch */
  fetch?: FetchLike;
  /** What to call the server in messages: the *unexpanded* URL, never one with secrets. */
  displayUrl?: string | undefined;
  /**
   * Streamable HTTP: attempts to resume one interrupted event stream (a GET
   * with `Last-Event-ID`, after the server's `retry` delay) before the
   * connection counts as lost. @default 3
   */
  resumeAttempts?: number | undefined;
  /** OAuth: bearer tokens, refresh on 401, `needs-auth` when a sign-in is needed (see ./auth). */
  auth?: HttpAuth | undefined;
}

/** Default of {@link HttpHandleOptions.resumeAttempts}. */
export const DEFAULT_RESUME_ATTEMPTS = 3;

function isEventStream(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
}

function headerOf(init: RequestInit | undefined, name: string): string | null {
  const h = init?.headers;
  if (!h) return null;
  if (h instanceof Headers) return h.get(name);
  if (Array.isArray(h)) return h.find((pair) => pair[0]?.toLowerCase() === name)?.[1] ?? null;
  const rec = h as Record<string, string>;
  for (const k of Object.keys(rec)) if (k.toLowerCase() === name) return rec[k] ?? null;
  return null;
}

/**
 * Pass a long-lived response body through, calling `onEnd` when it ends or
 * fails. Cancelling it (our own close) is not an end.
 */
function watchBody(
  body: ReadableStream<Uint8Array>,
  onEnd: (err?: unknown) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (!cancelled) onEnd(err);
        controller.error(err);
        return;
      }
      if (chunk.done) {
        if (!cancelled) onEnd();
        controller.close();
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason).catch(() => {});
    },
  });
}

/**
 * A Streamable HTTP or SSE transport from the SDK with the configured headers,
 * and loss detection: the long-lived GET event stream failing (or, for
 * legacy SSE, ending), a
 * request failing at the network level, or the server forgetting our session
 * (404 with a session id) is reported through `onLost` as recoverable. A
 * stream the server closes (or that breaks) before its response is resumed by
 * the SDK with `Last-Event-ID` after the server's `retry` delay (SEP-1699),
 * at most `resumeAttempts` times; that is part of the transport, and only a
 * resumption that gives up is a lost connection (the pool then reconnects with
 * its own backoff). There is no fallback from http to sse.
 */
export function httpHandle(opts: HttpHandleOptions): TransportHandle {
  const baseFetch: FetchLike = opts.fetch ?? ((url, init) => globalThis.fetch(url, init));
  let closing = false;
  let lost: ((loss: TransportLoss) => void) | undefined;
  const report = (message: string, cause?: unknown) => {
    if (closing) return;
    lost?.({ kind: 'drop', recoverable: true, message, cause });
  };

  const resumeAttempts = Math.max(1, Math.floor(opts.resumeAttempts ?? DEFAULT_RESUME_ATTEMPTS));
  // Failed resumption attempts per interrupted stream (keyed by its last event id).
  const resumeFailures = new Map<string, number>();
  /**
   * A resumption attempt failed. The SDK tries again after the server's
   * `retry` delay, up to `resumeAttempts` times; the last failure (or an
   * answer that ends resumption, `final`) is a lost connection.
   */
  const resumeFailed = (lastEventId: string, why: string, final: boolean, cause?: unknown) => {
    const n = (resumeFailures.get(lastEventId) ?? 0) + 1;
    resumeFailures.set(lastEventId, n);
    if (final || n >= resumeAttempts) {
      resumeFailures.delete(lastEventId);
      report(
        `could not resume an interrupted event stream (Last-Event-ID ${lastEventId}) after ${n} attempt${n === 1 ? '' : 's'}: ${why}`,
        cause,
      );
    }
  };

  const fetchImpl: FetchLike = async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    // SEP-1699: a GET with Last-Event-ID resumes a stream the server closed
    // (or that broke) before its response. It is part of the transport: only
    // when resumption gives up is the connection lost.
    const resuming = method === 'GET' ? headerOf(init, 'last-event-id') : null;
    let res: Response;
    // --- OAuth: send the token; on 401 (or 403 insufficient_scope) refresh once and retry, else needs-auth.
    let sent: string | undefined;
    if (opts.auth) {
      sent = await opts.auth.token();
      if (sent !== undefined) init = withBearer(init, sent);
    }
    try {
      res = await baseFetch(url, init);
      if (opts.auth && refusesToken(res)) res = await authRetry(opts.auth, res, sent, url, init);
    } catch (err) {
      if (err instanceof AuthRequiredError) throw err;
      if (!closing && !(init?.signal?.aborted ?? false)) {
        const why = `request failed: ${(err as Error)?.message ?? String(err)}${causeText(err)}`;
        if (resuming !== null) resumeFailed(resuming, why, false, err);
        else report(why, err);
      }
      throw err;
    }
    if (res.status === 404 && headerOf(init, 'mcp-session-id')) {
      if (resuming !== null) resumeFailures.delete(resuming);
      report('the server no longer knows this session (HTTP 404)');
      return res;
    }
    if (resuming !== null) {
      if (res.ok) resumeFailures.delete(resuming);
      // 405: the server offers no GET stream, so the SDK stops trying.
      else if (!closing) resumeFailed(resuming, `HTTP ${res.status}`, res.status === 405);
    }
    if (method === 'GET' && res.ok && res.body && isEventStream(res)) {
      const body = watchBody(res.body, (err) => {
        if (err) {
          report(`event stream failed: ${(err as Error)?.message ?? String(err)}`, err);
        } else if (opts.kind === 'sse') {
          // Legacy SSE: the GET stream *is* the connection; its end is a drop.
          report('event stream closed by the server');
        }
        // Streamable HTTP: the server MAY close its optional GET stream at any
        // time (some hosts do every few seconds). A clean end is not a lost
        // connection; a real loss still shows as a failed stream, a failed
        // request, or a 404 for our session.
      });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    }
    // A response that breaks off mid-body is a lost connection (see watchPostResponse).
    if (method === 'POST' && res.ok && res.body)
      return watchPostResponse(res, (why, cause) => report(why, cause));
    return res;
  };

  /** The server refused our token: refresh and retry once, or report that a sign-in is needed. */
  const authRetry = async (
    auth: HttpAuth,
    refused: Response,
    sent: string | undefined,
    url: string | URL,
    init: RequestInit | undefined,
  ): Promise<Response> => {
    const next = await auth.challenge(refused, sent);
    let res = refused;
    if (next !== undefined) {
      await refused.body?.cancel().catch(() => {});
      res = await baseFetch(url, withBearer(init, next));
      if (!refusesToken(res)) return res;
      await auth.challenge(res, next);
    }
    await res.body?.cancel().catch(() => {});
    const scope = res.status === 403;
    const message = scope
      ? 'the server needs more permissions (insufficient_scope); sign in again to grant them'
      : 'the server needs you to sign in (HTTP 401)';
    if (!closing) lost?.({ kind: 'auth', recoverable: false, message });
    throw new AuthRequiredError(message, res.status);
  };

  const { url, headers } = splitUserinfo(opts.url, opts.headers);
  const requestInit: RequestInit = headers ? { headers } : {};
  const transport: Transport =
    opts.kind === 'sse'
      ? new SSEClientTransport(url, { requestInit, fetch: fetchImpl, eventSourceInit: { fetch: fetchImpl } })
      : new StreamableHTTPClientTransport(url, {
          requestInit,
          fetch: fetchImpl,
          // The SDK resumes interrupted event streams (SEP-1699: GET with Last-Event-ID after the
          // server's `retry` delay), at most `resumeAttempts` times per stream; when it gives up,
          // `resumeFailed` reports the loss and the pool reconnects with its own backoff.
          reconnectionOptions: {
            maxRetries: resumeAttempts,
            initialReconnectionDelay: 1_000,
            maxReconnectionDelay: 30_000,
            reconnectionDelayGrowFactor: 1.5,
          },
        });

  let terminating: Promise<TerminateResult> | undefined;
  return {
    transport,
    kind: opts.kind,
    pid: () => undefined,
    onLost: (cb) => {
      lost = cb;
    },
    terminate: () => {
      terminating ??= (async () => {
        closing = true;
        const t0 = Date.now();
        try {
          await transport.close();
          return { pids: [], survivors: [], forced: false, ms: Date.now() - t0 };
        } catch (err) {
          return { pids: [], survivors: [], forced: false, ms: Date.now() - t0, error: String(err) };
        }
      })();
      return terminating;
    },
    diagnostics: () => ({}),
  };
}

/** `init` with `Authorization: Bearer <token>`. */
function withBearer(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

/** 401, or 403 with `error="insufficient_scope"` (step-up). */
function refusesToken(res: Response): boolean {
  if (res.status === 401) return true;
  return res.status === 403 && /insufficient_scope/i.test(res.headers.get('www-authenticate') ?? '');
}

function causeText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (!cause) return '';
  return ` (${cause.code ?? cause.message ?? String(cause)})`;
}

/**
 * `fetch` refuses a URL with credentials in it (`https://user:pw@host/mcp`).
 * Pure: move them into a Basic `Authorization` header (unless the config
 * already sets one, which wins) and return the URL without them.
 */
export function splitUserinfo(
  raw: string,
  headers: Record<string, string> | undefined,
): { url: URL; headers: Record<string, string> | undefined } {
  const url = new URL(raw);
  if (url.username === '' && url.password === '')
    return { url, headers: headers ? { ...headers } : undefined };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const out: Record<string, string> = { ...headers };
  const hasAuth = Object.keys(out).some((k) => k.toLowerCase() === 'authorization');
  if (!hasAuth) out.Authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
  return { url, headers: out };
}
