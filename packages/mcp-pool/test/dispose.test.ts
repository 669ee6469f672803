import { describe, expect, it } from 'vitest';
import { McpPool } from '../src/pool';
import { FakeClock, fakeFactory, server } from './helpers';

function parts() {
  const clock = new FakeClock();
  const fake = fakeFactory({});
  const opts = { transportFactory: fake.factory, clock, random: () => 0.5 };
  return { clock, fake, opts };
}

describe('Symbol.asyncDispose', () => {
  it('`await using pool` destroys the pool at the end of the block: nothing open, no timer', async () => {
    const { clock, fake, opts } = parts();
    let seen: McpPool | undefined;
    {
      await using pool = McpPool.create({ ...opts, servers: [server('a')] });
      seen = pool;
      await pool.ensureConnected();
      expect(fake.open()).toHaveLength(1);
      expect(pool.destroyed).toBe(false);
    }
    expect(seen?.destroyed).toBe(true);
    expect(fake.open()).toEqual([]);
    expect(clock.pending()).toBe(0);
  });

  it('`await using lease` releases only the lease; the shared pool and its other leases go on', async () => {
    const { fake, opts } = parts();
    const pool = McpPool.create({ ...opts, shared: true });
    const other = pool.lease('b', [server('s')]);
    await other.ensureConnected();
    {
      await using lease = pool.lease('a', [server('s')]);
      await lease.ensureConnected();
      expect(lease.destroyed).toBe(false);
      expect(fake.dialed).toEqual(['s']);
    }
    expect(pool.destroyed).toBe(false);
    expect(other.get('s')?.status).toBe('connected');
    expect((await other.callTool('s', 'echo', { text: 'x' })).content).toEqual([{ type: 'text', text: 'x' }]);
    await pool[Symbol.asyncDispose]();
    expect(pool.destroyed).toBe(true);
    expect(other.destroyed).toBe(true);
    expect(fake.open()).toEqual([]);
  });

  it('disposing twice, or after destroy(), is a no-op', async () => {
    const { opts } = parts();
    const pool = McpPool.create({ ...opts, servers: [server('a')], shared: true });
    const lease = pool.lease('a', [server('a')]);
    await lease[Symbol.asyncDispose]();
    await lease[Symbol.asyncDispose]();
    await pool.destroy();
    await pool[Symbol.asyncDispose]();
    expect([pool.destroyed, lease.destroyed]).toEqual([true, true]);
  });
});
