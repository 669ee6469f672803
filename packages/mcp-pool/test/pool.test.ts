import { describe, expect, it } from 'vitest';
import { isMcpPoolError, McpPoolError } from '../src/errors';
import type { McpPoolOptions } from '../src/options';
import { McpPool, type PoolSnapshot } from '../src/pool';
import { deferred, FakeClock, fakeFactory, fakePoolHarness, flush, sdkTimers, server } from './helpers';

const makePool = fakePoolHarness();

function setup(servers: ReturnType<typeof server>[], behaviors = {}, opts: Partial<McpPoolOptions> = {}) {
  return makePool(behaviors, { servers, ...opts });
}

async function rejection(p: Promise<unknown>): Promise<McpPoolError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpPoolError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Settle within `ms` of real time, or fail fast (instead of hanging until the test timeout). */
function bounded<T>(p: Promise<T>, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fail = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, fail]).finally(() => clearTimeout(timer));
}

describe('creation: a pool starts no work', () => {
  it('a pool of 32 servers spawns nothing, arms no timer, lists all disconnected', () => {
    const servers = Array.from({ length: 32 }, (_, i) => server(`s${i}`));
    const { pool, clock, fake } = setup(servers);
    expect(fake.dialed).toEqual([]);
    expect(clock.pending()).toBe(0);
    const list = pool.list();
    expect(list).toHaveLength(32);
    expect(list.map((r) => r.name)).toEqual(servers.map((s) => s.name));
    for (const r of list) {
      expect(r).toMatchObject({
        status: 'disconnected',
        tools: [],
        toolsDropped: 0,
        manuallyDisconnected: false,
      });
      expect(r.pid).toBeUndefined();
    }
  });

  it('new McpPool(...) is the same as McpPool.create(...) and starts nothing', async () => {
    const fake = fakeFactory();
    const clock = new FakeClock();
    const pool = new McpPool({ servers: [server('a')], transportFactory: fake.factory, clock });
    expect(fake.dialed).toEqual([]);
    expect(pool.list()[0]?.status).toBe('disconnected');
    await pool.destroy();
    expect(clock.pending()).toBe(0);
  });

  it('duplicate names: the later definition wins, at the first position', () => {
    const { pool } = setup([server('a'), server('b'), server('a', { args: ['v2'] })]);
    expect(pool.list().map((r) => r.name)).toEqual(['a', 'b']);
    expect(pool.get('a')?.fingerprint).toBe(server('a', { args: ['v2'] }).fingerprint);
  });
});

describe('ensureConnected: dials what is due, in parallel', () => {
  it('dials every pending server in parallel and gives them their tools and instructions', async () => {
    const gates = [deferred(), deferred(), deferred()];
    const { pool, fake } = setup([server('a'), server('b'), server('c')], {
      a: { gate: gates[0]!.promise, instructions: 'line 1\nline 2' },
      b: { gate: gates[1]!.promise },
      c: { gate: gates[2]!.promise },
    });
    const done = pool.ensureConnected();
    await flush();
    // All three dials started before any finished.
    expect(fake.dialed).toEqual(['a', 'b', 'c']);
    expect(pool.list().map((r) => r.status)).toEqual(['connecting', 'connecting', 'connecting']);
    for (const g of gates) g.resolve();
    await done;
    const [a] = pool.list();
    expect(pool.list().map((r) => r.status)).toEqual(['connected', 'connected', 'connected']);
    expect(a?.tools.map((t) => t.name)).toEqual(['echo', 'wait', 'error']);
    expect(a?.instructions).toBe('line 1\nline 2');
    expect(a?.pid).toBe(fake.last('a')?.pidValue);
    expect(a?.lastConnectedAt).toBeTypeOf('number');
  });

  it('hasPendingDials() says synchronously whether ensureConnected() would dial or wait', async () => {
    const gate = deferred();
    const { pool } = setup([server('a'), server('b')], { a: { gate: gate.promise } });
    expect(pool.hasPendingDials()).toBe(true);
    const done = pool.ensureConnected();
    await flush();
    // b is connected, a is still connecting: pending.
    expect(pool.hasPendingDials()).toBe(true);
    gate.resolve();
    await done;
    expect(pool.hasPendingDials()).toBe(false);
    await pool.disconnect('a');
    // A manual disconnect is not pending.
    expect(pool.hasPendingDials()).toBe(false);
    expect(setup([]).pool.hasPendingDials()).toBe(false);
    await pool.destroy();
    expect(pool.hasPendingDials()).toBe(false);
  });

  it('fast path: nothing pending -> an already-resolved promise, no dial, no timer', async () => {
    const { pool, fake, clock } = setup([server('a')]);
    await pool.ensureConnected();
    const dials = fake.dialed.length;
    const timers = clock.pending();
    let settled = false;
    const p = pool.ensureConnected();
    void p.then(() => {
      settled = true;
    });
    // One microtask turn is enough: it awaited nothing.
    await Promise.resolve();
    expect(settled).toBe(true);
    expect(fake.dialed.length).toBe(dials);
    expect(clock.pending()).toBe(timers);
    // A pool with no servers at all takes the same path.
    const empty = setup([]).pool;
    let emptySettled = false;
    void empty.ensureConnected().then(() => {
      emptySettled = true;
    });
    await Promise.resolve();
    expect(emptySettled).toBe(true);
  });

  it('a second call while dials are in flight waits for them without dialing again', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('a')], { a: { gate: gate.promise } });
    const first = pool.ensureConnected();
    const second = pool.ensureConnected();
    await flush();
    expect(fake.dialed).toEqual(['a']);
    gate.resolve();
    await Promise.all([first, second]);
    expect(pool.get('a')?.status).toBe('connected');
  });

  it('a failed automatic dial is not retried by later calls; connect() retries it', async () => {
    const { pool, fake } = setup([server('a'), server('b')], {
      a: { fail: new McpPoolError('SPAWN_FAILED', 'MCP server "a": command not found') },
    });
    await pool.ensureConnected();
    expect(pool.get('a')).toMatchObject({ status: 'error', error: { code: 'SPAWN_FAILED' } });
    expect(pool.get('b')?.status).toBe('connected');
    await pool.ensureConnected();
    await pool.ensureConnected();
    expect(fake.dialed.filter((n) => n === 'a')).toHaveLength(1);
    fake.behaviors.a = {};
    const rec = await pool.connect('a');
    expect(rec.status).toBe('connected');
    expect(rec.error).toBeUndefined();
    expect(fake.dialed.filter((n) => n === 'a')).toHaveLength(2);
  });

  it('a failed explicit connect resolves with the error record (it does not throw)', async () => {
    const { pool } = setup([server('a')], { a: { fail: new Error('nope') } });
    const rec = await pool.connect('a');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECT_FAILED');
    expect(rec.error?.message).toContain('MCP server "a"');
    expect(rec.error?.message).toContain('nope');
  });

  it('stops waiting when its signal aborts; the dial goes on in the background', async () => {
    const gate = deferred();
    const { pool } = setup([server('a')], { a: { gate: gate.promise } });
    const ac = new AbortController();
    const p = pool.ensureConnected({ signal: ac.signal });
    ac.abort(new Error('turn cancelled'));
    await expect(p).rejects.toThrow('turn cancelled');
    gate.resolve();
    await pool.ensureConnected();
    expect(pool.get('a')?.status).toBe('connected');
    await expect(pool.ensureConnected({ signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow(
      'already',
    );
  });

  it('unknown type fails at connect time with TRANSPORT_UNKNOWN, without calling the factory', async () => {
    const s = { ...server('weird'), transport: 'websocket' };
    const { pool, fake } = setup([s]);
    expect(pool.get('weird')?.status).toBe('disconnected');
    await pool.ensureConnected();
    expect(fake.dialed).toEqual([]);
    const rec = pool.get('weird');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.code).toBe('TRANSPORT_UNKNOWN');
    expect(rec?.error?.message).toMatch(/"websocket"/);
  });
});

