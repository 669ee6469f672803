/**
 * One POST with retries: exponential backoff with jitter on 408/409/429/5xx,
 * network errors and silent attempts (idle timeout), `retry-after`
 * respected, abort passed to fetch so it reaches the socket at once. Retries stop once a 2xx arrives: the caller
 * reads the body, and a failure while reading is final.
 */
import { ModelError, redact } from './errors';
import { isContextLengthMessage } from './shared';

/** Retry policy of an adapter. */
export interface RetryOptions {
  /** Retries after the first attempt (0 disables retrying). @default 4 */
  maxRetries?: number;
  /** Delay before the first retry; doubles each time, with jitter. @default 500 */
  baseDelayMs?: number;
  /** Upper bound of one backoff delay. @default 30000 */
  maxDelayMs?: number;
  /** A `retry-after` longer than this fails at once instead of waiting. @default 60000 */
  maxRetryAfterMs?: number;
  /** Waits `ms`; must reject when `signal` aborts. Tests inject one that does not sleep. @default a timer */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Random source for jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Clock for `retry-after` given as an HTTP date. @default Date.now */
  now?: () => number;
}

/** What {@link postWithRetry} needs. */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal?: AbortSignal | undefined;
  retry?: RetryOptions | undefined;
  fetch?: typeof fetch | undefined;
  /** Adapter name, for messages. */
  model: string;
  /** Never shown in a message (the API key). */
  secret?: string | undefined;
  /** Hint appended to auth failures, e.g. which option or variable holds the key. */
  authHint: string;
  /** Abort an attempt when no byte arrived for this long (0: never). */
  idleTimeoutMs?: number | undefined;
}

/** The successful response, how many attempts it took, and the watchdog still guarding its body. */
export interface PostResult {
  response: Response;
  attempts: number;
  /** Touch it for every chunk read; dispose of it when the body is done. */
  watchdog: IdleWatchdog;
}

/** Aborts its `signal` when `touch()` was not called for `ms`. */
export interface IdleWatchdog {
  readonly signal: AbortSignal;
  /** Whether it fired. */
  readonly fired: boolean;
  touch(): void;
  /** Stops the timer. Idempotent. */
  dispose(): void;
}

