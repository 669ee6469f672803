/**
 * Time source and timers, injected everywhere a timer is used so tests can
 * drive time by hand (fake timers, no sleeping).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Schedule `fn` after `ms` milliseconds; returns a handle for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancel a timer; unknown or already-fired handles are ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock. Timers are `unref`'d: a pool's idle and retry timers never
 * keep a host process alive. Globals are looked up at call time, so
 * `vi.useFakeTimers()` applies to it too.
 */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (fn, ms) => {
      const handle = globalThis.setTimeout(fn, Math.max(0, Math.min(ms, 2_147_483_647)));
      (handle as { unref?: () => void }).unref?.();
      return handle;
    },
    clearTimeout: (handle) => {
      globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]);
    },
  };
}
