import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../src/vitest';
import { fakeClock, waitFor } from '../src/wait';

describe('fakeClock', () => {
  it('fires due timers in due order on advance, including ones scheduled while firing', () => {
    const clock = fakeClock({ start: 100 });
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 5);
    }, 10);
    const cleared = clock.setTimeout(() => fired.push('never'), 15);
    clock.clearTimeout(cleared);
    expect(clock.pending).toBe(2);
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(100);
    expect(fired).toEqual(['a@110', 'c@115', 'b@120']);
    expect(clock.now()).toBe(209);
    expect(clock.pending).toBe(0);
  });

  it('set never moves time backwards', () => {
    const clock = fakeClock({ start: 50 });
    clock.set(10);
    expect(clock.now()).toBe(50);
    clock.set(70);
    expect(clock.now()).toBe(70);
  });

  it('auto: each timer fires by itself on the next turn, at its due time', async () => {
    const clock = fakeClock({ auto: true });
    const at: number[] = [];
    const done = new Promise<void>((resolve) => {
      clock.setTimeout(() => {
        at.push(clock.now());
        clock.setTimeout(() => {
          at.push(clock.now());
          resolve();
        }, 1000);
      }, 500);
    });
    await done;
    expect(at).toEqual([500, 1500]);
  });

  it('drives waitFor without sleeping: a timeout after 10 s of fake time', async () => {
    const clock = fakeClock({ auto: true });
    await expect(waitFor(() => false, { clock, timeoutMs: 10_000, message: 'never' })).rejects.toMatchObject({
      code: 'WAIT_TIMEOUT',
    });
    expect(clock.now()).toBe(10_000);
  });
});

describe('tempDir', () => {
  let first = '';
  it('creates a fresh directory for the test', () => {
    first = tempDir('wave-testkit-');
    writeFileSync(join(first, 'f'), 'x');
    expect(existsSync(join(first, 'f'))).toBe(true);
    expect(tempDir('wave-testkit-')).not.toBe(first);
  });

  it('removed it when the test finished', () => {
    expect(first).not.toBe('');
    expect(existsSync(first)).toBe(false);
  });
});

describe('tempDir in beforeEach', () => {
  let dir = '';
  const seen: string[] = [];
  beforeEach(() => {
    dir = tempDir('wave-testkit-each-');
    seen.push(dir);
  });

  it('is there during the test', () => {
    expect(existsSync(dir)).toBe(true);
  });

  it('the one of the previous test is gone', () => {
    expect(seen).toHaveLength(2);
    expect(existsSync(seen[0] as string)).toBe(false);
    expect(existsSync(dir)).toBe(true);
  });
});
