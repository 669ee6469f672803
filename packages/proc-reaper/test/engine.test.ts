/**
 * The kill algorithm against a simulated process table and an instant
 * clock: every step of the algorithm, deterministic, no sleeping.
 */
import { describe, expect, it } from 'vitest';
import { createReaper } from '../src/engine';
import { ProcReaperError } from '../src/errors';
import type { PlatformAdapter } from '../src/types';
import { FakeOS } from './fake-os';

const SELF = 50;

/** pid 1, an ancestor shell (40, its own group/session), and "us" (50) in that group. */
function world(): FakeOS {
  const os = new FakeOS();
  os.add({ pid: 1, ppid: 0, pgid: 1, sid: 1, startTime: 1 });
  os.add({ pid: 40, ppid: 1, pgid: 40, sid: 40, startTime: 2 });
  os.add({ pid: SELF, ppid: 40, startTime: 3 });
  return os;
}

function reaperFor(os: FakeOS, adapter: PlatformAdapter = os.posixAdapter({ markers: true })) {
  return createReaper({ adapter, clock: os.clock(), selfPid: SELF, killWaitMs: 200 });
}

/** A tracked root (group and session leader, with a marker) under us. */
function root(os: FakeOS, extra: Parameters<FakeOS['add']>[0] | object = {}) {
  return os.add({ pid: 200, ppid: SELF, pgid: 200, sid: 200, marker: 'wave:m', ...extra });
}

