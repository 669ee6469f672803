import type { Clock } from '../src/clock';
import { countingClock } from './helpers';

/**
 * The real clock, except that timers of exactly `holdMs` never fire on their
 * own: the test fires them when the event it waits for has happened. So a
 * timeout that is part of what a test checks starts counting only once the
 * fixture is known to be up, however loaded the machine is.
 */
export function heldClock(holdMs: number): Clock & { pending(): number; held(): number; fireHeld(): void } {
  const base = countingClock();
  const held = new Map<object, () => void>();
  return {
    now: () => base.now(),
    setTimeout(fn, ms) {
      if (ms !== holdMs) return base.setTimeout(fn, ms);
      const h = {};
      held.set(h, fn);
      return h;
    },
    clearTimeout(h) {
      if (typeof h === 'object' && h !== null && held.delete(h)) return;
      base.clearTimeout(h);
    },
    pending: () => base.pending() + held.size,
    held: () => held.size,
    fireHeld() {
      const fns = [...held.values()];
      held.clear();
      for (const fn of fns) fn();
    },
  };
}
