/**
 * The kill algorithm: the order of snapshots and signals. Which processes
 * belong to the tree and what to signal are pure functions (`tree.ts`);
 * listing and signalling go through a {@link PlatformAdapter}; time through
 * an injected {@link Clock}. So the same code runs against real processes
 * and against a fake process table in unit tests.
 */
import { defaultAdapter } from './adapters/index';
import { realClock, sleep } from './clock';
import { ProcReaperError } from './errors';
import {
  aliveMembers,
  type Exclusions,
  exclusionsFor,
  extendTree,
  identityKey,
  isGone,
  isStopped,
  markerCandidates,
  type ProcessTable,
  planSignals,
  type SignalAction,
  seedTree,
  type TreeState,
  toTable,
} from './tree';
import type {
  Clock,
  KillOptions,
  KillResult,
  PlatformAdapter,
  Reaper,
  ReaperDeps,
  ReapTarget,
  TrackedProcess,
} from './types';

const DEFAULT_GRACE_MS = 2000;
const DEFAULT_POLL_SCHEDULE_MS: readonly number[] = [10, 10, 15, 20, 25];
const DEFAULT_KILL_WAIT_MS = 1000;
/** Upper bound on freeze rounds: each round stops what the previous rescan found. */
const MAX_FREEZE_ROUNDS = 50;
/** How long to wait for SIGSTOP to take effect before rescanning anyway (a process in `D` state may not stop). */
const STOP_WAIT_MS = 250;
/** Freeze-and-kill is repeated at most this often when something escaped (e.g. forked between scan and signal). */
const MAX_KILL_ROUNDS = 3;

/**
 * A reaper bound to an adapter, a clock and the caller's pid. Creating one
 * does nothing; every call lists processes afresh.
 */
export function createReaper(deps: ReaperDeps = {}): Reaper {
  const adapter = deps.adapter ?? defaultAdapter();
  const clock = deps.clock ?? realClock();
  const selfPid = deps.selfPid ?? process.pid;
  const schedule = deps.pollScheduleMs?.length ? deps.pollScheduleMs : DEFAULT_POLL_SCHEDULE_MS;
  const killWaitMs = deps.killWaitMs ?? DEFAULT_KILL_WAIT_MS;
  const cfg: RunConfig = { adapter, clock, selfPid, schedule, killWaitMs };

  return {
    adapter,
    async killTree(target, opts = {}) {
      const t = toTarget(target);
      if (adapter.platform === 'win32') return reapWin32(cfg, t);
      return reapPosix(cfg, t, opts);
    },
    async listDescendants(pid) {
      assertPid(pid);
      const run = new Run(cfg, { pid, trustPid: true });
      await run.snapshot({ allowSelfRoot: true });
      return aliveMembers(run.table, run.state).filter((p) => p !== pid);
    },
    isAlive(pid) {
      if (!Number.isInteger(pid) || pid <= 0) return false;
      if (adapter.signal(pid, 0) === 'gone') return false;
      // kill(pid, 0) succeeds on a zombie; it has exited, so it is not alive.
      if (adapter.readProcess) return !isGone(adapter.readProcess(pid));
      return true;
    },
    async startTimeOf(pid) {
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      const one = adapter.readProcess ? adapter.readProcess(pid) : undefined;
      if (one) return isGone(one) ? undefined : one.startTime;
      const row = (await adapter.listProcesses()).find((p) => p.pid === pid);
      return row && !isGone(row) ? row.startTime : undefined;
    },
  };
}

interface RunConfig {
  adapter: PlatformAdapter;
  clock: Clock;
  selfPid: number;
  schedule: readonly number[];
  killWaitMs: number;
}

function assertPid(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) {
    throw new ProcReaperError(
      'INVALID_PID',
      `proc-reaper: ${String(pid)} is not a process id; pass the positive integer pid of the tree's root.`,
    );
  }
}

function isTracked(t: unknown): t is TrackedProcess {
  return typeof t === 'object' && t !== null && 'child' in t && 'marker' in t;
}

/** Turn what the caller passed into what the algorithm knows about the root. */
export function toTarget(target: number | TrackedProcess | ReapTarget): ReapTarget {
  if (typeof target === 'number') {
    assertPid(target);
    // A bare pid: the caller vouches that this pid is the root right now.
    return { pid: target, trustPid: true };
  }
  assertPid(target.pid);
  if (isTracked(target)) {
    // Once the child has exited, its pid is free to be reused: trust it only
    // while the child runs (the start time, when known, decides anyway).
    const running = target.child.exitCode === null && target.child.signalCode === null;
    const t: ReapTarget = { pid: target.pid, marker: target.marker, trustPid: running };
    if (target.startTime !== undefined) t.startTime = target.startTime;
    return t;
  }
  return target;
}