describe('dialing: connect timeouts and misbehaving transport factories', () => {
  it('connect timeout -> error CONNECT_TIMEOUT, connection killed', async () => {
    const { pool, fake, clock } = setup(
      [server('a', { connectTimeoutMs: 500 })],
      { a: { holdInit: new Promise(() => {}) } },
      {},
    );
    const ensure = pool.ensureConnected();
    await clock.advance(499);
    expect(pool.get('a')?.status).toBe('connecting');
    await clock.advance(1);
    await ensure;
    const rec = pool.get('a');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.code).toBe('CONNECT_TIMEOUT');
    expect(rec?.error?.message).toContain('500 ms');
    expect(fake.last('a')?.terminated).toBe(true);
  });

  it('pool-wide connect timeout applies when the server has none', async () => {
    const { pool, clock } = setup(
      [server('a')],
      { a: { holdInit: new Promise(() => {}) } },
      { timeouts: { connectMs: 50 } },
    );
    const ensure = pool.ensureConnected();
    await clock.advance(50);
    await ensure;
    expect(pool.get('a')?.error?.code).toBe('CONNECT_TIMEOUT');
  });

  it('a factory that never answers is abandoned at the connect timeout; destroy still settles', async () => {
    const { pool, clock } = setup([server('a', { connectTimeoutMs: 100 })], {
      a: { gate: new Promise(() => {}) },
    });
    const p = pool.ensureConnected();
    await clock.advance(100);
    await p;
    expect(pool.get('a')?.error?.code).toBe('CONNECT_TIMEOUT');
  });

  it('a handle that arrives after the dial was abandoned is terminated', async () => {
    const gate = deferred();
    const { pool, clock, fake } = setup([server('a', { connectTimeoutMs: 100 })], {
      a: { gate: gate.promise },
    });
    const p = pool.ensureConnected();
    await clock.advance(100);
    await p;
    gate.resolve();
    await flush();
    expect(fake.handles).toHaveLength(1);
    expect(fake.handles[0]?.terminated).toBe(true);
  });
});