/** An {@link IdleWatchdog}; `ms` of 0, undefined or Infinity never fires. */
export function idleWatchdog(ms: number | undefined): IdleWatchdog {
  const controller = new AbortController();
  const armed = ms !== undefined && ms > 0 && Number.isFinite(ms);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  const arm = () => {
    if (!armed || disposed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no data for ${ms} ms`)), ms);
  };
  arm();
  return {
    signal: controller.signal,
    get fired() {
      return controller.signal.aborted;
    },
    touch: arm,
    dispose() {
      disposed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** The error for a request that went silent for `ms`. */
export function timeoutError(
  model: string,
  url: string,
  ms: number | undefined,
  attempts: number,
  cause?: unknown,
) {
  return new ModelError(
    'MODEL_TIMEOUT',
    `${model}: no data from ${url} for ${ms} ms (attempt ${attempts}). The server may be stalled; try again, or raise idleTimeoutMs for slow local models.`,
    { model, attempts, cause },
  );
}

const RETRY_STATUS = new Set([408, 409, 429]);

export function isRetryableStatus(status: number): boolean {
  return RETRY_STATUS.has(status) || status >= 500;
}

/**
 * The delay before retry number `retry` (1-based), or `undefined` when the
 * provider asked for a wait longer than `maxRetryAfterMs`. Pure.
 */
export function retryDelay(
  retry: number,
  headers: { get(name: string): string | null } | undefined,
  options: RetryOptions = {},
): number | undefined {
  const { baseDelayMs = 500, maxDelayMs = 30_000, maxRetryAfterMs = 60_000 } = options;
  const asked = retryAfterMs(headers, options.now ?? Date.now);
  if (asked !== undefined) return asked > maxRetryAfterMs ? undefined : asked;
  const full = Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1));
  const random = options.random ?? Math.random;
  return Math.round(full / 2 + (random() * full) / 2);
}

/** `retry-after-ms`, or `retry-after` as seconds or an HTTP date; `undefined` when absent or unreadable. */
export function retryAfterMs(
  headers: { get(name: string): string | null } | undefined,
  now: () => number,
): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms != null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get('retry-after');
  if (value == null || value.trim() === '') return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The provider's own words from an error body (OpenAI, Anthropic, Ollama shapes), else the text. */
export function providerMessage(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    const err = json.error;
    if (typeof err === 'string') return err;
    if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof json.message === 'string') return json.message;
  } catch {
    // not JSON: fall through
  }
  const trimmed = text.trim();
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}...` : trimmed;
}

export function requestIdOf(headers: { get(name: string): string | null }): string | undefined {
  return headers.get('x-request-id') ?? headers.get('request-id') ?? undefined;
}

/** The error for an aborted request. */
export function abortedError(model: string, cause?: unknown): ModelError {
  return new ModelError('MODEL_ABORTED', `${model}: the request was aborted`, { model, cause });
}

function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return String((error as Error)?.message ?? error);
}

function statusError(
  req: PostRequest,
  status: number,
  text: string,
  headers: Headers,
  attempts: number,
  waitTooLong: number | undefined,
) {
  const said = redact(providerMessage(text), req.secret);
  const details = { model: req.model, status, requestId: requestIdOf(headers), attempts };
  const where = `${req.model}: HTTP ${status} from ${req.url}`;
  const what = said ? `: ${said}` : '';
  // Every provider reports an overlong prompt as a 400 or 413 with words to that effect.
  if ((status === 400 || status === 413) && isContextLengthMessage(said)) {
    return new ModelError(
      'MODEL_CONTEXT_LENGTH',
      `${where}${what}. The conversation is too long for this model: compact or shorten the history.`,
      details,
    );
  }
  if (status === 401 || status === 403) {
    return new ModelError('MODEL_AUTH', `${where}${what}. ${req.authHint}`, details);
  }
  if (status === 429 && waitTooLong !== undefined) {
    return new ModelError(
      'MODEL_RATE_LIMIT',
      `${where}${what}. The provider asked to wait ${Math.ceil(waitTooLong / 1000)} s, longer than retry.maxRetryAfterMs: try again later or raise that limit.`,
      details,
    );
  }
  if (status === 429) {
    return new ModelError(
      'MODEL_RATE_LIMIT',
      `${where}${what}. Still rate limited after ${attempts} attempt(s): wait a moment, lower the request rate, or raise retry.maxRetries.`,
      details,
    );
  }
  if (status === 404) {
    return new ModelError('MODEL_HTTP', `${where}${what}. Check baseURL and the model name.`, details);
  }
  const tail = status >= 500 ? ` (after ${attempts} attempt(s); the provider failed, try again later)` : '';
  return new ModelError('MODEL_HTTP', `${where}${what}${tail}`, details);
}

/**
 * POSTs `body` as JSON and resolves with the first 2xx response (body
 * unread). Throws a {@link ModelError} otherwise.
 */
export async function postWithRetry(req: PostRequest): Promise<PostResult> {
  const retry = req.retry ?? {};
  const maxRetries = retry.maxRetries ?? 4;
  const sleep = retry.sleep ?? defaultSleep;
  const doFetch = req.fetch ?? fetch;
  const payload = JSON.stringify(req.body);
  let attempts = 0;
  for (;;) {
    if (req.signal?.aborted) throw abortedError(req.model, req.signal.reason);
    attempts++;
    const watchdog = idleWatchdog(req.idleTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, watchdog.signal]) : watchdog.signal;
    let response: Response;
    try {
      response = await doFetch(req.url, { method: 'POST', headers: req.headers, body: payload, signal });
    } catch (error) {
      watchdog.dispose();
      if (req.signal?.aborted) throw abortedError(req.model, error);
      const delay = attempts <= maxRetries ? retryDelay(attempts, undefined, retry) : undefined;
      if (delay === undefined) {
        if (watchdog.fired) throw timeoutError(req.model, req.url, req.idleTimeoutMs, attempts, error);
        throw new ModelError(
          'MODEL_NETWORK',
          `${req.model}: could not reach ${req.url} (${redact(networkCause(error), req.secret)}) after ${attempts} attempt(s). Is the server running, and is baseURL right?`,
          { model: req.model, attempts, cause: error },
        );
      }
      await sleepOrAbort(sleep, delay, req);
      continue;
    }
    if (response.ok) {
      watchdog.touch();
      return { response, attempts, watchdog };
    }
    let text = '';
    try {
      text = await response.text();
    } catch (error) {
      if (req.signal?.aborted) throw abortedError(req.model, error);
    } finally {
      watchdog.dispose();
    }
    const retryable = isRetryableStatus(response.status) && attempts <= maxRetries;
    const delay = retryable ? retryDelay(attempts, response.headers, retry) : undefined;
    if (delay === undefined) {
      const asked = retryable ? retryAfterMs(response.headers, retry.now ?? Date.now) : undefined;
      throw statusError(req, response.status, text, response.headers, attempts, asked);
    }
    await sleepOrAbort(sleep, delay, req);
  }
}

async function sleepOrAbort(
  sleep: NonNullable<RetryOptions['sleep']>,
  ms: number,
  req: PostRequest,
): Promise<void> {
  try {
    await sleep(ms, req.signal);
  } catch (error) {
    if (req.signal?.aborted) throw abortedError(req.model, error);
    throw error;
  }
  if (req.signal?.aborted) throw abortedError(req.model, req.signal.reason);
}
