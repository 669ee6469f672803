import { describe, expect, it } from 'vitest';
import {
  aliveMembers,
  exclusionsFor,
  extendTree,
  markerCandidates,
  planSignals,
  seedTree,
  toTable,
} from '../src/tree';
import type { ProcessInfo, ReapTarget } from '../src/types';

// pid, ppid, pgid, sid, startTime, state
type Row = [number, number, number, number, number, string?];
const table = (rows: Row[]) =>
  toTable(
    rows.map(([pid, ppid, pgid, sid, startTime, state = 'S']) => ({
      pid,
      ppid,
      pgid,
      sid,
      startTime,
      state,
    })),
  );

// The host: 1 -> 40 (shell, leads group/session 40) -> 50 (us, in group 40).
const BASE: Row[] = [
  [1, 0, 1, 1, 1],
  [40, 1, 40, 40, 2],
  [50, 40, 40, 40, 3],
];

function members(rows: Row[], target: ReapTarget, markers: number[] = []): number[] {
  const t = table([...BASE, ...rows]);
  const ex = exclusionsFor(t, 50);
  const state = seedTree(t, target, ex);
  extendTree(t, state, ex, new Set(markers));
  return aliveMembers(t, state).sort((a, b) => a - b);
}

describe('exclusionsFor', () => {
  it('excludes the caller, its ancestors, pids 0 and 1, and its own group and session', () => {
    const ex = exclusionsFor(table(BASE), 50);
    expect([...ex.pids].sort((a, b) => a - b)).toEqual([0, 1, 40, 50]);
    expect(ex.groups.has(40)).toBe(true);
    expect(ex.sessions.has(40)).toBe(true);
  });

  it('survives a parent loop in a corrupt table', () => {
    const ex = exclusionsFor(
      table([
        [50, 60, 50, 50, 1],
        [60, 50, 60, 60, 1],
      ]),
      50,
    );
    expect([...ex.pids].sort((a, b) => a - b)).toEqual([0, 1, 50, 60]);
  });
});

describe('membership (seedTree + extendTree)', () => {
  const trusted = (pid: number): ReapTarget => ({ pid, trustPid: true });
  it.each<[string, Row[], ReapTarget, number[], number[]]>([
    [
      'parent walk',
      [
        [200, 50, 200, 200, 10],
        [201, 200, 200, 200, 11],
        [202, 201, 202, 202, 12],
      ],
      trusted(200),
      [],
      [200, 201, 202],
    ],
    [
      'orphan in the group (double fork)',
      [
        [200, 50, 200, 200, 10],
        [203, 1, 200, 200, 12],
      ],
      trusted(200),
      [],
      [200, 203],
    ],
    [
      'orphan in the session, other group',
      [
        [200, 50, 200, 200, 10],
        [204, 1, 204, 200, 12],
      ],
      trusted(200),
      [],
      [200, 204],
    ],
    [
      'setsid orphan: marker only',
      [
        [200, 50, 200, 200, 10],
        [205, 1, 205, 205, 12],
      ],
      trusted(200),
      [205],
      [200, 205],
    ],
    [
      'setsid orphan without marker: out of reach',
      [
        [200, 50, 200, 200, 10],
        [205, 1, 205, 205, 12],
      ],
      trusted(200),
      [],
      [200],
    ],
    [
      'children of a setsid member come along with its group',
      [
        [200, 50, 200, 200, 10],
        [206, 200, 206, 206, 11],
        [207, 1, 206, 206, 12],
      ],
      trusted(200),
      [],
      [200, 206, 207],
    ],
    [
      'root not a group leader: its group is not taken',
      [
        [200, 50, 40, 40, 10],
        [201, 200, 40, 40, 11],
      ],
      trusted(200),
      [],
      [200, 201],
    ],
    [
      'root gone: group and session id still find the rest',
      [
        [208, 1, 200, 200, 12],
        [209, 1, 209, 200, 13],
      ],
      { pid: 200, trustPid: false },
      [],
      [208, 209],
    ],
    [
      'recycled root (start differs): nothing',
      [
        [200, 1, 200, 200, 99],
        [201, 200, 200, 200, 100],
      ],
      { pid: 200, startTime: 10, trustPid: false },
      [],
      [],
    ],
    [
      'recycled root, but marker carriers are ours',
      [
        [200, 1, 200, 200, 99],
        [210, 1, 210, 210, 12],
      ],
      { pid: 200, startTime: 10, trustPid: false },
      [210],
      [210],
    ],
    [
      'untrusted pid without start time: not the root',
      [
        [200, 1, 200, 200, 99],
        [201, 200, 200, 200, 100],
      ],
      { pid: 200, trustPid: false },
      [],
      [],
    ],
    [
      'start time matches: root',
      [
        [200, 50, 200, 200, 10],
        [201, 200, 200, 200, 11],
      ],
      { pid: 200, startTime: 10, trustPid: false },
      [],
      [200, 201],
    ],
    [
      'a zombie member is not alive',
      [
        [200, 50, 200, 200, 10],
        [201, 200, 200, 200, 11, 'Z'],
      ],
      trusted(200),
      [],
      [200],
    ],
    [
      'our own group is never taken, even if the root leads it',
      [[200, 50, 40, 40, 10]],
      trusted(200),
      [],
      [200],
    ],
  ])('%s', (_name, rows, target, markers, expected) => {
    expect(members(rows, target, markers)).toEqual(expected);
  });

  it('Windows: a child whose parent died keeps the ppid and joins only if it started after that parent', () => {
    const rows: ProcessInfo[] = [
      { pid: 1, ppid: 0, startTime: 1 },
      { pid: 50, ppid: 1, startTime: 2 },
      { pid: 300, ppid: 200, startTime: 20 }, // child of the dead root
      { pid: 301, ppid: 200, startTime: 5 }, // older than the root: its parent was an earlier pid 200
    ];
    const t = toTable(rows);
    const ex = exclusionsFor(t, 50);
    const state = seedTree(t, { pid: 200, startTime: 10, trustPid: false }, ex);
    extendTree(t, state, ex);
    expect(aliveMembers(t, state)).toEqual([300]);
  });
  it('Windows: an older process whose ppid names a live, recycled pid is not a child of it', () => {
    // Windows never re-parents: 301 was started by an earlier process 200
    // that died; the pid 200 now belongs to our root, which is younger than 301.
    const rows: ProcessInfo[] = [
      { pid: 1, ppid: 0, startTime: 1 },
      { pid: 50, ppid: 1, startTime: 2 },
      { pid: 200, ppid: 50, startTime: 10 }, // our root, alive
      { pid: 300, ppid: 200, startTime: 20 }, // its real child
      { pid: 301, ppid: 200, startTime: 5 }, // older than the root: not its child
      { pid: 302, ppid: 301, startTime: 6 }, // and that one's child
      { pid: 303, ppid: 200, startTime: 10 }, // same creation time (ms resolution): a child
    ];
    const t = toTable(rows);
    const ex = exclusionsFor(t, 50);
    const state = seedTree(t, { pid: 200, trustPid: true }, ex);
    extendTree(t, state, ex);
    expect(aliveMembers(t, state).sort((a, b) => a - b)).toEqual([200, 300, 303]);
  });
});