describe('connect / disconnect by hand', () => {
  it('disconnect kills the connection, sticks against ensureConnected, connect undoes it', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const h = fake.last('a')!;
    const rec = await pool.disconnect('a');
    expect(rec).toMatchObject({ status: 'disconnected', manuallyDisconnected: true, tools: [] });
    expect(h.terminated).toBe(true);
    await pool.ensureConnected();
    pool.warm();
    expect(fake.dialed).toEqual(['a']);
    const again = await pool.connect('a');
    expect(again).toMatchObject({ status: 'connected', manuallyDisconnected: false });
    expect(fake.dialed).toEqual(['a', 'a']);
  });

  it('disconnect during a dial closes the dial at once and settles; the late result is closed', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('a')], { a: { gate: gate.promise } });
    const ensure = pool.ensureConnected();
    await flush();
    const rec = await pool.disconnect('a');
    expect(rec.status).toBe('disconnected');
    gate.resolve();
    await ensure;
    await flush();
    expect(pool.get('a')?.status).toBe('disconnected');
    expect(fake.handles.every((h) => h.terminated)).toBe(true);
  });

  it('disconnect while the server hangs in initialize kills it and settles', async () => {
    const { pool, fake } = setup([server('a')], { a: { holdInit: new Promise(() => {}) } });
    const ensure = pool.ensureConnected();
    await flush();
    expect(pool.get('a')?.status).toBe('connecting');
    expect(pool.get('a')?.pid).toBe(fake.last('a')?.pidValue);
    await pool.disconnect('a');
    await ensure;
    expect(fake.last('a')?.terminated).toBe(true);
    expect(pool.get('a')?.status).toBe('disconnected');
  });

  it('disconnect always settles, even when terminate throws', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const h = fake.last('a')!;
    h.terminate = () => {
      h.terminated = true;
      throw new Error('kill failed');
    };
    const rec = await pool.disconnect('a');
    expect(rec.status).toBe('disconnected');
  });

  it('disconnect always settles, even when terminate never settles (bounded wait)', async () => {
    const { pool, fake, clock } = setup([server('a')], {}, { timeouts: { killGraceMs: 100 } });
    await pool.ensureConnected();
    const h = fake.last('a')!;
    h.terminate = () => {
      h.terminated = true;
      return new Promise(() => {});
    };
    const p = pool.disconnect('a');
    await clock.advance(100 + 3_000);
    await expect(p).resolves.toMatchObject({ status: 'disconnected' });
  });

  it('disconnect/connect of an unknown server reject with UNKNOWN_SERVER naming the configured ones', async () => {
    const { pool } = setup([server('a'), server('b')]);
    const e1 = await rejection(pool.disconnect('zzz'));
    expect(e1.code).toBe('UNKNOWN_SERVER');
    expect(e1.message).toContain('a, b');
    expect((await rejection(pool.connect('zzz'))).code).toBe('UNKNOWN_SERVER');
    expect((await rejection(pool.callTool('zzz', 'echo'))).code).toBe('UNKNOWN_SERVER');
  });

  it('explicit connect while reconnecting cancels the backoff and dials now', async () => {
    const { pool, fake, clock } = setup([server('h', { url: 'http://127.0.0.1:1/mcp' })], {
      h: { kind: 'http' },
    });
    await pool.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    expect(pool.get('h')?.status).toBe('reconnecting');
    expect(clock.pending()).toBe(1);
    const rec = await pool.connect('h');
    expect(rec.status).toBe('connected');
    // Only the idle timer of the new connection is left: the retry timer is gone.
    expect(clock.delays()).toEqual([600_000]);
    expect(fake.dialed).toEqual(['h', 'h']);
  });

  it('two concurrent connect() calls share one dial', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('a')], { a: { gate: gate.promise } });
    const [p1, p2] = [pool.connect('a'), pool.connect('a')];
    await flush();
    gate.resolve();
    const [r1, r2] = await Promise.all([p1, p2]);
    expect([r1.status, r2.status]).toEqual(['connected', 'connected']);
    expect(fake.dialed).toEqual(['a']);
    expect(fake.open()).toHaveLength(1);
  });

  it('connect() while disconnect() is still killing: the old connection dies, one new one lives', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.connect('a');
    const old = fake.last('a')!;
    const slowKill = deferred();
    old.terminate = () => {
      old.terminated = true;
      return slowKill.promise.then(() => ({ pids: [], survivors: [], forced: false, ms: 0 }));
    };
    const disconnecting = pool.disconnect('a');
    const connecting = pool.connect('a');
    await flush();
    slowKill.resolve();
    await Promise.all([disconnecting, connecting]);
    expect(pool.get('a')).toMatchObject({ status: 'connected', manuallyDisconnected: false });
    expect(old.terminated).toBe(true);
    expect(fake.open()).toHaveLength(1);
    expect(fake.open()[0]).not.toBe(old);
  });

  it('disconnect() then connect() during a reconnect retry dial: the stale retry result is closed', async () => {
    const gate = deferred();
    const { pool, fake, clock } = setup([server('h', { url: 'http://127.0.0.1:9/mcp' })], {
      h: { kind: 'http' },
    });
    await pool.ensureConnected();
    fake.behaviors.h = { kind: 'http', gate: gate.promise };
    fake.last('h')!.lose();
    await clock.advance(clock.delays()[0] ?? 0);
    expect(fake.dialed).toHaveLength(2);
    await pool.disconnect('h');
    fake.behaviors.h = { kind: 'http' };
    const rec = await pool.connect('h');
    expect(rec.status).toBe('connected');
    gate.resolve();
    await flush();
    expect(fake.open()).toHaveLength(1);
    expect(pool.get('h')).toMatchObject({ status: 'connected', generation: rec.generation });
  });
});

describe('destroy', () => {
  it('is idempotent, settles, and later calls are refused without starting anything', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const [p1, p2] = [pool.destroy(), pool.destroy()];
    // The same promise: a second caller (a signal handler and a finally block) waits for the whole teardown.
    expect(p2).toBe(p1);
    await Promise.all([p1, p2]);
    await pool.destroy();
    expect(fake.last('a')?.terminated).toBe(true);
    expect(pool.list()[0]?.status).toBe('disconnected');
    await pool.ensureConnected();
    pool.warm();
    expect((await rejection(pool.connect('a'))).code).toBe('POOL_DESTROYED');
    expect((await rejection(pool.callTool('a', 'echo'))).code).toBe('POOL_DESTROYED');
    expect((await rejection(pool.update([]))).code).toBe('POOL_DESTROYED');
    expect(fake.dialed).toEqual(['a']);
  });

  it('a dial that completes after destroy closes its transport at once', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('a')], { a: { gate: gate.promise } });
    const ensure = pool.ensureConnected();
    await flush();
    const destroyed = pool.destroy();
    gate.resolve();
    await destroyed;
    await ensure;
    expect(fake.handles).toHaveLength(1);
    expect(fake.handles[0]?.terminated).toBe(true);
  });

  it('destroy while the server hangs in initialize settles and kills it', async () => {
    const { pool, fake } = setup([server('a'), server('b')], {
      a: { holdInit: new Promise(() => {}) },
      b: { holdInit: new Promise(() => {}) },
    });
    const ensure = pool.ensureConnected();
    await flush();
    await pool.destroy();
    await ensure;
    expect(fake.handles.map((h) => h.terminated)).toEqual([true, true]);
  });

  it('destroy during a reconnect backoff cancels the retry timer', async () => {
    const { pool, fake, clock } = setup([server('h', { url: 'http://x/mcp' })], { h: { kind: 'http' } });
    await pool.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    expect(clock.pending()).toBe(1);
    await pool.destroy();
    expect(clock.pending()).toBe(0);
    await clock.advance(60_000);
    expect(fake.dialed).toEqual(['h']);
  });
});