/** State of one kill (or one listing): the latest table and the tree found so far. */
class Run {
  table: ProcessTable = new Map();
  state: TreeState = { members: new Map(), groups: new Set(), sessions: new Set() };
  ex: Exclusions = { pids: new Set(), groups: new Set(), sessions: new Set() };
  marker: string | undefined;
  rootStart: number | undefined;
  private rootSeen = false;
  /** Identities (`pid:start`) whose environment was already read: read each process's environment once per kill. */
  private readonly markerChecked = new Set<string>();
  private readonly markerKeys = new Set<string>();
  /** Identities a signal was denied to (EPERM). */
  private readonly denied = new Set<string>();

  constructor(
    readonly cfg: RunConfig,
    readonly target: ReapTarget,
  ) {
    this.marker = target.marker;
    this.rootStart = target.startTime;
  }

  /**
   * Step 1: the snapshot, taken before any signal. Once the root dies its
   * children are re-parented and can no longer be found by parent pid, so
   * everything must be found first.
   */
  async snapshot(opts: { allowSelfRoot?: boolean } = {}): Promise<number[]> {
    const { adapter, selfPid } = this.cfg;
    this.table = toTable(await adapter.listProcesses());
    this.ex = exclusionsFor(this.table, selfPid);
    // A pid of ours whose start time differs from the recorded one was recycled
    // into us (or an ancestor): it is not the target; the exclusions keep it safe.
    const own = this.table.get(this.target.pid);
    const recycled =
      this.target.startTime !== undefined
        ? own?.startTime !== undefined && own.startTime !== this.target.startTime
        : !this.target.trustPid;
    if (this.ex.pids.has(this.target.pid) && !recycled) {
      if (!(opts.allowSelfRoot && this.target.pid === selfPid)) {
        throw new ProcReaperError(
          'SELF_TARGET',
          `proc-reaper: refusing to reap pid ${this.target.pid}: it is this process, one of its ancestors, or pid 0/1.`,
        );
      }
      const pids = new Set(this.ex.pids);
      pids.delete(selfPid);
      this.ex = { ...this.ex, pids };
    }
    this.state = seedTree(this.table, this.target, this.ex);
    const root = this.table.get(this.target.pid);
    this.rootSeen = root !== undefined;
    if (root === undefined && !this.target.trustPid) this.requireProofOfRootIds();
    if (root && this.state.members.has(root.pid)) {
      this.rootStart ??= root.startTime;
      // A bare pid: adopt the root's marker, but only if the root is where
      // the marker starts (its parent does not carry it). A process deeper
      // in someone else's tracked tree inherited its marker, and scanning
      // for it would take in that tree's ancestors.
      if (this.marker === undefined && adapter.readMarker) {
        const own = adapter.readMarker(root.pid);
        if (own !== undefined && adapter.readMarker(root.ppid) !== own) this.marker = own;
      }
    }
    this.updateMarkers();
    return [...this.state.members.keys(), ...extendTree(this.table, this.state, this.ex, this.markerPids())];
  }

  /**
   * The root is gone and nobody vouches for its pid (a ledger entry, a
   * handle whose child exited). A group or session with the root's id is
   * the root's leftovers only if the root created it; but once the root's
   * group and session emptied, its pid could be recycled by a stranger that
   * created a group and session with the same id and then exited too (the
   * classic double-forking daemon leaves exactly that). Where environments
   * can be read (Linux), take the root's group and session only if one of
   * their live members carries the tree's marker: one is enough, because
   * the id cannot change hands while any member lives. Elsewhere the ids are
   * taken as they are (see README, "Races that remain").
   */
  private requireProofOfRootIds(): void {
    const { adapter } = this.cfg;
    const id = this.target.pid;
    if (this.marker === undefined || !adapter.readMarker) return;
    if (!this.state.groups.has(id) && !this.state.sessions.has(id)) return;
    for (const p of this.table.values()) {
      if ((p.pgid === id || p.sid === id) && !isGone(p) && adapter.readMarker(p.pid) === this.marker) return;
    }
    this.state.groups.delete(id);
    this.state.sessions.delete(id);
  }

  /**
   * Re-list and grow the tree. `full: false` lets the Linux adapter re-read
   * only members and pids it has not seen (cheap enough to do every poll);
   * freeze rounds and the final check read everything.
   */
  async rescan(full: boolean): Promise<number[]> {
    const { adapter } = this.cfg;
    const hint = full ? undefined : { previous: this.table, reread: new Set(this.state.members.keys()) };
    this.table = toTable(await adapter.listProcesses(hint));
    this.updateMarkers();
    return extendTree(this.table, this.state, this.ex, this.markerPids());
  }

