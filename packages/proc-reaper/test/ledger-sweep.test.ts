/**
 * ledger.sweep() entry by entry, against a simulated process table: a
 * recorded pid recycled into the sweeper (or its parent) is skipped, the
 * other entries are reaped, and the dead host's file is never left claimed.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { createReaper } from '../src/engine';
import { createLedger, type LedgerFile } from '../src/ledger';
import { FakeOS } from './fake-os';

const SELF = 50;

const tempDir = (): string => makeTempDir('proc-reaper-sweep-');

/** pid 1, the sweeper's parent shell (40) and the sweeper (50). */
function world(): FakeOS {
  const os = new FakeOS();
  os.add({ pid: 1, ppid: 0, pgid: 1, sid: 1, startTime: 1 });
  os.add({ pid: 40, ppid: 1, pgid: 40, sid: 40, startTime: 2 });
  os.add({ pid: SELF, ppid: 40, startTime: 3 });
  return os;
}

describe('ledger.sweep() entry by entry', () => {
  it('a pid recycled into the sweeper or its parent is skipped; the rest of the dead host is reaped; no claim is left', async () => {
    const os = world();
    // The dead host's live tree: a root (group and session leader) with two descendants.
    const root = os.add({ pid: 200, ppid: 1, pgid: 200, sid: 200, marker: 'wave:tree', startTime: 500 });
    os.fork(os.fork(root, { pid: 201 }), { pid: 202 });
    const reaper = createReaper({
      adapter: os.posixAdapter({ markers: true }),
      clock: os.clock(),
      selfPid: SELF,
      killWaitMs: 200,
    });
    const dir = tempDir();
    const file: LedgerFile = {
      version: 1,
      // Host 30 is gone.
      host: { pid: 30, startTime: 7, platform: 'linux' },
      entries: [
        // Recorded trees whose root pids were since reused by the sweeper's parent and the sweeper.
        { pid: 40, startTime: 400, marker: 'wave:old-a', recordedAt: 1 },
        { pid: SELF, startTime: 401, marker: 'wave:old-b', recordedAt: 1 },
        { pid: 200, startTime: 500, marker: 'wave:tree', recordedAt: 1 },
      ],
    };
    writeFileSync(join(dir, 'host-30-abcdef.json'), JSON.stringify(file));
    const warnings: string[] = [];
    const ledger = createLedger({ dir, reaper, onWarning: (m) => warnings.push(m) });

    const results = await ledger.sweep({ graceMs: 100 });

    expect(os.alive().sort((a, b) => a - b)).toEqual([1, 40, SELF]);
    expect(results.flatMap((r) => r.pids).sort()).toEqual([200, 201, 202]);
    expect(readdirSync(dir)).toEqual([]);
    expect(warnings).toEqual([]);
    expect(os.log.some((l) => / (40|50|-40)$/.test(l))).toBe(false);
  });

  it('an entry that cannot be reaped is reported as a warning and never stops the sweep', async () => {
    const os = world();
    const root = os.add({ pid: 200, ppid: 1, pgid: 200, sid: 200, marker: 'wave:tree', startTime: 500 });
    os.fork(root, { pid: 201 });
    const real = createReaper({
      adapter: os.posixAdapter({ markers: true }),
      clock: os.clock(),
      selfPid: SELF,
      killWaitMs: 200,
    });
    // The sweeper's own parent, recorded with its real start time (a ledger written by a
    // process that was our parent's child is not possible, but nothing may stop the sweep).
    const dir = tempDir();
    const file: LedgerFile = {
      version: 1,
      host: { pid: 30, startTime: 7, platform: 'linux' },
      entries: [
        { pid: 40, startTime: 2, marker: 'wave:parent', recordedAt: 1 },
        { pid: 200, startTime: 500, marker: 'wave:tree', recordedAt: 1 },
      ],
    };
    writeFileSync(join(dir, 'host-30-abcdef.json'), JSON.stringify(file));
    const warnings: string[] = [];
    const ledger = createLedger({ dir, reaper: real, onWarning: (m) => warnings.push(m) });

    await ledger.sweep({ graceMs: 100 });

    expect(os.alive().sort((a, b) => a - b)).toEqual([1, 40, SELF]);
    expect(readdirSync(dir)).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/pid 40/);
  });
});

describe('killTree of a recorded pid that now belongs to the caller', () => {
  const reaperOf = (os: FakeOS) =>
    createReaper({
      adapter: os.posixAdapter({ markers: true }),
      clock: os.clock(),
      selfPid: SELF,
      killWaitMs: 200,
    });

  it('start time differs (recycled): no SELF_TARGET, the caller is untouched, the marker still finds the tree', async () => {
    const os = world();
    // An orphan of the recorded tree, found only by its marker.
    os.add({ pid: 300, ppid: 1, pgid: 300, sid: 300, marker: 'wave:gone' });
    const r = await reaperOf(os).killTree({
      pid: SELF,
      startTime: 999,
      marker: 'wave:gone',
      trustPid: false,
    });
    expect(r.pids).toEqual([300]);
    expect(os.alive().sort((a, b) => a - b)).toEqual([1, 40, SELF]);
  });

  it('same start time (really the caller or its parent): still SELF_TARGET', async () => {
    const os = world();
    await expect(reaperOf(os).killTree({ pid: 40, startTime: 2, trustPid: false })).rejects.toMatchObject({
      code: 'SELF_TARGET',
    });
    await expect(reaperOf(os).killTree(SELF)).rejects.toMatchObject({ code: 'SELF_TARGET' });
  });
});