describe('callTool: results, errors, progress', () => {
  it('calls the tool and returns its result', async () => {
    const { pool } = setup([server('a')]);
    await pool.ensureConnected();
    const r = await pool.callTool('a', 'echo', { text: 'hi' });
    expect(r.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('not connected -> SERVER_NOT_CONNECTED, with what to do', async () => {
    const { pool } = setup([server('a')]);
    const e = await rejection(pool.callTool('a', 'echo'));
    expect(e.code).toBe('SERVER_NOT_CONNECTED');
    expect(e.message).toMatch(/ensureConnected|connect\("a"\)/);
    await pool.ensureConnected();
    await pool.disconnect('a');
    const e2 = await rejection(pool.callTool('a', 'echo'));
    expect(e2.code).toBe('SERVER_NOT_CONNECTED');
    expect(e2.message).toContain('by hand');
  });

  it('timeout -> CALL_TIMEOUT, the server is told to cancel, the connection stays usable', async () => {
    const { pool, fake } = setup([server('a', { callTimeoutMs: 1_000 })]);
    const sdk = sdkTimers();
    await pool.ensureConnected();
    const p = pool.callTool('a', 'wait');
    const caught = rejection(p);
    await sdk.advance(999);
    await flush();
    expect(fake.last('a')?.cancelled).toBe(0);
    await sdk.advance(1);
    const e = await caught;
    expect(e.code).toBe('CALL_TIMEOUT');
    expect(e.message).toBe(
      'MCP server "a" did not answer "wait" within 1000 ms; the call was cancelled. Raise "callTimeoutMs" if the tool is slow.',
    );
    await flush();
    expect(fake.last('a')?.cancelled).toBe(1);
    const e2 = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 10 }));
    await sdk.advance(10);
    expect((await e2).code).toBe('CALL_TIMEOUT');
    expect((await pool.callTool('a', 'echo', { text: 'still here' })).content).toEqual([
      { type: 'text', text: 'still here' },
    ]);
  });

  it('abort -> CALL_ABORTED, the server is told to cancel', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const ac = new AbortController();
    const p = rejection(pool.callTool('a', 'wait', {}, { signal: ac.signal }));
    await flush();
    ac.abort();
    expect((await p).code).toBe('CALL_ABORTED');
    await flush();
    expect(fake.last('a')?.cancelled).toBe(1);
    expect((await rejection(pool.callTool('a', 'echo', {}, { signal: AbortSignal.abort() }))).code).toBe(
      'CALL_ABORTED',
    );
  });

  it('JSON-RPC error from the server -> SERVER_ERROR', async () => {
    const { pool } = setup([server('a')]);
    await pool.ensureConnected();
    const e = await rejection(pool.callTool('a', 'error'));
    expect(e.code).toBe('SERVER_ERROR');
    expect(e.message).toContain('the tool broke');
    // The JSON-RPC code once, not "error -32603: MCP error -32603: ...".
    expect(e.message).toBe('MCP server "a" failed "error": MCP error -32603: the tool broke');
    const e2 = await rejection(pool.callTool('a', 'nope'));
    expect(e2.code).toBe('SERVER_ERROR');
  });

  it('server exits mid-call -> CONNECTION_CLOSED with the exit reason; record -> error', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const p = rejection(pool.callTool('a', 'wait'));
    await flush();
    fake.last('a')!.lose({ exitCode: 3, stderrTail: 'fatal: boom', message: 'process exited with code 3' });
    const e = await p;
    expect(e.code).toBe('CONNECTION_CLOSED');
    const rec = pool.get('a');
    expect(rec?.status).toBe('error');
    expect(rec?.error).toMatchObject({ code: 'SERVER_EXITED', exitCode: 3, stderrTail: 'fatal: boom' });
    expect(rec?.error?.message).toContain('exited with code 3');
    expect(rec?.error?.message).toContain('fatal: boom');
  });

  it('manual disconnect mid-call -> CONNECTION_CLOSED', async () => {
    const { pool } = setup([server('a')]);
    await pool.ensureConnected();
    const p = rejection(pool.callTool('a', 'wait'));
    await flush();
    await pool.disconnect('a');
    expect((await p).code).toBe('CONNECTION_CLOSED');
  });

  it('progress notifications reach onProgress', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const seen: unknown[] = [];
    const p = pool.callTool('a', 'wait', {}, { onProgress: (pr) => seen.push(pr) });
    await flush();
    fake.last('a')!.waitGate.resolve();
    await p;
    expect(seen).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
  });

  it('a call after the transport closed (loss not reported yet) is CONNECTION_CLOSED, not SERVER_ERROR', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const pending = rejection(pool.callTool('a', 'wait'));
    await flush();
    fake.last('a')!.closeWithoutLoss();
    expect((await pending).code).toBe('CONNECTION_CLOSED');
    const e = await rejection(pool.callTool('a', 'echo', { text: 'x' }));
    expect(e.code).toBe('CONNECTION_CLOSED');
    expect(e.message).toContain('MCP server "a"');
  });
});