  /** Read the marker of processes not checked yet (never the same identity twice). */
  private updateMarkers(): void {
    const { adapter } = this.cfg;
    if (this.marker === undefined || !adapter.readMarker) return;
    for (const p of markerCandidates(this.table, this.markerChecked, this.rootStart, this.ex)) {
      const key = identityKey(p);
      this.markerChecked.add(key);
      if (adapter.readMarker(p.pid) === this.marker) this.markerKeys.add(key);
    }
  }

  /** Pids of the current table whose identity carries the marker (a recycled pid does not). */
  private markerPids(): Set<number> {
    const out = new Set<number>();
    if (this.markerKeys.size === 0) return out;
    for (const p of this.table.values()) if (this.markerKeys.has(identityKey(p))) out.add(p.pid);
    return out;
  }

  alive(): number[] {
    return aliveMembers(this.table, this.state);
  }

  /**
   * Live members that can still be acted on: without those a signal was
   * denied to (EPERM: another user's process). Waiting for those to act on
   * a signal they never got would only sit out every timeout; they are
   * still reported as survivors if they stay.
   */
  pending(): number[] {
    return this.alive().filter((pid) => !this.isDenied(pid));
  }

  isDenied(pid: number): boolean {
    const info = this.table.get(pid);
    return info !== undefined && this.denied.has(identityKey(info));
  }

  /** Members, root first, without a root that was already gone at the snapshot (it was never seen). */
  seenMembers(): number[] {
    const pids = [...this.state.members.keys()];
    return this.rootSeen ? pids : pids.filter((pid) => pid !== this.target.pid);
  }

  send(actions: readonly SignalAction[]): void {
    for (const a of actions) {
      const outcome = this.cfg.adapter.signal(a.pid, a.signal);
      // A group answers EPERM only when no member at all could be signalled: say nothing about any one of them.
      const info = a.pid > 0 ? this.table.get(a.pid) : undefined;
      if (outcome === 'denied' && info !== undefined) this.denied.add(identityKey(info));
    }
  }

  /** The i-th poll interval: short at first (a well-behaved tree is gone within a few ms), then up to 25 ms. */
  interval(i: number): number {
    const s = this.cfg.schedule;
    return s[Math.min(i, s.length - 1)] ?? 25;
  }
}

/** Steps 1-5 on POSIX (Linux, macOS, other Unix). */
async function reapPosix(cfg: RunConfig, target: ReapTarget, opts: KillOptions): Promise<KillResult> {
  const { clock } = cfg;
  const started = clock.now();
  const signal = opts.signal ?? 'SIGTERM';
  const graceMs = Math.max(0, opts.graceMs ?? DEFAULT_GRACE_MS);
  const run = new Run(cfg, target);

  // 1. Snapshot before any signal (parent-pid walk + group + session + marker).
  await run.snapshot();
  let alive = run.alive();
  let forced = false;

  // 2. First signal: the member groups, then every member pid whose start
  //    time still matches (a pid that was recycled is not ours). Signalling
  //    by pid after checking the start time leaves a window of a few
  //    microseconds for reuse; Node has no pidfd_send_signal to close it.
  if (signal !== 'SIGKILL' && alive.length > 0) {
    run.send(planSignals(run.table, run.state, signal));
    // A process stopped by job control or a debugger would not act on
    // SIGTERM until continued: continue it so that it can exit cleanly.
    const stopped = alive.filter((pid) => isStopped(run.table.get(pid)));
    run.send(stopped.map((pid) => ({ pid, signal: 'SIGCONT' as const })));

    // 3. Poll until every member is gone or the grace period ends,
    //    rescanning for processes forked during the kill; each newcomer gets
    //    the same first signal. A zombie counts as dead.
    const deadline = clock.now() + graceMs;
    for (let i = 0; run.pending().length > 0 && clock.now() < deadline; i++) {
      await sleep(clock, Math.min(run.interval(i), Math.max(1, deadline - clock.now())));
      const joined = await run.rescan(false);
      if (joined.length > 0) {
        run.send(planSignals(run.table, run.state, signal, { only: new Set(joined), groups: false }));
      }
      alive = run.alive();
    }
  }

  // 4. + 5. Escalate, then check with a full listing; repeat if something
  //    escaped (bounded), and report what is still alive.
  for (let round = 0; ; round++) {
    await run.rescan(true);
    alive = run.alive();
    if (alive.length === 0 || round >= MAX_KILL_ROUNDS) break;
    // Once SIGKILL was denied, another round would be denied again.
    if (round > 0 && run.pending().length === 0) break;
    forced = true;
    await freezeAndKill(run);
    await waitGone(run, cfg.killWaitMs);
  }

  return { pids: run.seenMembers(), survivors: alive, forced, ms: clock.now() - started };
}

