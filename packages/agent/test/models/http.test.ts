import { describe, expect, it } from 'vitest';
import { retryAfterMs, retryDelay } from '../../src/models/http';

const headers = (h: Record<string, string>) => new Headers(h);

describe('retryDelay', () => {
  it('doubles from baseDelayMs up to maxDelayMs, with jitter in [half, full]', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, undefined, { ...opts, random: () => 0 }))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, undefined, { ...opts, random: () => 0.999999 }))).toEqual(
      [100, 200, 400, 800, 1000],
    );
  });

  it('uses retry-after (seconds, date) and retry-after-ms as given, without jitter', () => {
    expect(retryDelay(1, headers({ 'retry-after': '3' }), { random: () => 0 })).toBe(3000);
    expect(retryDelay(1, headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    const now = () => Date.parse('2026-01-01T00:00:00Z');
    expect(retryDelay(1, headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), { now })).toBe(5000);
  });

  it('gives up (undefined) when retry-after exceeds maxRetryAfterMs', () => {
    expect(retryDelay(1, headers({ 'retry-after': '120' }), { maxRetryAfterMs: 60_000 })).toBeUndefined();
  });

  it('ignores unreadable retry-after values', () => {
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), Date.now)).toBeUndefined();
    expect(retryAfterMs(headers({}), Date.now)).toBeUndefined();
  });
});
