/**
 * The pure core of the reaper: given a process table (a plain map, whatever
 * platform it came from), decide which processes belong to a tree and what
 * to signal. No I/O, no clock: every function here is table-tested.
 */
import type { ProcessInfo, ReapTarget } from './types';

export type ProcessTable = ReadonlyMap<number, ProcessInfo>;

/** Index rows by pid. */
export function toTable(rows: readonly ProcessInfo[]): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const row of rows) table.set(row.pid, row);
  return table;
}

/**
 * A row that is missing, a zombie (`Z`) or dead (`X`) is gone: a zombie has
 * already exited and only waits for its parent to collect its status, so it
 * holds no resources worth killing and cannot be killed anyway.
 */
export function isGone(info: ProcessInfo | undefined): boolean {
  return info === undefined || info.state === 'Z' || info.state === 'X';
}

/** A stopped process (`T` job-control stop, `t` tracing stop). */
export function isStopped(info: ProcessInfo | undefined): boolean {
  return info !== undefined && (info.state === 'T' || info.state === 't');
}

/**
 * Membership of one tree, grown monotonically while a kill runs.
 * `members` maps pid to the start time seen when it joined, so that a pid
 * recycled by an unrelated process is never mistaken for a member.
 */
export interface TreeState {
  members: Map<number, number | undefined>;
  /** Process groups whose leader is (or was) a member: every process in them is a member. */
  groups: Set<number>;
  /** Sessions whose leader is (or was) a member. */
  sessions: Set<number>;
}

/** What must never be signalled: the caller, its ancestors, and their group and session. */
export interface Exclusions {
  pids: ReadonlySet<number>;
  groups: ReadonlySet<number>;
  sessions: ReadonlySet<number>;
}

/**
 * The caller and every ancestor of it (by parent pid), plus pids 0 and 1,
 * and the caller's own process group and session. Signalling any of them
 * would kill the host or the machine.
 */
export function exclusionsFor(table: ProcessTable, selfPid: number): Exclusions {
  const pids = new Set<number>([0, 1, selfPid]);
  let cur = table.get(selfPid);
  while (cur && !pids.has(cur.ppid)) {
    pids.add(cur.ppid);
    cur = table.get(cur.ppid);
  }
  const self = table.get(selfPid);
  const groups = new Set<number>([0]);
  const sessions = new Set<number>([0]);
  if (self?.pgid !== undefined) groups.add(self.pgid);
  if (self?.sid !== undefined) sessions.add(self.sid);
  return { pids, groups, sessions };
}

/**
 * Start the tree from its root, using only the first snapshot.
 *
 * - Root alive and its identity matches (start time equal, or the caller
 *   vouches for the pid): the root is a member, and so are its group and
 *   session if it leads them (stdio servers are spawned as group and session
 *   leaders, so this catches grandchildren already orphaned).
 * - Root alive but the identity does not match: the pid was recycled by
 *   another process. Nothing about that pid, its group or its session is
 *   ours; only the marker can still find the tree.
 * - Root gone: the group and session that carry its pid can only be
 *   leftovers of the root (POSIX never hands out a pid that is still in use
 *   as a process group or session id, and only process X can create group
 *   X), so their members are ours.
 */
export function seedTree(table: ProcessTable, target: ReapTarget, ex: Exclusions): TreeState {
  const state: TreeState = { members: new Map(), groups: new Set(), sessions: new Set() };
  const root = table.get(target.pid);
  const addGroup = (id: number) => {
    if (!ex.groups.has(id)) state.groups.add(id);
  };
  const addSession = (id: number) => {
    if (!ex.sessions.has(id)) state.sessions.add(id);
  };
  if (root === undefined) {
    addGroup(target.pid);
    addSession(target.pid);
    // With a known start time the dead root stays a (dead) member, so that
    // children still naming it as parent are recognised: Windows never
    // re-parents, and on POSIX they may not have been re-parented yet.
    if (target.startTime !== undefined && !ex.pids.has(target.pid))
      state.members.set(target.pid, target.startTime);
    return state;
  }
  const matches = target.startTime !== undefined ? root.startTime === target.startTime : target.trustPid;
  if (!matches || ex.pids.has(root.pid)) return state;
  state.members.set(root.pid, root.startTime);
  if (root.pgid === root.pid) addGroup(root.pid);
  if (root.sid === root.pid) addSession(root.pid);
  return state;
}

/** Is `info` the very process that joined the tree as `pid`? */
function isSameMember(state: TreeState, info: ProcessInfo): boolean {
  return state.members.has(info.pid) && state.members.get(info.pid) === info.startTime;
}

/**
 * Grow the tree to a fixed point over `table` and return the pids that
 * joined. A process joins when it is not excluded and:
 * - its parent is a member (the parent-pid walk) and it started no
 *   earlier than that member: Windows keeps the ppid of a dead parent, so
 *   an old process whose ppid happens to name a recycled pid (even our
 *   live root's) stays out;
 * - it is in a group or session led by a member;
 * - it carries the tree's marker (`markerPids`): this finds double-forked
 *   and `setsid` processes whose parent is gone.
 * A member that leads its own group or session brings that group or
 * session in too (a `setsid` grandchild's own children).
 */