/**
 * Step 4. SIGKILLing a tree that keeps forking can miss the child forked
 * between the last scan and the signal. So first freeze: SIGSTOP every live
 * member, wait until they really are stopped (state `T`: a fork in flight
 * has completed and its child is visible), rescan; repeat while the rescan
 * finds new members. When a rescan finds nothing new, nothing in the tree
 * can fork any more: SIGKILL them all (and their groups). SIGKILL works on
 * stopped processes; SIGCONT afterwards makes sure nothing we stopped stays
 * frozen if it somehow survived.
 */
async function freezeAndKill(run: Run): Promise<void> {
  const stopped = new Set<string>();
  for (let round = 0; round < MAX_FREEZE_ROUNDS; round++) {
    if (round > 0) await run.rescan(true);
    const fresh = run.pending().filter((pid) => {
      const info = run.table.get(pid);
      return info !== undefined && !stopped.has(identityKey(info));
    });
    if (round > 0 && fresh.length === 0) break; // the set stopped growing
    run.send(planSignals(run.table, run.state, 'SIGSTOP', { only: new Set(fresh) }));
    for (const pid of fresh) {
      const info = run.table.get(pid);
      if (info) stopped.add(identityKey(info));
    }
    await waitStopped(run, fresh);
  }
  run.send(planSignals(run.table, run.state, 'SIGKILL'));
  const cont: SignalAction[] = [...run.state.groups].map((g) => ({ pid: -g, signal: 'SIGCONT' }));
  for (const key of stopped) cont.push({ pid: Number(key.slice(0, key.indexOf(':'))), signal: 'SIGCONT' });
  // Groups and pids that are gone answer ESRCH, which is fine. Only groups
  // that still had a live member were signalled with SIGKILL above; a
  // SIGCONT to an empty group id is harmless (a continued process is not hurt).
  run.send(cont.filter((a) => a.pid > 0 || hasLiveMemberInGroup(run, -a.pid)));
}

function hasLiveMemberInGroup(run: Run, g: number): boolean {
  return run.alive().some((pid) => run.table.get(pid)?.pgid === g);
}

/** Wait (bounded) until each of `pids` is stopped or gone. Platforms that report no state just get one short pause. */
async function waitStopped(run: Run, pids: readonly number[]): Promise<void> {
  const { clock } = run.cfg;
  const deadline = clock.now() + STOP_WAIT_MS;
  for (let i = 0; clock.now() < deadline; i++) {
    await run.rescan(false);
    const pending = pids.filter((pid) => {
      const info = run.table.get(pid);
      return !isGone(info) && !isStopped(info) && info?.state !== undefined && !run.isDenied(pid);
    });
    if (pending.length === 0) return;
    await sleep(clock, Math.min(5 + i * 5, 25));
  }
}

/** Wait (bounded) until no member is alive. */
async function waitGone(run: Run, ms: number): Promise<void> {
  const { clock } = run.cfg;
  const deadline = clock.now() + ms;
  for (let i = 0; clock.now() < deadline; i++) {
    await run.rescan(false);
    if (run.pending().length === 0) return;
    await sleep(clock, run.interval(i));
  }
}

/**
 * Windows: there are no signals and no process groups; everything is
 * forced. `taskkill /PID <pid> /T /F` first, while the root is alive
 * (taskkill finds descendants from the root, so it cannot once the root is
 * gone), then every snapshot member that is still alive with the same
 * creation time, individually (orphans whose parent died before the kill,
 * children created while taskkill ran). Repeat (bounded) while a fresh
 * listing finds live members.
 */
async function reapWin32(cfg: RunConfig, target: ReapTarget): Promise<KillResult> {
  const { adapter, clock } = cfg;
  const started = clock.now();
  const run = new Run(cfg, target);
  await run.snapshot();
  let alive = run.alive();
  let forced = false;
  if (alive.includes(target.pid) && adapter.treeKill) {
    forced = true;
    await adapter.treeKill(target.pid);
  }
  for (let round = 0; ; round++) {
    if (round > 0 || forced) await run.rescan(true);
    alive = run.alive();
    if (alive.length === 0 || round >= MAX_KILL_ROUNDS) break;
    // What could not be terminated (access denied) will not be next time either.
    if (round > 0 && run.pending().length === 0) break;
    forced = true;
    run.send(run.pending().map((pid) => ({ pid, signal: 'SIGKILL' as const })));
    // Listing through CIM costs most of a second: poll with a cheap probe
    // instead, then confirm with one listing at the top of the loop.
    const deadline = clock.now() + cfg.killWaitMs;
    let pending = run.pending();
    for (let i = 0; pending.length > 0 && clock.now() < deadline; i++) {
      await sleep(clock, run.interval(i));
      pending = pending.filter((pid) => adapter.signal(pid, 0) !== 'gone');
    }
  }
  return { pids: run.seenMembers(), survivors: alive, forced, ms: clock.now() - started };
}