describe('callTool: deadlines', () => {
  it('concurrent calls with different timeouts each time out on their own deadline', async () => {
    const { pool } = setup([server('a')]);
    const clock = sdkTimers();
    await pool.ensureConnected();
    const long = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 3_000 }));
    const short = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 1_000 }));
    let longDone = false;
    void long.then(() => {
      longDone = true;
    });
    await clock.advance(1_000);
    expect((await short).code).toBe('CALL_TIMEOUT');
    expect(longDone).toBe(false);
    await clock.advance(2_000);
    expect((await long).code).toBe('CALL_TIMEOUT');
  });

  it('a call that finishes in time is not aborted later', async () => {
    const { pool, fake } = setup([server('a')]);
    const clock = sdkTimers();
    await pool.ensureConnected();
    const p = pool.callTool('a', 'wait', {}, { timeoutMs: 1_000 });
    await flush();
    fake.last('a')!.waitGate.resolve();
    expect((await p).content).toEqual([{ type: 'text', text: 'waited' }]);
    await clock.advance(5_000);
    expect(fake.last('a')?.cancelled).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  const huge: { name: string; timeoutMs: number }[] = [
    { name: 'Infinity', timeoutMs: Number.POSITIVE_INFINITY },
    { name: '0 (no limit)', timeoutMs: 0 },
    { name: 'over the 2^31-1 ms a timer can hold', timeoutMs: 1e12 },
  ];
  it.each(huge)('timeoutMs $name: the call never times out early', async ({ timeoutMs }) => {
    const { pool, fake } = setup([server('a')]);
    const clock = sdkTimers();
    await pool.ensureConnected();
    const p = pool.callTool('a', 'wait', {}, { timeoutMs });
    await clock.advance(24 * 3_600_000);
    await flush();
    expect(fake.last('a')?.cancelled).toBe(0);
    fake.last('a')!.waitGate.resolve();
    expect((await p).content).toEqual([{ type: 'text', text: 'waited' }]);
  });

  it('a server error that looks like a timeout (code -32001) stays SERVER_ERROR', async () => {
    const { pool } = setup([server('a')]);
    sdkTimers();
    await pool.ensureConnected();
    const e = await rejection(pool.callTool('a', 'timeout-error', {}, { timeoutMs: 1_000 }));
    expect(e.code).toBe('SERVER_ERROR');
    expect(e.message).toContain('-32001');
  });

  it('destroy with a call in flight: the call settles and no timer of it is left', async () => {
    const { pool } = setup([server('a')]);
    const clock = sdkTimers();
    await pool.ensureConnected();
    const p = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 60_000 }));
    await flush();
    expect(clock.pending()).toBeGreaterThan(0);
    await pool.destroy();
    expect(['CONNECTION_CLOSED', 'POOL_DESTROYED']).toContain((await p).code);
    expect(clock.pending()).toBe(0);
  });
});

