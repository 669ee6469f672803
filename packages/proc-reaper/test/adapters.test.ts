/**
 * Platform adapters: Linux against a fake /proc folder; macOS and Windows
 * against an injected command runner and kill function over a simulated
 * process table, through the whole kill algorithm.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { createDarwinAdapter } from '../src/adapters/darwin';
import { defaultAdapter } from '../src/adapters/index';
import { createLinuxAdapter } from '../src/adapters/linux';
import { createWin32Adapter, POWERSHELL_ARGS } from '../src/adapters/win32';
import { createReaper } from '../src/engine';
import { PS_ARGS } from '../src/parse';
import type { CommandRunner } from '../src/types';
import { FakeOS } from './fake-os';

describe('defaultAdapter', () => {
  it.each([
    ['linux', 'linux'],
    ['darwin', 'darwin'],
    ['freebsd', 'darwin'],
    ['win32', 'win32'],
  ] as const)('%s -> %s adapter', (platform, expected) => {
    expect(defaultAdapter(platform).platform).toBe(expected);
  });
});

describe('Linux adapter over a fake /proc', () => {
  function fakeProc(): string {
    const root = makeTempDir('proc-reaper-fakeproc-');
    const put = (pid: number, statLine: string, environ?: string) => {
      mkdirSync(join(root, String(pid)));
      writeFileSync(join(root, String(pid), 'stat'), `${statLine}\n`);
      if (environ !== undefined) writeFileSync(join(root, String(pid), 'environ'), environ);
    };
    put(1, '1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0');
    put(
      200,
      '200 (my server) S 1 200 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 700 0 0',
      'A=1\0WAVE_REAPER_ID=t:1\0',
    );
    put(201, '201 (sh) Z 200 200 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 701 0 0', '');
    mkdirSync(join(root, 'self'));
    writeFileSync(join(root, 'uptime'), '1 1');
    return root;
  }

  it('lists pid folders only, parses stat, reads markers and single rows', async () => {
    const root = fakeProc();
    const a = createLinuxAdapter({ procRoot: root });
    const rows = await a.listProcesses();
    expect(rows.map((r) => r.pid).sort((x, y) => x - y)).toEqual([1, 200, 201]);
    expect(rows.find((r) => r.pid === 200)).toEqual({
      pid: 200,
      ppid: 1,
      pgid: 200,
      sid: 200,
      state: 'S',
      startTime: 700,
    });
    expect(a.readMarker?.(200)).toBe('t:1');
    expect(a.readMarker?.(201)).toBeUndefined();
    expect(a.readMarker?.(999)).toBeUndefined();
    expect(a.readProcess?.(201)?.state).toBe('Z');
    expect(a.readProcess?.(999)).toBeUndefined();
  });

  it('with a hint, reuses known non-members and re-reads members and new pids', async () => {
    const root = fakeProc();
    const a = createLinuxAdapter({ procRoot: root });
    const previous = new Map((await a.listProcesses()).map((r) => [r.pid, r]));
    // Both change on disk; only the member (200) is re-read.
    writeFileSync(join(root, '1', 'stat'), '1 (init) T 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0');
    writeFileSync(
      join(root, '200', 'stat'),
      '200 (my server) T 1 200 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 700 0 0',
    );
    mkdirSync(join(root, '300'));
    writeFileSync(
      join(root, '300', 'stat'),
      '300 (new) S 200 200 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 800 0 0',
    );
    rmSync(join(root, '201'), { recursive: true });
    const rows = await a.listProcesses({ previous, reread: new Set([200]) });
    const byPid = new Map(rows.map((r) => [r.pid, r]));
    expect([...byPid.keys()].sort((x, y) => x - y)).toEqual([1, 200, 300]);
    expect(byPid.get(1)?.state).toBe('S'); // reused
    expect(byPid.get(200)?.state).toBe('T'); // re-read
    expect(byPid.get(300)?.startTime).toBe(800); // new
  });

  it('a missing /proc lists nothing instead of throwing', async () => {
    const a = createLinuxAdapter({ procRoot: join(tmpdir(), 'proc-reaper-does-not-exist') });
    expect(await a.listProcesses()).toEqual([]);
  });

  it('signals through the injected kill; ESRCH is "gone", EPERM is "denied"', () => {
    const calls: [number, NodeJS.Signals | 0][] = [];
    const a = createLinuxAdapter({
      kill: (pid, sig) => {
        calls.push([pid, sig]);
        if (pid === 2) throw Object.assign(new Error('x'), { code: 'ESRCH' });
        if (pid === 3) throw Object.assign(new Error('x'), { code: 'EPERM' });
      },
    });
    expect([a.signal(1, 'SIGTERM'), a.signal(2, 'SIGTERM'), a.signal(3, 'SIGKILL'), a.signal(-4, 0)]).toEqual(
      ['ok', 'gone', 'denied', 'ok'],
    );
    expect(calls).toEqual([
      [1, 'SIGTERM'],
      [2, 'SIGTERM'],
      [3, 'SIGKILL'],
      [-4, 0],
    ]);
  });
});

/** Render the fake table the way `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` does (C locale). */
function psText(os: FakeOS): string {
  return os
    .rows()
    .map((r) => {
      const d = new Date(Date.UTC(2025, 10, 30, 12, 0, 0) + (r.startTime ?? 0) * 1000);
      const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()];
      const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][
        d.getUTCMonth()
      ];
      const hms = d.toISOString().slice(11, 19);
      const lstart = `${day} ${mon} ${String(d.getUTCDate()).padStart(2)} ${hms} ${d.getUTCFullYear()}`;
      return `${String(r.pid).padStart(5)} ${String(r.ppid).padStart(5)} ${String(r.pgid).padStart(5)} ${r.state}s   ${lstart}`;
    })
    .join('\n');
}