export function extendTree(
  table: ProcessTable,
  state: TreeState,
  ex: Exclusions,
  markerPids: ReadonlySet<number> = new Set(),
): number[] {
  const joined: number[] = [];
  // Worklist instead of repeated passes: every process is checked once, and
  // again only when something it could depend on (its parent, the leader of
  // its group or session) joins. Linear in the table size.
  const byParent = new Map<number, ProcessInfo[]>();
  const byGroup = new Map<number, ProcessInfo[]>();
  const bySession = new Map<number, ProcessInfo[]>();
  const index = (map: Map<number, ProcessInfo[]>, key: number | undefined, p: ProcessInfo) => {
    if (key === undefined) return;
    const list = map.get(key);
    if (list) list.push(p);
    else map.set(key, [p]);
  };
  for (const p of table.values()) {
    index(byParent, p.ppid, p);
    index(byGroup, p.pgid, p);
    index(bySession, p.sid, p);
  }
  const queue: ProcessInfo[] = [...table.values()];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i] as ProcessInfo;
    if (ex.pids.has(p.pid) || state.members.has(p.pid)) continue;
    if (!belongs(table, state, p, markerPids)) continue;
    state.members.set(p.pid, p.startTime);
    joined.push(p.pid);
    queue.push(...(byParent.get(p.pid) ?? []));
    if (p.pgid === p.pid && !ex.groups.has(p.pid)) {
      state.groups.add(p.pid);
      queue.push(...(byGroup.get(p.pid) ?? []));
    }
    if (p.sid === p.pid && !ex.sessions.has(p.pid)) {
      state.sessions.add(p.pid);
      queue.push(...(bySession.get(p.pid) ?? []));
    }
  }
  return joined;
}

function belongs(
  table: ProcessTable,
  state: TreeState,
  p: ProcessInfo,
  markerPids: ReadonlySet<number>,
): boolean {
  if (markerPids.has(p.pid)) return true;
  if (p.pgid !== undefined && state.groups.has(p.pgid)) return true;
  if (p.sid !== undefined && state.sessions.has(p.sid)) return true;
  if (!state.members.has(p.ppid)) return false;
  const parent = table.get(p.ppid);
  if (parent !== undefined && !isSameMember(state, parent)) return false;
  // A child never starts before its parent. Windows never re-parents, so a
  // process whose parent died keeps naming that parent's pid, and once the
  // pid is recycled (by the dead parent's successor, or by our root) the
  // stale link points into the tree: the start times tell them apart. On
  // POSIX the check is always true (orphans are re-parented at once).
  const parentStart = state.members.get(p.ppid);
  return parentStart === undefined || p.startTime === undefined || p.startTime >= parentStart;
}

/** Members that are still running (present with the same identity, not zombies). */
export function aliveMembers(table: ProcessTable, state: TreeState): number[] {
  const out: number[] = [];
  for (const [pid, start] of state.members) {
    const info = table.get(pid);
    if (info !== undefined && info.startTime === start && !isGone(info)) out.push(pid);
  }
  return out;
}

/** One `kill(2)`: a negative pid addresses a process group. */
export interface SignalAction {
  pid: number;
  signal: NodeJS.Signals;
}

/**
 * What to signal, given the latest table: each member group that still has
 * a live member (signalling the group reaches a fork that the table has not
 * seen yet, atomically), then each live member whose start time still
 * matches (this reaches members outside the group: `setsid`, re-grouped).
 * A group with no live member is skipped: its id could be handed out again
 * and is no longer proof of anything. `only`, when given, limits the pids
 * (not the groups) to those.
 */
export function planSignals(
  table: ProcessTable,
  state: TreeState,
  signal: NodeJS.Signals,
  opts: { only?: ReadonlySet<number>; groups?: boolean } = {},
): SignalAction[] {
  const actions: SignalAction[] = [];
  const alive = aliveMembers(table, state);
  if (opts.groups !== false) {
    const liveGroups = new Set<number>();
    for (const pid of alive) {
      const g = table.get(pid)?.pgid;
      if (g !== undefined && state.groups.has(g)) liveGroups.add(g);
    }
    for (const g of [...liveGroups].sort((a, b) => a - b)) actions.push({ pid: -g, signal });
  }
  for (const pid of alive) {
    if (opts.only === undefined || opts.only.has(pid)) actions.push({ pid, signal });
  }
  return actions;
}

/**
 * Which processes need their environment read for the marker: those not
 * checked yet (by pid and start time) that started no earlier than the root.
 * A process that started before the root cannot have inherited the root's
 * marker, so on a long-running machine this skips almost everything.
 */
export function markerCandidates(
  table: ProcessTable,
  checked: ReadonlySet<string>,
  rootStart: number | undefined,
  ex: Exclusions,
): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const p of table.values()) {
    if (ex.pids.has(p.pid) || isGone(p)) continue;
    if (checked.has(identityKey(p))) continue;
    if (rootStart !== undefined && p.startTime !== undefined && p.startTime < rootStart) continue;
    out.push(p);
  }
  return out;
}

/** `pid:startTime`: a process identity that survives pid reuse. */
export function identityKey(p: ProcessInfo): string {
  return `${p.pid}:${p.startTime ?? '?'}`;
}