describe('callTool: cancellation reaches the SDK', () => {
  it("without a signal of the caller's, the SDK's own request timer cancels: the server gets notifications/cancelled", async () => {
    const { pool, fake } = setup([server('a')]);
    const clock = sdkTimers();
    await pool.ensureConnected();
    const caught = rejection(pool.callTool('a', 'wait', {}, { timeoutMs: 10 }));
    await flush();
    await clock.advance(10);
    expect((await caught).code).toBe('CALL_TIMEOUT');
    await flush();
    expect(fake.last('a')?.cancelReasons.map(String)).toEqual([expect.stringContaining('Request timed out')]);
    // The SDK dropped the request: a late answer changes nothing and the connection still works.
    fake.last('a')!.waitGate.resolve();
    await flush();
    expect((await bounded(pool.callTool('a', 'echo', { text: 'ok' }))).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });

  it("with a signal of the caller's, the pool's clock times the call and the SDK cancels through RequestOptions.signal", async () => {
    const { pool, clock, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const caught = rejection(
      pool.callTool('a', 'wait', {}, { timeoutMs: 10, signal: new AbortController().signal }),
    );
    await flush();
    await clock.advance(10);
    expect((await bounded(caught)).code).toBe('CALL_TIMEOUT');
    await flush();
    expect(fake.last('a')?.cancelReasons.map(String)).toEqual([
      expect.stringContaining('timed out after 10 ms'),
    ]);
    fake.last('a')!.waitGate.resolve();
    await flush();
    expect((await bounded(pool.callTool('a', 'echo', { text: 'ok' }))).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });

  it("the caller's abort reaches the SDK at once, with the caller's reason", async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const ac = new AbortController();
    const caught = rejection(pool.callTool('a', 'wait', {}, { signal: ac.signal }));
    await flush();
    ac.abort(new Error('user pressed stop'));
    const e = await bounded(caught);
    expect(e.code).toBe('CALL_ABORTED');
    await flush();
    expect(fake.last('a')?.cancelReasons.map(String)).toEqual([expect.stringContaining('user pressed stop')]);
  });
});

describe('tools: limits and list changes', () => {
  it('keeps at most 64 tools per server and reports the rest', async () => {
    const { pool } = setup([server('big'), server('small')], { big: { tools: 100 }, small: { tools: 64 } });
    await pool.ensureConnected();
    const big = pool.get('big');
    expect(big?.tools).toHaveLength(64);
    expect(big?.toolsDropped).toBe(36);
    expect(big?.tools[0]?.name).toBe('tool_0');
    expect(pool.get('small')).toMatchObject({ toolsDropped: 0 });
    expect(pool.get('small')?.tools).toHaveLength(64);
  });

  it('limit is configurable', async () => {
    const { pool } = setup([server('a')], { a: { tools: 10 } }, { limits: { maxToolsPerServer: 3 } });
    await pool.ensureConnected();
    expect(pool.get('a')).toMatchObject({ toolsDropped: 7 });
  });

  it('refreshes tools on notifications/tools/list_changed', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const versions: number[] = [];
    pool.onChange((s) => versions.push(s.version));
    await fake.last('a')!.setTools(['echo', 'added']);
    await flush();
    expect(pool.get('a')?.tools.map((t) => t.name)).toEqual(['echo', 'added']);
    expect(versions.length).toBeGreaterThan(0);
  });

  it('a tools/list_changed that arrives while the dial is still listing tools is not lost', async () => {
    const { pool } = setup([server('a')], { a: { changeToolsDuringList: ['echo', 'late'] } });
    await pool.ensureConnected();
    await flush();
    expect(pool.get('a')?.tools.map((t) => t.name)).toEqual(['echo', 'late']);
  });
});

describe('stale generations', () => {
  it('a close/exit event of an earlier connection does not touch the new one', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const old = fake.last('a')!;
    await pool.disconnect('a');
    await pool.connect('a');
    const fresh = fake.last('a')!;
    expect(fresh).not.toBe(old);
    const gen = pool.get('a')?.generation;
    old.lose({ exitCode: 1 });
    await flush();
    expect(pool.get('a')).toMatchObject({ status: 'connected', generation: gen });
    expect(fresh.terminated).toBe(false);
    expect((await pool.callTool('a', 'echo', { text: 'ok' })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });

  it('generation grows with every dial', async () => {
    const { pool } = setup([server('a')]);
    const g0 = pool.get('a')!.generation;
    await pool.connect('a');
    const g1 = pool.get('a')!.generation;
    await pool.disconnect('a');
    await pool.connect('a');
    expect(g1).toBeGreaterThan(g0);
    expect(pool.get('a')!.generation).toBeGreaterThan(g1);
  });
});

describe('http/sse reconnection', () => {
  const h = () => server('h', { url: 'http://127.0.0.1:9/mcp' });

  it('drop -> reconnecting (tools kept) -> connected after the backoff', async () => {
    const { pool, fake, clock } = setup(
      [h()],
      { h: { kind: 'http' } },
      { reconnect: { initialDelayMs: 1_000 } },
    );
    await pool.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    const rec = pool.get('h');
    expect(rec?.status).toBe('reconnecting');
    expect(rec?.tools.length).toBe(3);
    expect(rec?.error?.code).toBe('CONNECTION_CLOSED');
    // random() = 0.5 -> half of the 1000 ms cap.
    expect(clock.delays()).toEqual([500]);
    await clock.advance(499);
    expect(fake.dialed).toEqual(['h']);
    await clock.advance(1);
    expect(fake.dialed).toEqual(['h', 'h']);
    expect(pool.get('h')?.status).toBe('connected');
    expect(pool.get('h')?.error).toBeUndefined();
  });

  it('server gone -> error RECONNECT_FAILED after the configured attempts, with growing delays', async () => {
    const { pool, fake, clock } = setup(
      [h()],
      { h: { kind: 'http' } },
      {
        reconnect: { maxAttempts: 3, initialDelayMs: 100, factor: 2, maxDelayMs: 10_000 },
      },
    );
    await pool.ensureConnected();
    fake.behaviors.h = { kind: 'http', fail: new Error('connect ECONNREFUSED 127.0.0.1:9') };
    fake.last('h')!.lose();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      await flush();
      expect(pool.get('h')?.status).toBe('reconnecting');
      delays.push(...clock.delays());
      await clock.advance(clock.delays()[0] ?? 0);
    }
    await flush();
    expect(delays).toEqual([50, 100, 200]);
    const rec = pool.get('h');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.code).toBe('RECONNECT_FAILED');
    expect(rec?.error?.message).toContain('ECONNREFUSED');
    expect(rec?.error?.message).toContain('3 reconnection attempts');
    expect(fake.dialed).toEqual(['h', 'h', 'h', 'h']);
    await clock.advance(60_000);
    expect(fake.dialed).toHaveLength(4);
  });

  it('manual disconnect during the backoff wait -> no reconnect', async () => {
    const { pool, fake, clock } = setup([h()], { h: { kind: 'http' } });
    await pool.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    expect(pool.get('h')?.status).toBe('reconnecting');
    await pool.disconnect('h');
    expect(clock.pending()).toBe(0);
    await clock.advance(120_000);
    expect(fake.dialed).toEqual(['h']);
    expect(pool.get('h')).toMatchObject({ status: 'disconnected', manuallyDisconnected: true });
  });

  it('manual disconnect during a retry dial -> that dial is dropped, no further retry', async () => {
    const gate = deferred();
    const { pool, fake, clock } = setup([h()], { h: { kind: 'http' } });
    await pool.ensureConnected();
    fake.behaviors.h = { kind: 'http', gate: gate.promise };
    fake.last('h')!.lose();
    await clock.advance(clock.delays()[0] ?? 0);
    expect(fake.dialed).toEqual(['h', 'h']);
    await pool.disconnect('h');
    gate.resolve();
    await flush();
    await clock.advance(120_000);
    expect(pool.get('h')?.status).toBe('disconnected');
    expect(fake.dialed).toEqual(['h', 'h']);
  });

  it('reconnection disabled (maxAttempts 0) -> a drop is an error at once', async () => {
    const { pool, fake } = setup([h()], { h: { kind: 'http' } }, { reconnect: { maxAttempts: 0 } });
    await pool.ensureConnected();
    fake.last('h')!.lose();
    await flush();
    expect(pool.get('h')?.status).toBe('error');
  });

  it('a stdio exit is not reconnected', async () => {
    const { pool, fake, clock } = setup([server('a')]);
    await pool.ensureConnected();
    fake.last('a')!.lose();
    await flush();
    expect(pool.get('a')?.status).toBe('error');
    expect(clock.pending()).toBe(0);
    await pool.ensureConnected();
    expect(fake.dialed).toEqual(['a']);
  });

  it('a server that drops every connection right after it is re-established ends in error (no endless reconnect)', async () => {
    const { pool, fake, clock } = setup(
      [server('h', { url: 'http://127.0.0.1:9/mcp' })],
      { h: { kind: 'http' } },
      { reconnect: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 1_000 } },
    );
    await pool.ensureConnected();
    for (let drop = 0; drop < 10 && pool.get('h')?.status === 'connected'; drop++) {
      fake.last('h')!.lose();
      await flush();
      await clock.advance(clock.delays()[0] ?? 0);
    }
    const rec = pool.get('h');
    expect(rec?.status).toBe('error');
    expect(rec?.error?.code).toBe('RECONNECT_FAILED');
    expect(rec?.error?.message).toContain('3 reconnection attempts');
    expect(fake.dialed).toHaveLength(4);
    expect(clock.pending()).toBe(0);
  });

  it('a connection that stayed up longer than maxDelayMs starts counting attempts from zero again', async () => {
    const { pool, fake, clock } = setup(
      [server('h', { url: 'http://127.0.0.1:9/mcp' })],
      { h: { kind: 'http' } },
      {
        reconnect: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 1_000 },
        timeouts: { idleMs: Infinity },
      },
    );
    await pool.ensureConnected();
    for (let drop = 0; drop < 6; drop++) {
      fake.last('h')!.lose();
      await flush();
      await clock.advance(clock.delays()[0] ?? 0);
      expect(pool.get('h')?.status).toBe('connected');
      await clock.advance(1_000);
    }
    expect(fake.dialed).toHaveLength(7);
  });

  it('is not swallowed: once connected the server reconnects, and later drops are still seen', async () => {
    const hold = deferred();
    const { pool, fake, clock } = setup([server('h', { url: 'http://127.0.0.1:9/mcp' })], {
      h: { kind: 'http', holdInit: hold.promise },
    });
    const ensure = pool.ensureConnected();
    await flush();
    expect(pool.get('h')?.status).toBe('connecting');
    fake.last('h')!.reportLoss();
    hold.resolve();
    await ensure;
    await flush();
    expect(pool.get('h')?.status).toBe('reconnecting');
    fake.behaviors.h = { kind: 'http' };
    await clock.advance(clock.delays()[0] ?? 0);
    expect(pool.get('h')?.status).toBe('connected');
    fake.last('h')!.lose();
    await flush();
    expect(pool.get('h')?.status).toBe('reconnecting');
  });
});