describe('macOS adapter (ps runner) through the kill algorithm', () => {
  function setup() {
    const os = new FakeOS();
    os.add({ pid: 1, ppid: 0, pgid: 1, sid: 1 });
    os.add({ pid: 50, ppid: 1, pgid: 50, sid: 50 });
    const calls: string[][] = [];
    const runner: CommandRunner = async (file, args) => {
      calls.push([file, ...args]);
      return { stdout: psText(os), stderr: '', code: 0 };
    };
    const adapter = createDarwinAdapter({ runner, kill: (pid, sig) => os.kill(pid, sig) });
    const reaper = createReaper({ adapter, clock: os.clock(), selfPid: 50, killWaitMs: 200 });
    return { os, calls, reaper };
  }

  it('runs only `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` and reaps a hostile tree', async () => {
    const { os, calls, reaper } = setup();
    const r = os.add({ pid: 200, ppid: 50, pgid: 200, sid: 200 });
    os.fork(r, { pid: 201, ignoresTerm: true }); // SIGTERM-ignorer
    os.fork(r, { pid: 202, pgid: 202, sid: 202 }); // setsid, parent alive
    os.fork(r, { pid: 203, ppid: 1 }); // double-forked orphan, still in the group
    const result = await reaper.killTree(200, { graceMs: 100 });
    expect(result.survivors).toEqual([]);
    expect(result.forced).toBe(true);
    expect(new Set(result.pids)).toEqual(new Set([200, 201, 202, 203]));
    expect(os.alive()).toEqual([1, 50]);
    expect(calls.length).toBeGreaterThan(1);
    for (const call of calls) expect(call).toEqual(['ps', ...PS_ARGS]);
    expect(PS_ARGS).toEqual(['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart=']);
  });

  it('recognises a recycled pid by its lstart', async () => {
    const { os, reaper } = setup();
    os.add({ pid: 200, ppid: 1, pgid: 200, sid: 200, startTime: 3600 });
    const startTime = (await reaper.startTimeOf(200)) as number;
    expect(startTime).toBe(Date.UTC(2025, 10, 30, 13, 0, 0));
    const result = await reaper.killTree({ pid: 200, startTime: startTime - 1000, trustPid: false });
    expect(result.pids).toEqual([]);
    expect(os.log).toEqual([]);
  });

  it('a failing ps lists nothing and kills nothing, without throwing', async () => {
    const adapter = createDarwinAdapter({
      runner: async () => ({ stdout: '', stderr: 'ps: not found', code: null }),
      kill: () => {
        throw new Error('must not be called');
      },
    });
    const reaper = createReaper({ adapter, selfPid: 50 });
    await expect(reaper.killTree(4242)).resolves.toMatchObject({ pids: [], survivors: [] });
  });
});

