import { TestkitError } from './errors';

/** Time source for helpers with timers; tests may pass a fake one. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. Reads the globals at call time, so `vi.useFakeTimers()` applies. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /**
   * Give up after this many milliseconds. Generous, because tests run on busy
   * machines: a process may take seconds to start there.
   * @default 30000
   */
  timeoutMs?: number;
  /** Pause between two polls. @default 25 */
  intervalMs?: number;
  /** What is being waited for, used in the timeout message. @default 'condition' */
  message?: string;
  /** Time source. @default systemClock */
  clock?: Clock;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `predicate` until it returns a truthy value (or a promise of one) and
 * resolves with that value. A predicate that throws counts as "not yet"; its
 * last error is quoted if the wait times out. Rejects with a `TestkitError`
 * of code `WAIT_TIMEOUT` after `timeoutMs`. The predicate runs at once first.
 */
export function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Truthy<T>> {
  const { timeoutMs = 30_000, intervalMs = 25, message = 'condition', clock = systemClock } = options;
  const deadline = clock.now() + timeoutMs;
  return new Promise<Truthy<T>>((resolve, reject) => {
    let lastError: unknown;
    const poll = async (): Promise<void> => {
      try {
        const value = await predicate();
        if (value) return resolve(value as Truthy<T>);
      } catch (error) {
        lastError = error;
      }
      if (clock.now() >= deadline) {
        const cause =
          lastError === undefined
            ? ''
            : `; last error: ${String((lastError as Error)?.message ?? lastError)}`;
        return reject(
          new TestkitError('WAIT_TIMEOUT', `waitFor: ${message} not met within ${timeoutMs} ms${cause}`, {
            cause: lastError,
          }),
        );
      }
      clock.setTimeout(() => void poll(), Math.max(0, Math.min(intervalMs, deadline - clock.now())));
    };
    void poll();
  });
}

/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T | PromiseLike<T>): void;
  reject(reason?: unknown): void;
  /** True once resolve or reject was called. */
  readonly settled: boolean;
}

/** Creates a {@link Deferred}. Calls after the first resolve/reject are ignored. */
export function deferred<T = void>(): Deferred<T> {
  let settled = false;
  let res!: (value: T | PromiseLike<T>) => void;
  let rej!: (reason?: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    res = resolve;
    rej = reject;
  });
  return {
    promise,
    resolve(value) {
      settled = true;
      res(value);
    },
    reject(reason) {
      settled = true;
      rej(reason);
    },
    get settled() {
      return settled;
    },
  };
}

/**
 * A gate for race tests: code under test parks on `wait()`; the test learns
 * that it got there with `whenArrived(n)` and lets everyone through with `open()`.
 */
export interface Gate {
  /** Resolves once the gate is open (at once if it already is). */
  wait(): Promise<void>;
  /** Opens the gate for good; idempotent. */
  open(): void;
  readonly isOpen: boolean;
  /** How many `wait()` calls have been made so far. */
  readonly arrived: number;
  /** Resolves once `wait()` has been called at least `n` times (default 1). */
  whenArrived(n?: number): Promise<void>;
}

/** Creates a closed {@link Gate}. */
export function gate(): Gate {
  const opened = deferred<void>();
  let arrived = 0;
  const watchers: { n: number; done: Deferred<void> }[] = [];
  return {
    wait() {
      arrived += 1;
      for (const w of watchers.filter((x) => x.n <= arrived)) {
        w.done.resolve();
        watchers.splice(watchers.indexOf(w), 1);
      }
      return opened.promise;
    },
    open() {
      opened.resolve();
    },
    get isOpen() {
      return opened.settled;
    },
    get arrived() {
      return arrived;
    },
    whenArrived(n = 1) {
      if (arrived >= n) return Promise.resolve();
      const done = deferred<void>();
      watchers.push({ n, done });
      return done.promise;
    },
  };
}

/** A {@link Clock} that only moves when the test says so. */
export interface FakeClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer that falls due, in due
   * order (a timer scheduled by a firing timer fires too if it is due).
   */
  advance(ms: number): void;
  /** Sets the current time (never backwards) and fires what falls due, as {@link FakeClock.advance}. */
  set(now: number): void;
  /** How many timers are scheduled and not yet fired or cleared. */
  readonly pending: number;
}

/** Options of {@link fakeClock}. */
export interface FakeClockOptions {
  /** Time at the start, in ms. @default 0 */
  start?: number;
  /**
   * Fire each timer by itself on the next turn of the event loop, moving time
   * to its due time: code that sleeps on the clock (lock retries, backoff)
   * runs through its waits at once without the test calling `advance`.
   * @default false
   */
  auto?: boolean;
}

/**
 * Creates a {@link FakeClock}. Timers fire only from `advance`/`set`,
 * synchronously (or, with `auto`, each on the next turn), so tests never sleep.
 */
export function fakeClock(options: FakeClockOptions = {}): FakeClock {
  const { start = 0, auto = false } = options;
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; seq: number; fn: () => void }>();
  const fireDue = (until: number) => {
    for (;;) {
      let next: [number, { at: number; seq: number; fn: () => void }] | undefined;
      for (const entry of timers) {
        if (entry[1].at > until) continue;
        if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) {
          next = entry;
        }
      }
      if (!next) break;
      timers.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].fn();
    }
    now = Math.max(now, until);
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      seq += 1;
      const id = seq;
      const at = now + Math.max(0, ms);
      timers.set(id, { at, seq: id, fn });
      if (auto) setImmediate(() => timers.has(id) && fireDue(Math.max(now, at)));
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      fireDue(now + ms);
    },
    set(value) {
      fireDue(Math.max(now, value));
    },
    get pending() {
      return timers.size;
    },
  };
}

/**
 * Freezes a value and everything reachable from it (symbol keys too), so a
 * test proves that a function does not mutate its input: any write throws in
 * strict mode. Returns the value.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}
