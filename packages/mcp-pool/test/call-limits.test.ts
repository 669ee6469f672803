import { describe, expect, it } from 'vitest';
import type { McpPoolError } from '../src/errors';
import { fakePoolHarness, flush, sdkTimers, server } from './helpers';

const makePool = fakePoolHarness();

function rejection(p: Promise<unknown>): Promise<McpPoolError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: McpPoolError) => e,
  );
}

describe('call limits with onProgress (fake clock)', () => {
  it('progress restarts the idle limit; the call finishes long after timeoutMs', async () => {
    const { pool, clock, fake } = makePool({}, { servers: [server('a')] });
    await pool.ensureConnected();
    const seen: number[] = [];
    const p = pool.callTool('a', 'wait', {}, { timeoutMs: 1_000, onProgress: (x) => seen.push(x.progress) });
    await flush();
    expect(seen).toEqual([1]);
    const h = fake.last('a')!;
    for (let i = 2; i <= 5; i++) {
      await clock.advance(900);
      await h.progress(i);
      await flush();
    }
    // 3.6 s in, 4 x the idle limit, and still running.
    await clock.advance(900);
    h.waitGate.resolve();
    expect((await p).content).toEqual([{ type: 'text', text: 'waited' }]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(h.cancelled).toBe(0);
  });

  it('no progress within timeoutMs: CALL_TIMEOUT naming the idle limit, the server is told to cancel', async () => {
    const { pool, clock, fake } = makePool({}, { servers: [server('a')] });
    await pool.ensureConnected();
    const e = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 1_000, onProgress: () => {} }));
    await flush();
    await clock.advance(999);
    await fake.last('a')!.progress(2);
    await clock.advance(999);
    await clock.advance(1);
    const err = await e;
    expect(err.code).toBe('CALL_TIMEOUT');
    expect(err.message).toMatch(/reported no progress on "wait" for 1000 ms/);
    await flush();
    expect(fake.last('a')?.cancelled).toBe(1);
  });

  it('the absolute limit ends the call however much progress it reports', async () => {
    const { pool, clock, fake } = makePool(
      {},
      { servers: [server('a')], timeouts: { callMaxTotalMs: 2_500 } },
    );
    await pool.ensureConnected();
    const e = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 1_000, onProgress: () => {} }));
    await flush();
    const h = fake.last('a')!;
    for (let i = 2; i <= 3; i++) {
      await clock.advance(800);
      await h.progress(i);
    }
    await clock.advance(899); // 2499 ms
    await h.progress(4);
    await clock.advance(1);
    const err = await e;
    expect(err.code).toBe('CALL_TIMEOUT');
    expect(err.message).toMatch(/did not finish "wait" within 2500 ms in all/);
  });

  it('the call option maxTotalMs wins over the pool default', async () => {
    const { pool, clock } = makePool({}, { servers: [server('a')] });
    await pool.ensureConnected();
    const e = rejection(
      pool.callTool('a', 'wait', {}, { timeoutMs: 10_000, maxTotalMs: 300, onProgress: () => {} }),
    );
    await flush();
    await clock.advance(300);
    expect((await e).message).toMatch(/300 ms in all/);
  });

  it('without onProgress, progress-free calls keep the plain total timeout (no progress token sent)', async () => {
    const { pool, fake } = makePool({}, { servers: [server('a')] });
    const clock = sdkTimers();
    await pool.ensureConnected();
    const e = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 1_000 }));
    await flush();
    await expect(fake.last('a')!.progress(1)).rejects.toThrow(/no wait call asked for progress/);
    await clock.advance(1_000);
    expect((await e).message).toMatch(/did not answer "wait" within 1000 ms/);
  });
});
