import { describe, expect, it } from 'vitest';
import { deferred, fakePoolHarness, flush, server } from './helpers';

const setup = fakePoolHarness({ shared: true });

describe('shared pool leases', () => {
  it('two agents with the same server (same fingerprint) share one connection', async () => {
    const { pool, fake } = setup();
    expect(pool.shared).toBe(true);
    const a = pool.lease('agent-a', [server('mem')]);
    const b = pool.lease('agent-b', [
      server('memory-alias', { args: ['mem'] }, { fingerprint: server('mem').fingerprint }),
    ]);
    expect(fake.dialed).toEqual([]);
    await Promise.all([a.ensureConnected(), b.ensureConnected()]);
    expect(fake.dialed).toEqual(['mem']);
    expect(a.get('mem')?.status).toBe('connected');
    expect(b.get('memory-alias')?.status).toBe('connected');
    expect(a.get('mem')?.pid).toBe(b.get('memory-alias')?.pid);
    expect((await b.callTool('memory-alias', 'echo', { text: 'b' })).content).toEqual([
      { type: 'text', text: 'b' },
    ]);
    expect(pool.liveConnections).toBe(1);
  });

  it('different fingerprints (e.g. other workdir) get separate connections', async () => {
    const { pool, fake } = setup();
    const a = pool.lease('a', [server('x', {}, { fingerprint: 'fp-1' })]);
    const b = pool.lease('b', [server('x', {}, { fingerprint: 'fp-2' })]);
    await a.ensureConnected();
    await b.ensureConnected();
    expect(fake.dialed).toEqual(['x', 'x']);
    expect(pool.liveConnections).toBe(2);
  });

  it("one agent's manual disconnect affects only its own view", async () => {
    const { pool, fake } = setup();
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    await a.ensureConnected();
    await b.ensureConnected();
    const rec = await a.disconnect('s');
    expect(rec).toMatchObject({ status: 'disconnected', manuallyDisconnected: true });
    expect(b.get('s')?.status).toBe('connected');
    expect(fake.last('s')?.terminated).toBe(false);
    expect((await a.callTool('s', 'echo').catch((e) => e)).code).toBe('SERVER_NOT_CONNECTED');
    // Sticky for a, not revived by its ensureConnected.
    await a.ensureConnected();
    expect(a.get('s')?.status).toBe('disconnected');
    // Once b disconnects too, nobody uses it: closed at once.
    await b.disconnect('s');
    expect(fake.last('s')?.terminated).toBe(true);
    // a's connect dials again, b stays disconnected (its own manual flag).
    expect((await a.connect('s')).status).toBe('connected');
    expect(b.get('s')?.status).toBe('disconnected');
    expect(fake.dialed).toEqual(['s', 's']);
  });

  it('released leases keep the connection until the last one is gone, then it closes after idle', async () => {
    const { pool, fake, clock } = setup({}, { timeouts: { idleMs: 1_000 } });
    const a = pool.lease('a', [server('k', { lifecycle: 'keep-alive' })]);
    const b = pool.lease('b', [server('k', { lifecycle: 'keep-alive' })]);
    await a.ensureConnected();
    await b.ensureConnected();
    await a.destroy();
    await clock.advance(10_000);
    expect(b.get('k')?.status).toBe('connected');
    expect(fake.last('k')?.terminated).toBe(false);
    await b.destroy();
    expect(fake.last('k')?.terminated).toBe(false);
    await clock.advance(999);
    expect(fake.last('k')?.terminated).toBe(false);
    await clock.advance(1);
    expect(fake.last('k')?.terminated).toBe(true);
    expect(pool.liveConnections).toBe(0);
  });

  it('a new lease during the release idle window reuses the connection', async () => {
    const { pool, fake, clock } = setup({}, { timeouts: { idleMs: 1_000 } });
    const a = pool.lease('a', [server('s')]);
    await a.ensureConnected();
    await a.destroy();
    await clock.advance(500);
    const b = pool.lease('b', [server('s')]);
    await b.ensureConnected();
    expect(fake.dialed).toEqual(['s']);
    expect(b.get('s')?.status).toBe('connected');
  });

  it('a released lease refuses calls, and its calls after release start nothing', async () => {
    const { pool, fake } = setup();
    const a = pool.lease('a', [server('s')]);
    await a.destroy();
    await a.destroy();
    await a.ensureConnected();
    expect(fake.dialed).toEqual([]);
    expect((await a.connect('s').catch((e) => e)).code).toBe('POOL_DESTROYED');
    expect((await a.callTool('s', 'echo').catch((e) => e)).code).toBe('POOL_DESTROYED');
  });

  it('destroying the shared pool kills every connection, leases become destroyed', async () => {
    const gate = deferred();
    const { pool, fake } = setup({ slow: { gate: gate.promise } });
    const a = pool.lease('a', [server('s'), server('slow')]);
    const b = pool.lease('b', [server('t')]);
    const ensure = a.ensureConnected();
    await b.ensureConnected();
    await flush();
    const destroyed = pool.destroy();
    gate.resolve();
    await destroyed;
    await ensure;
    expect(fake.handles.every((h) => h.terminated)).toBe(true);
    expect(a.destroyed).toBe(true);
    expect(b.list().every((r) => r.status === 'disconnected')).toBe(true);
    expect(() => pool.lease('c', [])).toThrow(expect.objectContaining({ code: 'POOL_DESTROYED' }));
  });

  it("a failed automatic dial is not retried by another agent's ensureConnected; connect() retries for all", async () => {
    const { pool, fake } = setup({ s: { fail: new Error('down') } });
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    await a.ensureConnected();
    await b.ensureConnected();
    expect(fake.dialed).toEqual(['s']);
    expect(b.get('s')?.status).toBe('error');
    fake.behaviors.s = {};
    await b.connect('s');
    expect(a.get('s')?.status).toBe('connected');
  });

  it('update() in one lease closes the old connection only when nobody else uses it', async () => {
    const { pool, fake } = setup();
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    await a.ensureConnected();
    await b.ensureConnected();
    const shared = fake.last('s')!;
    await a.update([server('s', { args: ['v2'] })]);
    expect(shared.terminated).toBe(false);
    expect(a.get('s')?.status).toBe('disconnected');
    await a.ensureConnected();
    expect(pool.liveConnections).toBe(2);
    await b.update([]);
    expect(shared.terminated).toBe(true);
    expect(b.list()).toEqual([]);
  });

  it('each lease has its own onChange version sequence', async () => {
    const { pool } = setup();
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    const va: number[] = [];
    const vb: number[] = [];
    a.onChange((s) => va.push(s.version));
    b.onChange((s) => vb.push(s.version));
    await a.ensureConnected();
    await flush();
    expect(va.length).toBeGreaterThan(0);
    expect(vb.length).toBeGreaterThan(0);
    for (const v of [va, vb]) for (let i = 1; i < v.length; i++) expect(v[i]).toBeGreaterThan(v[i - 1]!);
  });
});