describe('idle timeouts and lifecycles', () => {
  it('lazy servers close after idleTimeoutMs; not sticky: the next ensureConnected dials again', async () => {
    const { pool, fake, clock } = setup([server('a', { idleTimeoutMs: 1_000 })]);
    await pool.ensureConnected();
    await clock.advance(999);
    expect(pool.get('a')?.status).toBe('connected');
    await clock.advance(1);
    expect(pool.get('a')).toMatchObject({ status: 'disconnected', manuallyDisconnected: false });
    expect(fake.last('a')?.terminated).toBe(true);
    await pool.ensureConnected();
    expect(pool.get('a')?.status).toBe('connected');
    expect(fake.dialed).toEqual(['a', 'a']);
  });

  it('a call resets the idle clock; a call in flight is never idled out', async () => {
    const { pool, fake, clock } = setup([server('a', { idleTimeoutMs: 1_000 })]);
    await pool.ensureConnected();
    await clock.advance(800);
    await pool.callTool('a', 'echo', { text: 'x' });
    await clock.advance(800);
    expect(pool.get('a')?.status).toBe('connected');
    const p = pool.callTool('a', 'wait', {}, { timeoutMs: 100_000 });
    await clock.advance(5_000);
    expect(pool.get('a')?.status).toBe('connected');
    fake.last('a')!.waitGate.resolve();
    await p;
    await clock.advance(1_000);
    expect(pool.get('a')?.status).toBe('disconnected');
  });

  it('pool-wide idle timeout applies to servers without their own', async () => {
    const { pool, clock } = setup([server('a')], {}, { timeouts: { idleMs: 200 } });
    await pool.ensureConnected();
    await clock.advance(200);
    expect(pool.get('a')?.status).toBe('disconnected');
  });

  it('keep-alive servers never idle out', async () => {
    const { pool, clock } = setup([server('k', { lifecycle: 'keep-alive', idleTimeoutMs: 10 })]);
    await pool.ensureConnected();
    expect(clock.pending()).toBe(0);
    await clock.advance(10_000_000);
    expect(pool.get('k')?.status).toBe('connected');
  });

  it('warm() dials only eager servers, in the background, once', async () => {
    const { pool, fake } = setup([server('lazy'), server('eager', { lifecycle: 'eager' })]);
    pool.warm();
    pool.warm();
    await flush();
    expect(fake.dialed).toEqual(['eager']);
    expect(pool.get('eager')?.status).toBe('connected');
    expect(pool.get('lazy')?.status).toBe('disconnected');
    await pool.ensureConnected();
    expect(fake.dialed).toEqual(['eager', 'lazy']);
  });

  it('ensureConnected waits for an eager dial started by warm()', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('e', { lifecycle: 'eager' })], { e: { gate: gate.promise } });
    pool.warm();
    let done = false;
    const p = pool.ensureConnected().then(() => {
      done = true;
    });
    await flush();
    expect(done).toBe(false);
    gate.resolve();
    await p;
    expect(fake.dialed).toEqual(['e']);
    expect(pool.get('e')?.status).toBe('connected');
  });
});

describe('connection limit', () => {
  it('at most maxConnections live; the least recently used idle one is closed to make room', async () => {
    const servers = ['a', 'b', 'c', 'd'].map((n) => server(n));
    const { pool, fake, clock } = setup(servers, {}, { limits: { maxConnections: 3 } });
    await pool.connect('a');
    await clock.advance(10);
    await pool.connect('b');
    await clock.advance(10);
    await pool.connect('c');
    await clock.advance(10);
    await pool.callTool('a', 'echo'); // a is now the most recently used
    await pool.connect('d');
    expect(pool.list().map((r) => r.status)).toEqual(['connected', 'disconnected', 'connected', 'connected']);
    expect(pool.liveConnections).toBe(3);
    expect(fake.last('b')?.terminated).toBe(true);
    // Evicted is not sticky.
    expect(pool.get('b')?.manuallyDisconnected).toBe(false);
  });

  it('never closes a connection with a call in flight; with no idle one the dial fails with CONNECTION_LIMIT', async () => {
    const { pool, fake } = setup([server('a'), server('b')], {}, { limits: { maxConnections: 1 } });
    await pool.connect('a');
    const call = pool.callTool('a', 'wait');
    await flush();
    const rec = await pool.connect('b');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECTION_LIMIT');
    expect(fake.dialed).toEqual(['a']);
    expect(pool.get('a')?.status).toBe('connected');
    fake.last('a')!.waitGate.resolve();
    await call;
    expect((await pool.connect('b')).status).toBe('connected');
    expect(pool.get('a')?.status).toBe('disconnected');
  });

  it('ensureConnected over the limit: the first ones connect, the rest fail with CONNECTION_LIMIT', async () => {
    const servers = Array.from({ length: 20 }, (_, i) => server(`s${i}`));
    const { pool, fake } = setup(servers);
    await pool.ensureConnected();
    const statuses = pool.list().map((r) => r.status);
    expect(statuses.filter((s) => s === 'connected')).toHaveLength(16);
    expect(statuses.filter((s) => s === 'error')).toHaveLength(4);
    expect(pool.list()[19]?.error?.message).toMatch(/limits\.maxConnections/);
    expect(fake.dialed).toHaveLength(16);
    await pool.ensureConnected();
    expect(fake.dialed).toHaveLength(16);
  });
});