describe('killTree algorithm (fake process table)', () => {
  it('well-behaved tree: one SIGTERM round, group first, nothing forced', async () => {
    const os = world();
    const r = root(os);
    const a = os.fork(r, { pid: 201 });
    os.fork(a, { pid: 202 });
    os.fork(r, { pid: 203 });
    const result = await reaperFor(os).killTree(200, { graceMs: 2000 });
    expect(result).toMatchObject({ survivors: [], forced: false });
    expect(result.pids.sort()).toEqual([200, 201, 202, 203].sort());
    expect(os.log[0]).toBe('TERM -200');
    expect(os.log.some((l) => /STOP|KILL/.test(l))).toBe(false);
    expect(result.ms).toBeLessThan(2000);
    expect(os.alive()).toEqual([1, 40, SELF]);
  });

  it('snapshot before any signal: a setsid child is reaped although the root dies first and it is re-parented', async () => {
    const os = world();
    const r = root(os, { marker: undefined });
    const c = os.fork(r, { pgid: 210, sid: 210, pid: 210 }); // own session, no marker: only the parent walk finds it
    const result = await reaperFor(os).killTree(200);
    expect(result.survivors).toEqual([]);
    expect(result.pids).toContain(c.pid);
    expect(os.log.some((l) => /^TERM -?210$/.test(l))).toBe(true);
    expect(os.procs.has(210)).toBe(false);
  });

  it('SIGTERM-ignorer: SIGKILLed only after the grace period, frozen first, continued after', async () => {
    const os = world();
    const r = root(os);
    os.fork(r, { ignoresTerm: true, pid: 220 });
    const adapter = os.posixAdapter({ markers: true });
    let killAt = -1;
    const signal = adapter.signal;
    adapter.signal = (pid, sig) => {
      if (sig === 'SIGKILL' && killAt < 0) killAt = os.now;
      return signal(pid, sig);
    };
    const result = await reaperFor(os, adapter).killTree(200, { graceMs: 500 });
    expect(result).toMatchObject({ survivors: [], forced: true });
    expect(killAt).toBeGreaterThanOrEqual(500);
    expect(result.ms).toBeGreaterThanOrEqual(500);
    const order = os.log.map((l) => l.split(' ')[0]);
    expect(order.indexOf('TERM')).toBeLessThan(order.indexOf('STOP'));
    expect(order.indexOf('STOP')).toBeLessThan(order.indexOf('KILL'));
    expect(order.lastIndexOf('CONT')).toBeGreaterThan(order.indexOf('KILL'));
    expect(os.procs.has(220)).toBe(false);
  });

  it.each([
    ['forks in its own group', 'same'],
    ['forks setsid children (found only by the marker)', 'setsid'],
  ] as const)(
    'continuous forker that %s: frozen until the set stops growing, 0 left',
    async (_name, mode) => {
      const os = world();
      const r = root(os, { ignoresTerm: true });
      os.fork(r, { forker: mode, ignoresTerm: true, pid: 230, born: -10 });
      const result = await reaperFor(os).killTree(200, { graceMs: 20 });
      expect(result.survivors).toEqual([]);
      expect(os.alive()).toEqual([1, 40, SELF]);
      expect(result.pids.length).toBeGreaterThanOrEqual(5); // it really forked during the kill
    },
  );

  it('a recycled root pid (start time differs) is never signalled, nor its group', async () => {
    const os = world();
    const r = os.add({ pid: 200, ppid: 1, pgid: 200, sid: 200, startTime: 5000 });
    os.fork(r);
    const result = await reaperFor(os).killTree({
      pid: 200,
      startTime: 4999,
      trustPid: false,
      marker: 'wave:gone',
    });
    expect(result).toMatchObject({ pids: [], survivors: [], forced: false });
    expect(os.log).toEqual([]);
    expect(os.alive()).toContain(200);
  });

  it('root already gone: its group, its session and the marker still find the rest; strangers are untouched', async () => {
    const os = world();
    const r = root(os);
    os.fork(r, { pid: 240 }); // same group
    os.fork(r, { pid: 241, pgid: 241 }); // other group, same session
    os.fork(r, { pid: 242, pgid: 242, sid: 242 }); // setsid: marker only
    os.add({ pid: 300, ppid: 1, pgid: 300, sid: 300 }); // stranger
    os.exit(200);
    const result = await reaperFor(os).killTree({ pid: 200, trustPid: false, marker: 'wave:m' });
    expect(result.survivors).toEqual([]);
    expect(new Set(result.pids)).toEqual(new Set([240, 241, 242]));
    expect(os.alive()).toEqual([1, 40, SELF, 300]);
  });

  it("root gone, pid not vouched for: a stranger's group and session with the root's id are proven by the marker or left alone", async () => {
    const os = world();
    // A stranger that once had pid 200 led group/session 200 and exited; its child lives on.
    os.add({ pid: 310, ppid: 1, pgid: 200, sid: 200 });
    const result = await reaperFor(os).killTree({
      pid: 200,
      startTime: 7,
      trustPid: false,
      marker: 'wave:m',
    });
    expect(result).toMatchObject({ pids: [], survivors: [] });
    expect(os.log).toEqual([]);
    // The same shape where a member carries the marker is ours: the whole group goes.
    os.add({ pid: 311, ppid: 1, pgid: 200, sid: 200, marker: 'wave:m' });
    const ours = await reaperFor(os).killTree({ pid: 200, startTime: 7, trustPid: false, marker: 'wave:m' });
    expect(new Set(ours.pids)).toEqual(new Set([310, 311]));
    expect(os.alive()).toEqual([1, 40, SELF]);
  });

  it("a bare pid adopts the root's marker only when the root is where the marker starts", async () => {
    const os = world();
    const r = root(os);
    const mid = os.fork(r, { pid: 250 });
    os.fork(mid, { pid: 251, pgid: 251, sid: 251 });
    os.add({ pid: 260, ppid: 1, pgid: 260, sid: 260, marker: 'wave:m' }); // orphan of the same tree
    // Killing the middle: it inherited the marker, so the marker is not used; 200 and 260 stay.
    const inner = await reaperFor(os).killTree(250);
    expect(new Set(inner.pids)).toEqual(new Set([250, 251]));
    expect(os.procs.has(200)).toBe(true);
    expect(os.procs.has(260)).toBe(true);
    // Killing the root: the marker is its own, so the orphan goes too.
    const outer = await reaperFor(os).killTree(200);
    expect(new Set(outer.pids)).toEqual(new Set([200, 260]));
    expect(os.alive()).toEqual([1, 40, SELF]);
  });

  it('never signals the caller or its group, even when the root leads the group the caller is in', async () => {
    const os = new FakeOS();
    os.add({ pid: 1, ppid: 0, pgid: 1, sid: 1 });
    const r = os.add({ pid: 200, ppid: 1, pgid: 200, sid: 200 });
    os.add({ pid: SELF, ppid: 1, pgid: 200, sid: 200 }); // we are in 200's group, not its descendant
    os.fork(r, { pid: 201 });
    const result = await reaperFor(os).killTree(200);
    expect(result.survivors).toEqual([]);
    expect(os.log.filter((l) => l.includes('-200') || l.includes(` ${SELF}`))).toEqual([]);
    expect(os.procs.has(SELF)).toBe(true);
    expect(os.procs.has(201)).toBe(false);
  });

  it.each([[SELF], [40], [1]])('refuses to reap the caller or an ancestor (pid %i)', async (pid) => {
    const os = world();
    await expect(reaperFor(os).killTree(pid)).rejects.toMatchObject({ code: 'SELF_TARGET' });
    expect(os.log).toEqual([]);
  });

  it.each([[0], [-3], [Number.NaN], [2.5]])('rejects %s as a pid with INVALID_PID', async (pid) => {
    const os = world();
    await expect(reaperFor(os).killTree(pid)).rejects.toBeInstanceOf(ProcReaperError);
  });

  it('a process that cannot be signalled (EPERM) is reported as a survivor, not thrown', async () => {
    const os = world();
    const r = root(os, { marker: undefined });
    os.fork(r, { pid: 270, pgid: 270, sid: 270, foreign: true });
    const result = await reaperFor(os).killTree(200, { graceMs: 50 });
    expect(result.survivors).toEqual([270]);
    expect(result.forced).toBe(true);
    expect(os.procs.has(200)).toBe(false);
  });

  it('a tree that is all EPERM is not waited for: no grace period, no stop or kill waits', async () => {
    const os = world();
    // A process of another user (e.g. a setuid helper): every signal is denied.
    const r = root(os, { marker: undefined, foreign: true });
    os.fork(r, { pid: 271, foreign: true });
    const result = await reaperFor(os).killTree(200, { graceMs: 2000 });
    expect(result.survivors.sort()).toEqual([200, 271]);
    expect(result.forced).toBe(true); // SIGKILL was tried once...
    expect(os.log.filter((l) => l.startsWith('KILL 200'))).toHaveLength(1); // ...and only once
    expect(result.ms).toBeLessThan(100); // the fake clock counts every wait
  });

  it('EPERM members do not hold up the others: the rest still get the full treatment', async () => {
    const os = world();
    const r = root(os, { marker: undefined });
    os.fork(r, { pid: 272, foreign: true });
    os.fork(r, { pid: 273, ignoresTerm: true });
    const result = await reaperFor(os).killTree(200, { graceMs: 500 });
    expect(result.survivors).toEqual([272]);
    expect(result.ms).toBeGreaterThanOrEqual(500); // the SIGTERM-ignorer got its grace period
    expect(os.procs.has(273)).toBe(false);
  });

  it('SIGKILL as the first signal: no SIGTERM, no grace period', async () => {
    const os = world();
    const r = root(os);
    os.fork(r);
    const result = await reaperFor(os).killTree(200, { signal: 'SIGKILL', graceMs: 60_000 });
    expect(result).toMatchObject({ survivors: [], forced: true });
    expect(os.log.some((l) => l.startsWith('TERM'))).toBe(false);
    expect(result.ms).toBeLessThan(60_000);
  });

  it('a member stopped by job control is continued after SIGTERM so that it can exit cleanly', async () => {
    const os = world();
    const r = root(os);
    os.fork(r, { pid: 280, pgid: 280, sid: 280, state: 'T' });
    const result = await reaperFor(os).killTree(200);
    expect(result).toMatchObject({ survivors: [], forced: false });
    expect(os.log.indexOf('TERM 280')).toBeLessThan(os.log.indexOf('CONT 280'));
  });

  it('a zombie counts as dead', async () => {
    const os = world();
    const r = root(os);
    os.fork(r, { pid: 290, zombieOnExit: true });
    const result = await reaperFor(os).killTree(200);
    expect(result).toMatchObject({ survivors: [], forced: false });
    expect(os.procs.get(290)?.state).toBe('Z');
  });

  it('an already dead pid resolves with nothing to do', async () => {
    const os = world();
    const result = await reaperFor(os).killTree(4321);
    expect(result).toMatchObject({ pids: [], survivors: [], forced: false });
    expect(os.log).toEqual([]);
  });

  it('rescans while polling are incremental: members and new pids are re-read, known strangers are reused', async () => {
    const os = world();
    const r = root(os, { ignoresTerm: true });
    os.fork(r, { ignoresTerm: true });
    const hints: (number | undefined)[] = [];
    const adapter = os.posixAdapter({ markers: true });
    const list = adapter.listProcesses;
    adapter.listProcesses = (hint) => {
      hints.push(hint?.reread.size);
      return list(hint);
    };
    await reaperFor(os, adapter).killTree(200, { graceMs: 100 });
    expect(hints[0]).toBeUndefined(); // the snapshot reads everything
    expect(hints.slice(1, 4)).toEqual([2, 2, 2]); // polls re-read the 2 members only
  });
});

describe('listDescendants and isAlive (fake process table)', () => {
  it('lists the live tree minus the root, parents first, and may be asked about the caller itself', async () => {
    const os = world();
    const r = root(os);
    const a = os.fork(r, { pid: 201 });
    os.fork(a, { pid: 202 });
    os.fork(a, { pid: 203, zombieOnExit: true });
    os.exit(203);
    const reaper = reaperFor(os);
    expect(await reaper.listDescendants(200)).toEqual([201, 202]);
    expect(await reaper.listDescendants(SELF)).toEqual([200, 201, 202]);
    expect(os.log).toEqual([]);
  });

  it('isAlive: zombies and missing pids are not alive', () => {
    const os = world();
    root(os);
    os.add({ pid: 300, ppid: 1, state: 'Z' });
    const reaper = reaperFor(os);
    expect(reaper.isAlive(200)).toBe(true);
    expect(reaper.isAlive(300)).toBe(false);
    expect(reaper.isAlive(999)).toBe(false);
    expect(reaper.isAlive(0)).toBe(false);
  });
});
