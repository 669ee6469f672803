import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
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
}

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
 * (404 with a session id) is reported through `onLost` as recoverable. The
 * SDK's own stream reconnection is disabled: the pool owns reconnection. There
 * is no fallback from http to sse.
 */
export function httpHandle(opts: HttpHandleOptions): TransportHandle {
  const baseFetch: FetchLike = opts.fetch ?? ((url, init) => globalThis.fetch(url, init));
  let closing = false;
  let lost: ((loss: TransportLoss) => void) | undefined;
  const report = (message: string, cause?: unknown) => {
    if (closing) return;
    lost?.({ kind: 'drop', recoverable: true, message, cause });
  };

  const fetchImpl: FetchLike = async (url, init) => {
    let res: Response;
    try {
      res = await baseFetch(url, init);
    } catch (err) {
      if (!closing && !(init?.signal?.aborted ?? false)) {
        report(`request failed: ${(err as Error)?.message ?? String(err)}${causeText(err)}`, err);
      }
      throw err;
    }
    const method = (init?.method ?? 'GET').toUpperCase();
    if (res.status === 404 && headerOf(init, 'mcp-session-id')) {
      report('the server no longer knows this session (HTTP 404)');
      return res;
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

  const url = new URL(opts.url);
  const requestInit: RequestInit = opts.headers ? { headers: { ...opts.headers } } : {};
  const transport: Transport =
    opts.kind === 'sse'
      ? new SSEClientTransport(url, { requestInit, fetch: fetchImpl, eventSourceInit: { fetch: fetchImpl } })
      : new StreamableHTTPClientTransport(url, {
          requestInit,
          fetch: fetchImpl,
          // The pool reconnects (with its own backoff and state); the SDK must not also do it.
          reconnectionOptions: {
            maxRetries: 0,
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

function causeText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (!cause) return '';
  return ` (${cause.code ?? cause.message ?? String(cause)})`;
}
