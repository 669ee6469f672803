import type { Clock as ReaperClock } from '@wave/proc-reaper';

/**
 * Time source and timers, injected everywhere a timer is used so tests can
 * drive time by hand (fake timers, no sleeping). The shape is
 * @wave/proc-reaper's `Clock`; here `now()` is milliseconds since the epoch.
 */
export type Clock = ReaperClock;

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
