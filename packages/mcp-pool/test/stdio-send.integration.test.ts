import { randomUUID } from 'node:crypto';
import { findProcessesByMarker, isPidAlive, killPids } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { isMcpPoolError } from '../src/errors';
import { TrackedStdioTransport } from '../src/stdio-transport';

const transports: TrackedStdioTransport[] = [];
let ns = '';

afterEach(async () => {
  for (const t of transports.splice(0)) await t.close();
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

describe.runIf(process.platform !== 'win32')('TrackedStdioTransport.send under backpressure', () => {
  it('a send waiting for the pipe to drain settles when the server dies instead of hanging', async () => {
    ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:send-${randomUUID().slice(0, 8)}`;
    // A "server" that never reads its stdin, so the pipe fills up.
    const t = new TrackedStdioTransport({
      command: 'sleep',
      args: ['1000'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      markerNamespace: ns,
      killGraceMs: 200,
    });
    transports.push(t);
    t.onerror = () => {};
    await t.start();
    const big = {
      jsonrpc: '2.0' as const,
      method: 'notifications/message',
      params: { data: 'x'.repeat(64 * 1024) },
    };
    // Fill the pipe until a send has to wait for 'drain'.
    const pending: Promise<void>[] = [];
    let waiting: Promise<'settled' | 'pending'> | undefined;
    for (let i = 0; i < 64 && waiting === undefined; i++) {
      const p = t.send(big);
      pending.push(p.catch(() => {}));
      const state = await Promise.race([
        p.then(
          () => 'settled' as const,
          () => 'settled' as const,
        ),
        new Promise<'pending'>((r) => setImmediate(() => r('pending'))),
      ]);
      if (state === 'pending')
        waiting = p.then(
          () => 'settled' as const,
          () => 'settled' as const,
        );
    }
    expect(waiting).toBeDefined();
    // The server goes away (killed from outside), the pipe breaks.
    killPids([t.pid!]);
    const outcome = await Promise.race([
      waiting!,
      new Promise<'pending'>((r) => setTimeout(() => r('pending'), 30_000).unref()),
    ]);
    expect(outcome).toBe('settled');
    await Promise.all(pending);
  });

  it('starting a transport twice is a typed programming error (INVALID_STATE), and the first process lives on', async () => {
    ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:twice-${randomUUID().slice(0, 8)}`;
    const t = new TrackedStdioTransport({
      command: 'sleep',
      args: ['1000'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      markerNamespace: ns,
      killGraceMs: 200,
      serverName: 'twice',
    });
    transports.push(t);
    t.onerror = () => {};
    await t.start();
    const err = await t.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isMcpPoolError(err, 'INVALID_STATE')).toBe(true);
    expect(err).toMatchObject({ server: 'twice' });
    expect(isPidAlive(t.pid!)).toBe(true);
  });
});
