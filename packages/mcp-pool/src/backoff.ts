/** Reconnection policy for http/sse servers whose connection dropped. */
export interface ReconnectOptions {
  /**
   * How many reconnection attempts before the server moves to `error`.
   * `0` disables reconnection (a drop goes straight to `error`). Attempts
   * are counted across reconnections until a connection stays up
   * `maxDelayMs`, so a server that drops every connection at once also ends
   * in `error`.
   * @default 5
   */
  maxAttempts?: number;
  /** Delay cap of the first attempt, in ms. @default 500 */
  initialDelayMs?: number;
  /** Upper bound of any delay, in ms; also how long a reconnected connection must stay up to count as recovered. @default 30000 */
  maxDelayMs?: number;
  /** Growth of the delay cap per attempt. @default 2 */
  factor?: number;
}

/** {@link ReconnectOptions} with every default filled in. */
export type ResolvedReconnectOptions = Required<ReconnectOptions>;

/** The documented defaults of {@link ReconnectOptions}. */
export const DEFAULT_RECONNECT: Readonly<ResolvedReconnectOptions> = Object.freeze({
  maxAttempts: 5,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
});

/** Fill the defaults in and clamp nonsense (negative numbers, NaN) to them. */
export function resolveReconnectOptions(opts: ReconnectOptions = {}): ResolvedReconnectOptions {
  const pick = (v: number | undefined, d: number, min: number): number =>
    typeof v === 'number' && Number.isFinite(v) && v >= min ? v : d;
  return {
    maxAttempts: Math.floor(pick(opts.maxAttempts, DEFAULT_RECONNECT.maxAttempts, 0)),
    initialDelayMs: pick(opts.initialDelayMs, DEFAULT_RECONNECT.initialDelayMs, 0),
    maxDelayMs: pick(opts.maxDelayMs, DEFAULT_RECONNECT.maxDelayMs, 0),
    factor: pick(opts.factor, DEFAULT_RECONNECT.factor, 1),
  };
}

/**
 * Exponential backoff with full jitter: a uniformly random delay in
 * `[0, min(maxDelayMs, initialDelayMs * factor^attempt))`.
 *
 * Pure: `random` is injected (`Math.random` in production, a constant in tests).
 *
 * @param attempt 0 for the first retry, 1 for the second, ...
 * @param random returns a number in `[0, 1)`
 */
export function backoffDelay(attempt: number, opts: ResolvedReconnectOptions, random: () => number): number {
  const exp = opts.initialDelayMs * opts.factor ** Math.max(0, attempt);
  const cap = Math.min(opts.maxDelayMs, Number.isFinite(exp) ? exp : opts.maxDelayMs);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * cap);
}