describe('lease bookkeeping', () => {
  it('a released lease gets one last all-disconnected snapshot, then nothing more', async () => {
    const { pool } = setup();
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    await a.ensureConnected();
    const snaps: string[][] = [];
    a.onChange((s) => snaps.push(s.servers.map((r) => r.status)));
    await a.destroy();
    expect(snaps.at(-1)).toEqual(['disconnected']);
    const n = snaps.length;
    await b.ensureConnected();
    await b.disconnect('s');
    await flush();
    expect(snaps.length).toBe(n);
  });
});

describe('review: released slots', () => {
  it('a server that failed for a released lease is due again for a new lease (no stale error kept)', async () => {
    const { pool, fake } = setup({ s: { fail: new Error('down') } });
    const a = pool.lease('a', [server('s')]);
    await a.ensureConnected();
    expect(a.get('s')?.status).toBe('error');
    await a.destroy();
    fake.behaviors.s = {};
    const b = pool.lease('b', [server('s')]);
    expect(b.get('s')?.status).toBe('disconnected');
    await b.ensureConnected();
    expect(b.get('s')?.status).toBe('connected');
    expect(fake.dialed).toEqual(['s', 's']);
  });

  it('a dial that fails after its only lease was released leaves nothing for the next lease', async () => {
    const gate = deferred();
    const { pool, fake } = setup({ s: { gate: gate.promise, fail: new Error('down') } });
    const a = pool.lease('a', [server('s')]);
    const ensure = a.ensureConnected();
    await flush();
    await a.destroy();
    gate.resolve();
    await ensure;
    await flush();
    fake.behaviors.s = {};
    const b = pool.lease('b', [server('s')]);
    expect(b.get('s')?.status).toBe('disconnected');
    await b.ensureConnected();
    expect(b.get('s')?.status).toBe('connected');
  });

  it('releasing the last lease of a reconnecting server stops the reconnection at once', async () => {
    const { pool, fake, clock } = setup({ h: { kind: 'http' } });
    const a = pool.lease('a', [server('h', { url: 'http://127.0.0.1:9/mcp' })]);
    await a.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    expect(a.get('h')?.status).toBe('reconnecting');
    await a.destroy();
    expect(clock.pending()).toBe(0);
    await clock.advance(120_000);
    expect(fake.dialed).toEqual(['h']);
  });
});