describe('planSignals', () => {
  const t = table([
    ...BASE,
    [200, 50, 200, 200, 10],
    [201, 200, 200, 200, 11],
    [202, 1, 202, 202, 12],
    [203, 200, 200, 200, 13, 'Z'],
  ]);
  const ex = exclusionsFor(t, 50);
  const state = seedTree(t, { pid: 200, trustPid: true }, ex);
  extendTree(t, state, ex, new Set([202]));

  it('groups first (with a live member), then every live member; zombies are skipped', () => {
    expect(planSignals(t, state, 'SIGTERM')).toEqual([
      { pid: -200, signal: 'SIGTERM' },
      { pid: -202, signal: 'SIGTERM' },
      { pid: 200, signal: 'SIGTERM' },
      { pid: 201, signal: 'SIGTERM' },
      { pid: 202, signal: 'SIGTERM' },
    ]);
  });

  it('only: limits the pids; groups: false leaves groups out', () => {
    expect(planSignals(t, state, 'SIGTERM', { only: new Set([202]), groups: false })).toEqual([
      { pid: 202, signal: 'SIGTERM' },
    ]);
  });

  it('a group with no live member is not signalled (its id proves nothing any more)', () => {
    const after = table([...BASE, [202, 1, 202, 202, 12]]);
    expect(planSignals(after, state, 'SIGKILL')).toEqual([
      { pid: -202, signal: 'SIGKILL' },
      { pid: 202, signal: 'SIGKILL' },
    ]);
  });

  it('a member pid now held by another process (other start time) is not signalled', () => {
    const recycled = table([...BASE, [201, 1, 201, 201, 999]]);
    expect(planSignals(recycled, state, 'SIGKILL')).toEqual([]);
  });
});

describe('markerCandidates', () => {
  it('reads each identity once and skips processes older than the root', () => {
    const t = table([
      ...BASE,
      [200, 50, 200, 200, 10],
      [201, 1, 201, 201, 11],
      [100, 1, 100, 100, 5],
      [202, 1, 202, 202, 12, 'Z'],
    ]);
    const ex = exclusionsFor(t, 50);
    const pids = (checked: string[]) => markerCandidates(t, new Set(checked), 10, ex).map((p) => p.pid);
    expect(pids([])).toEqual([200, 201]);
    expect(pids(['201:11'])).toEqual([200]);
    expect(pids(['201:999'])).toEqual([200, 201]); // same pid, other process: read again
  });
});
