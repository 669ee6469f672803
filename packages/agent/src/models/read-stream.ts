/** Reads a successful model response: an SSE stream event by event, or one JSON body. */
import { ModelError, redact } from './errors';
import { abortedError, type IdleWatchdog, timeoutError } from './http';
import { readSse } from './sse';

/** Who is reading, for messages. */
export interface StreamContext {
  name: string;
  url: string;
  attempts: number;
  signal?: AbortSignal | undefined;
  secret?: string | undefined;
  /** Touched for every chunk; its firing means the stream stalled. */
  watchdog: IdleWatchdog;
  idleTimeoutMs?: number | undefined;
}

export interface StreamHandlers<T> {
  /** One SSE event; `'stop'` ends the read (e.g. after `[DONE]`). */
  onEvent(data: string, event: string): 'continue' | 'stop';
  /** The whole body when the server answered with JSON instead of a stream. */
  onJson(json: unknown): T;
}

function readError(error: unknown, ctx: StreamContext): ModelError {
  if (ctx.signal?.aborted) return abortedError(ctx.name, error);
  if (ctx.watchdog.fired) return timeoutError(ctx.name, ctx.url, ctx.idleTimeoutMs, ctx.attempts, error);
  const cause = (error as { cause?: { code?: unknown } })?.cause?.code ?? (error as Error)?.message ?? error;
  return new ModelError(
    'MODEL_NETWORK',
    `${ctx.name}: the connection to ${ctx.url} broke while the response was being read (${redact(String(cause), ctx.secret)}). Not retried because output had started; send the request again.`,
    { model: ctx.name, attempts: ctx.attempts, cause: error },
  );
}

/**
 * An event-stream response runs `onEvent` per event and resolves `undefined`;
 * any other response is parsed as JSON and resolves `onJson`'s result.
 * A broken connection is `MODEL_NETWORK`, a stall `MODEL_TIMEOUT`, an abort
 * `MODEL_ABORTED`; errors thrown by the handlers pass through unchanged.
 * Disposes of the watchdog when done.
 */
export async function readStream<T>(
  response: Response,
  ctx: StreamContext,
  handlers: StreamHandlers<T>,
): Promise<T | undefined> {
  try {
    return await readBody(response, ctx, handlers);
  } finally {
    ctx.watchdog.dispose();
  }
}

async function readBody<T>(
  response: Response,
  ctx: StreamContext,
  handlers: StreamHandlers<T>,
): Promise<T | undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw readError(error, ctx);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ModelError(
        'MODEL_BAD_RESPONSE',
        `${ctx.name}: ${ctx.url} answered ${type || 'without a content-type'} that is not JSON: ${redact(text.slice(0, 200), ctx.secret)}. Check baseURL.`,
        { model: ctx.name, attempts: ctx.attempts, cause: error },
      );
    }
    return handlers.onJson(json);
  }
  if (!response.body) {
    throw new ModelError('MODEL_BAD_RESPONSE', `${ctx.name}: ${ctx.url} sent an event stream with no body`, {
      model: ctx.name,
      attempts: ctx.attempts,
    });
  }
  const events = readSse(response.body, () => ctx.watchdog.touch());
  try {
    for (;;) {
      let next: IteratorResult<{ event: string; data: string }>;
      try {
        next = await events.next();
      } catch (error) {
        throw readError(error, ctx);
      }
      if (next.done) return undefined;
      if (handlers.onEvent(next.value.data, next.value.event) === 'stop') return undefined;
    }
  } finally {
    await events.return(undefined);
  }
}
