/**
 * The connection limit without thrash: a server closed to make room is not
 * due for the next ensureConnected(); it is dialed on demand (a call or
 * connect()).
 */
import { describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import { fakePoolHarness, server } from './helpers';

const makePool = fakePoolHarness();

describe('eviction at the connection limit', () => {
  it('5 servers, maxConnections 4, 8 turns after connect() of the 5th: no respawn churn, no SERVER_NOT_CONNECTED', async () => {
    const servers = ['s0', 's1', 's2', 's3', 's4'].map((n) => server(n));
    const { pool, fake, clock } = makePool({}, { servers, limits: { maxConnections: 4 } });
    await pool.ensureConnected();
    expect(pool.get('s4')?.error?.code).toBe('CONNECTION_LIMIT');
    await clock.advance(10);
    expect((await pool.connect('s4')).status).toBe('connected');
    const dialsBefore = fake.dialed.length;
    const failures: string[] = [];
    for (let turn = 0; turn < 8; turn++) {
      await clock.advance(10);
      await pool.ensureConnected();
      const connected = pool.list().filter((r) => r.status === 'connected');
      expect(connected).toHaveLength(4);
      for (const r of connected) {
        await pool.callTool(r.name, 'echo', { text: 'x' }).catch((err: unknown) => {
          failures.push(err instanceof McpPoolError ? err.code : String(err));
        });
      }
    }
    expect(failures).toEqual([]);
    expect(fake.dialed.length).toBe(dialsBefore);
    expect(fake.handles.filter((h) => h.terminated)).toHaveLength(1);
    expect(pool.hasPendingDials()).toBe(false);
  });

  it('an evicted server is dialed on demand by a call (making room again) and the call succeeds', async () => {
    const servers = ['a', 'b', 'c'].map((n) => server(n));
    const { pool, fake, clock } = makePool({}, { servers, limits: { maxConnections: 2 } });
    await pool.connect('a');
    await clock.advance(10);
    await pool.connect('b');
    await clock.advance(10);
    await pool.connect('c'); // evicts a
    expect(pool.get('a')?.status).toBe('disconnected');
    expect(pool.get('a')?.manuallyDisconnected).toBe(false);
    await pool.ensureConnected();
    expect(pool.get('a')?.status).toBe('disconnected');
    const r = await pool.callTool('a', 'echo', { text: 'back' });
    expect(r.content).toEqual([{ type: 'text', text: 'back' }]);
    expect(pool.get('a')?.status).toBe('connected');
    expect(fake.dialed).toEqual(['a', 'b', 'c', 'a']);
    // b was the least recently used: it made room.
    expect(pool.get('b')?.status).toBe('disconnected');
  });
});