describe('update (hot reload)', () => {
  it('changed -> closed and reset; removed -> closed and dropped; added -> registered; same -> kept', async () => {
    const { pool, fake } = setup([server('same'), server('changed'), server('removed')]);
    await pool.ensureConnected();
    const keep = fake.last('same')!;
    const changedOld = fake.last('changed')!;
    const removedOld = fake.last('removed')!;
    await pool.update([server('same'), server('changed', { args: ['v2'] }), server('added')]);
    expect(pool.list().map((r) => [r.name, r.status])).toEqual([
      ['same', 'connected'],
      ['changed', 'disconnected'],
      ['added', 'disconnected'],
    ]);
    expect(keep.terminated).toBe(false);
    expect(changedOld.terminated).toBe(true);
    expect(removedOld.terminated).toBe(true);
    await pool.ensureConnected();
    expect(pool.list().every((r) => r.status === 'connected')).toBe(true);
    expect(fake.dialed.slice(3).sort()).toEqual(['added', 'changed']);
  });

  it('a manual disconnect survives a config change of that server', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    await pool.disconnect('a');
    await pool.update([server('a', { args: ['v2'] })]);
    await pool.ensureConnected();
    expect(fake.dialed).toEqual(['a']);
    expect(pool.get('a')?.manuallyDisconnected).toBe(true);
  });

  it('metadata-only change (same fingerprint) keeps the connection and applies the new settings', async () => {
    const { pool, fake } = setup([server('a')]);
    await pool.ensureConnected();
    const s = server('a');
    await pool.update([{ ...s, source: 'user', config: { ...s.config, callTimeoutMs: 5 } }]);
    expect(pool.get('a')).toMatchObject({ status: 'connected', source: 'user' });
    const sdk = sdkTimers();
    const p = rejection(pool.callTool('a', 'wait'));
    await sdk.advance(5);
    expect((await p).code).toBe('CALL_TIMEOUT');
    expect(fake.dialed).toEqual(['a']);
  });

  it('connect() while update() changes that server mid-dial ends connected with the new config', async () => {
    const gate = deferred();
    const { pool, fake } = setup([server('a')], { a: { gate: gate.promise } });
    const connecting = pool.connect('a');
    await flush();
    expect(pool.get('a')?.status).toBe('connecting');
    fake.behaviors.a = {};
    await pool.update([server('a', { args: ['v2'] })]);
    gate.resolve();
    const rec = await connecting;
    expect(rec.status).toBe('connected');
    expect(rec.fingerprint).toBe(server('a', { args: ['v2'] }).fingerprint);
    expect(fake.dialed).toEqual(['a', 'a']);
    expect(fake.open()).toHaveLength(1);
  });

  it('update() changing only the lifecycle (keep-alive -> lazy) starts the idle clock', async () => {
    const { pool, clock } = setup([server('a', { lifecycle: 'keep-alive', idleTimeoutMs: 1_000 })]);
    await pool.ensureConnected();
    expect(clock.pending()).toBe(0);
    await pool.update([server('a', { lifecycle: 'lazy', idleTimeoutMs: 1_000 })]);
    expect(pool.get('a')?.status).toBe('connected');
    await clock.advance(1_000);
    expect(pool.get('a')).toMatchObject({ status: 'disconnected', manuallyDisconnected: false });
  });

  it('update() shortening idleTimeoutMs (same fingerprint) applies to the running connection', async () => {
    const { pool, clock } = setup([server('a')]);
    await pool.ensureConnected();
    await clock.advance(500);
    await pool.update([server('a', { idleTimeoutMs: 1_000 })]);
    await clock.advance(499);
    expect(pool.get('a')?.status).toBe('connected');
    await clock.advance(1);
    expect(pool.get('a')?.status).toBe('disconnected');
  });
});

describe('onChange', () => {
  it('snapshots carry a strictly increasing version; unsubscribe stops them', async () => {
    const { pool } = setup([server('a'), server('b')]);
    const snaps: PoolSnapshot[] = [];
    const off = pool.onChange((s) => snaps.push(s));
    await pool.ensureConnected();
    await pool.disconnect('a');
    await flush();
    expect(snaps.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < snaps.length; i++) expect(snaps[i]!.version).toBeGreaterThan(snaps[i - 1]!.version);
    expect(snaps.at(-1)?.servers.find((r) => r.name === 'a')?.status).toBe('disconnected');
    expect(pool.version).toBe(snaps.at(-1)?.version);
    off();
    const n = snaps.length;
    await pool.connect('a');
    await flush();
    expect(snaps.length).toBe(n);
  });

  it('a throwing listener does not break the pool or other listeners', async () => {
    const { pool } = setup([server('a')]);
    let calls = 0;
    pool.onChange(() => {
      throw new Error('listener bug');
    });
    pool.onChange(() => {
      calls += 1;
    });
    await pool.ensureConnected();
    await flush();
    expect(calls).toBeGreaterThan(0);
    expect(pool.get('a')?.status).toBe('connected');
  });
});

describe('errors', () => {
  it('every rejection is a McpPoolError with a stable code', async () => {
    const { pool } = setup([server('a')]);
    const e = await rejection(pool.callTool('a', 'echo'));
    expect(isMcpPoolError(e, 'SERVER_NOT_CONNECTED')).toBe(true);
    expect(e.server).toBe('a');
    expect(e.name).toBe('McpPoolError');
  });

  it('lease() on a private pool is refused with INVALID_ARGUMENT', () => {
    const { pool } = setup([server('a')]);
    expect(() => pool.lease('agent-1', [])).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
