import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RECONNECT, resolveReconnectOptions } from '../src/backoff';

const o = resolveReconnectOptions({ initialDelayMs: 100, maxDelayMs: 1000, factor: 2, maxAttempts: 5 });

describe('backoffDelay (full jitter)', () => {
  it.each([
    // attempt, random, expected
    [0, 0, 0],
    [0, 0.5, 50],
    [0, 0.999, 99],
    [1, 0.5, 100],
    [2, 0.5, 200],
    [3, 0.5, 400],
    [4, 0.5, 500], // cap 1000
    [10, 0.5, 500],
    [1000, 0.5, 500], // overflow guarded
    [-1, 0.5, 50],
    [0, 1.5, 100], // random clamped
    [0, -1, 0],
  ])('attempt %i, random %f -> %i ms', (attempt, random, expected) => {
    expect(backoffDelay(attempt, o, () => random)).toBe(expected);
  });

  it('never exceeds the cap for the attempt', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const cap = Math.min(o.maxDelayMs, o.initialDelayMs * o.factor ** attempt);
      for (let i = 0; i < 50; i++) {
        const d = backoffDelay(attempt, o, Math.random);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(cap + 1);
      }
    }
  });
});

describe('resolveReconnectOptions', () => {
  it.each([
    [{}, DEFAULT_RECONNECT],
    [{ maxAttempts: 0 }, { ...DEFAULT_RECONNECT, maxAttempts: 0 }],
    [{ maxAttempts: -3, factor: 0.5, initialDelayMs: Number.NaN }, DEFAULT_RECONNECT],
    [{ maxAttempts: 2.7 }, { ...DEFAULT_RECONNECT, maxAttempts: 2 }],
  ])('%o -> %o', (input, expected) => {
    expect(resolveReconnectOptions(input)).toEqual(expected);
  });
});