describe.runIf(process.platform === 'linux')('macOS adapter against the real procps `ps` (Linux)', () => {
  it('start times do not depend on the time zone of the process that runs ps, and are epoch ms', async () => {
    // A host and a later sweeper may run with different TZ (a terminal vs a
    // launch agent): the same process must get the same start time, or a
    // live host looks dead and a tracked root looks recycled.
    const saved = process.env.TZ;
    const startOf = async (tz: string) => {
      process.env.TZ = tz;
      return createReaper({ adapter: createDarwinAdapter() }).startTimeOf(process.pid);
    };
    try {
      const tokyo = await startOf('Asia/Tokyo');
      const newYork = await startOf('America/New_York');
      expect(tokyo).toBeTypeOf('number');
      expect(newYork).toBe(tokyo);
      // And it is the real start, to the second (lstart has second resolution).
      const started = Date.now() - process.uptime() * 1000;
      expect(Math.abs((tokyo as number) - started)).toBeLessThan(2000);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('lists pid, ppid, pgid and state as /proc has them', async () => {
    const rows = await createDarwinAdapter().listProcesses();
    const self = rows.find((r) => r.pid === process.pid);
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(self).toMatchObject({ pid: process.pid, ppid: Number(f[1]), pgid: Number(f[2]) });
    expect(rows.length).toBeGreaterThan(3);
  });
});

describe('Windows adapter (CIM + taskkill runner) through the kill algorithm', () => {
  /** FILETIME text of a fake start time. */
  const filetime = (ms: number) => String((BigInt(ms) + 11_644_473_600_000n) * 10_000n);

  function setup(opts: { spawnDuringTaskkill?: boolean } = {}) {
    const os = new FakeOS();
    os.reparent = false; // Windows keeps the pid of a dead parent
    os.add({ pid: 4, ppid: 0, startTime: 1 });
    os.add({ pid: 50, ppid: 4, startTime: 2 });
    const calls: string[][] = [];
    const runner: CommandRunner = async (file, args) => {
      calls.push([file, ...args]);
      if (file === 'powershell.exe') {
        const lines = os
          .rows()
          .map((r) => `${r.pid} ${r.ppid} ${r.pid === 4 ? 0 : filetime(r.startTime ?? 0)}`);
        return { stdout: `${lines.join('\r\n')}\r\n`, stderr: '', code: 0 };
      }
      if (file === 'taskkill') {
        // taskkill /T walks down from the root, and only from a live root.
        const pid = Number(args[1]);
        if (!os.procs.has(pid)) return { stdout: '', stderr: 'not found', code: 128 };
        const doomed = [pid];
        for (let i = 0; i < doomed.length; i++) {
          for (const p of os.procs.values()) if (p.ppid === doomed[i]) doomed.push(p.pid);
        }
        if (opts.spawnDuringTaskkill) os.add({ pid: 999, ppid: doomed[1] ?? pid }); // forked meanwhile
        for (const d of doomed) os.exit(d);
        return { stdout: 'SUCCESS', stderr: '', code: 0 };
      }
      throw new Error(`unexpected command ${file}`);
    };
    const adapter = createWin32Adapter({ runner, kill: (pid, sig) => os.kill(pid, sig) });
    const reaper = createReaper({ adapter, clock: os.clock(), selfPid: 50, killWaitMs: 200 });
    return { os, calls, reaper };
  }

  it('lists through PowerShell CIM and runs `taskkill /PID <pid> /T /F` while the root is alive', async () => {
    const { os, calls, reaper } = setup();
    const r = os.add({ pid: 200, ppid: 50 });
    const c = os.fork(r, { pid: 201 });
    os.fork(c, { pid: 202 });
    const result = await reaper.killTree(200);
    expect(result).toMatchObject({ survivors: [], forced: true });
    expect(new Set(result.pids)).toEqual(new Set([200, 201, 202]));
    expect(calls[0]).toEqual(['powershell.exe', ...POWERSHELL_ARGS]);
    expect(calls[1]).toEqual(['taskkill', '/PID', '200', '/T', '/F']);
    expect(POWERSHELL_ARGS.join(' ')).toContain('Get-CimInstance -ClassName Win32_Process');
    expect(os.alive()).toEqual([4, 50]);
  });

  it('a child created while taskkill ran is found by the next listing and terminated', async () => {
    const { os, reaper } = setup({ spawnDuringTaskkill: true });
    const r = os.add({ pid: 200, ppid: 50 });
    os.fork(r, { pid: 201 });
    const result = await reaper.killTree(200);
    expect(result.survivors).toEqual([]);
    expect(result.pids).toContain(999);
    expect(os.log).toContain('KILL 999');
    expect(os.alive()).toEqual([4, 50]);
  });

  it('root already gone (handle with start time): no taskkill; its children are terminated one by one', async () => {
    const { os, calls, reaper } = setup();
    const r = os.add({ pid: 200, ppid: 50, startTime: 100 });
    os.fork(r, { pid: 201, startTime: 101 });
    os.fork(r, { pid: 202, startTime: 102 });
    os.add({ pid: 203, ppid: 200, startTime: 50 }); // older than the root: child of an earlier pid 200
    os.exit(200);
    const result = await reaper.killTree({ pid: 200, startTime: 100, trustPid: false });
    expect(calls.some((c) => c[0] === 'taskkill')).toBe(false);
    expect(result.survivors).toEqual([]);
    expect(new Set(result.pids)).toEqual(new Set([201, 202]));
    expect(os.alive()).toEqual([4, 50, 203]);
  });

  it('a recycled root pid is left alone: no taskkill, no termination', async () => {
    const { os, calls, reaper } = setup();
    os.add({ pid: 200, ppid: 4, startTime: 500 });
    const result = await reaper.killTree({ pid: 200, startTime: 100, trustPid: false });
    expect(result).toMatchObject({ pids: [], survivors: [], forced: false });
    expect(calls.map((c) => c[0])).toEqual(['powershell.exe']);
    expect(os.log).toEqual([]);
  });

  it('a process that cannot be terminated is reported as a survivor', async () => {
    const { os, reaper } = setup();
    const r = os.add({ pid: 200, ppid: 50 });
    os.fork(r, { pid: 201, foreign: true, ppid: 200 });
    os.exit(200);
    const result = await reaper.killTree({ pid: 200, startTime: r.startTime, trustPid: false });
    expect(result.survivors).toEqual([201]);
    // Terminating it was tried once, and the reaper did not sit out its waits for it.
    expect(os.log.filter((l) => l === 'KILL 201')).toHaveLength(1);
    expect(result.ms).toBeLessThan(200);
  });
});