describe('releasing the last lease while its server is still being dialed', () => {
  it('abandons the dial at once (tree killed, no error, no idle wait); a new lease dials it again', async () => {
    const init = deferred();
    const { pool, fake, clock } = setup({ s: { holdInit: init.promise } }, { timeouts: { idleMs: 600_000 } });
    const a = pool.lease('a', [server('s')]);
    const ensure = a.ensureConnected();
    await flush();
    expect(a.get('s')?.status).toBe('connecting');
    const dialing = fake.last('s')!;
    expect(dialing.terminated).toBe(false);
    await a.destroy();
    // Killed when destroy() settles: no idle window for a connection nobody will use.
    expect(dialing.terminated).toBe(true);
    await ensure;
    // The server answers only now: nothing comes back to life.
    init.resolve();
    await flush();
    expect(fake.open()).toEqual([]);
    expect(pool.liveConnections).toBe(0);
    expect(clock.pending()).toBe(0);
    // Not sticky, not failed: the next lease dials it on demand.
    fake.behaviors.s = {};
    const b = pool.lease('b', [server('s')]);
    expect(b.get('s')).toMatchObject({ status: 'disconnected', manuallyDisconnected: false });
    expect(b.get('s')?.error).toBeUndefined();
    expect(b.hasPendingDials()).toBe(true);
    await b.ensureConnected();
    expect(b.get('s')?.status).toBe('connected');
    expect(fake.dialed).toEqual(['s', 's']);
  });

  it('a transport the factory hands over after the release is closed at once', async () => {
    const gate = deferred();
    const { pool, fake } = setup({ s: { gate: gate.promise } }, { timeouts: { idleMs: 600_000 } });
    const a = pool.lease('a', [server('s')]);
    const ensure = a.ensureConnected();
    await flush();
    await a.destroy();
    gate.resolve();
    await ensure;
    await flush();
    expect(fake.handles).toHaveLength(1);
    expect(fake.last('s')?.terminated).toBe(true);
    expect(pool.liveConnections).toBe(0);
  });

  it('another lease waiting on the same dial still gets its connection', async () => {
    const init = deferred();
    const { pool, fake } = setup({ s: { holdInit: init.promise } }, { timeouts: { idleMs: 600_000 } });
    const a = pool.lease('a', [server('s')]);
    const b = pool.lease('b', [server('s')]);
    const ensureA = a.ensureConnected();
    const ensureB = b.ensureConnected();
    await flush();
    await a.destroy();
    expect(fake.last('s')?.terminated).toBe(false);
    expect(b.get('s')?.status).toBe('connecting');
    init.resolve();
    await Promise.all([ensureA, ensureB]);
    expect(b.get('s')?.status).toBe('connected');
    expect((await b.callTool('s', 'echo', { text: 'b' })).content).toEqual([{ type: 'text', text: 'b' }]);
    expect(fake.dialed).toEqual(['s']);
  });

  it('a connection that was up when its last lease was released still waits out the idle window', async () => {
    const { pool, fake, clock } = setup({}, { timeouts: { idleMs: 1_000 } });
    const a = pool.lease('a', [server('s')]);
    await a.ensureConnected();
    await a.destroy();
    expect(fake.last('s')?.terminated).toBe(false);
    await clock.advance(1_000);
    expect(fake.last('s')?.terminated).toBe(true);
  });
});
