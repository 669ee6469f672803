/**
 * A simulated process table for unit tests of the algorithm and the
 * macOS/Windows adapters: processes with parent, group, session, start time,
 * state and marker; signals with their POSIX effects; an instant clock.
 */
import type { Clock, PlatformAdapter, ProcessInfo } from '../src/types';

export interface FakeProc {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  startTime: number;
  state: 'S' | 'T' | 'Z' | 'D';
  marker?: string;
  /** Survives SIGTERM. */
  ignoresTerm?: boolean;
  /** Becomes a zombie instead of disappearing (its parent does not reap). */
  zombieOnExit?: boolean;
  /**
   * Forks in the worst possible moment: right after the reaper took a
   * listing and before its next signal lands, so the newest child is never
   * in the table the reaper holds. Children fork too, once they are 3
   * listings old (a newborn needs time to exec before it can fork; this is
   * what makes freezing converge, as in reality). `same` keeps group and
   * session, `setsid` starts a new session.
   */
  forker?: 'same' | 'setsid';
  /** Value of `listings` when it was born. */
  born?: number;
  /** Signals to it fail with EPERM. */
  foreign?: boolean;
  pendingTerm?: boolean;
}

export class FakeOS {
  readonly procs = new Map<number, FakeProc>();
  /** Every signal sent, in order: `TERM 12`, `KILL -12` (group), `CONT 13 ESRCH` (no such process)... */
  readonly log: string[] = [];
  now = 0;
  private nextPid = 100;
  private tick = 1000;
  listings = 0;

  add(p: Partial<FakeProc> & { ppid: number }): FakeProc {
    const pid = p.pid ?? this.nextPid++;
    const parent = this.procs.get(p.ppid);
    const proc: FakeProc = {
      state: 'S',
      startTime: this.tick++,
      pgid: parent?.pgid ?? pid,
      sid: parent?.sid ?? pid,
      ...p,
      pid,
    };
    if (p.marker === undefined && parent?.marker !== undefined) proc.marker = parent.marker;
    this.procs.set(pid, proc);
    return proc;
  }

  /** A child of `parent` inheriting group, session, marker and ignored signals (like fork). */
  fork(parent: FakeProc, extra: Partial<FakeProc> = {}): FakeProc {
    const child = this.add({
      ppid: parent.pid,
      pgid: parent.pgid,
      sid: parent.sid,
      ignoresTerm: parent.ignoresTerm,
      ...(parent.marker !== undefined ? { marker: parent.marker } : {}),
      ...extra,
    });
    if (extra.pgid === undefined && extra.sid === undefined && parent.forker === 'setsid') {
      child.pgid = child.pid;
      child.sid = child.pid;
    }
    return child;
  }

  /** POSIX re-parents orphans to pid 1; Windows keeps the dead parent's pid. */
  reparent = true;

  exit(pid: number): void {
    const p = this.procs.get(pid);
    if (!p) return;
    if (this.reparent) for (const c of this.procs.values()) if (c.ppid === pid) c.ppid = 1;
    if (p.zombieOnExit) p.state = 'Z';
    else this.procs.delete(pid);
  }

  rows(): ProcessInfo[] {
    this.listings++;
    const rows = [...this.procs.values()].map((p) => ({
      pid: p.pid,
      ppid: p.ppid,
      pgid: p.pgid,
      sid: p.sid,
      state: p.state,
      startTime: p.startTime,
    }));
    this.forkPending = true;
    return rows;
  }

  private forkPending = false;

  /** Forkers fork between a listing and the next signal. */
  private forkNow(): void {
    if (!this.forkPending) return;
    this.forkPending = false;
    for (const p of [...this.procs.values()]) {
      if (!p.forker || p.state !== 'S' || this.listings - (p.born ?? 0) < 3) continue;
      this.fork(p, { forker: p.forker, born: this.listings });
    }
  }

  kill(pid: number, signal: NodeJS.Signals | 0): void {
    if (signal !== 0) this.forkNow();
    const one = this.procs.get(pid);
    const targets =
      pid < 0 ? [...this.procs.values()].filter((p) => p.pgid === -pid && p.state !== 'Z') : one ? [one] : [];
    if (signal !== 0)
      this.log.push(`${signal.replace('SIG', '')} ${pid}${targets.length === 0 ? ' ESRCH' : ''}`);
    if (targets.length === 0) throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
    if (signal === 0) return;
    for (const p of targets) {
      if (p.foreign) throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
      if (p.state === 'Z') continue; // kill(2) on a zombie succeeds and does nothing
      if (signal === 'SIGKILL') this.exit(p.pid);
      else if (signal === 'SIGSTOP') p.state = 'T';
      else if (signal === 'SIGCONT') {
        if (p.state === 'T') p.state = 'S';
        if (p.pendingTerm && !p.ignoresTerm) this.exit(p.pid);
      } else if (p.state === 'T') {
        p.pendingTerm = true; // a stopped process acts on it only once continued
      } else if (!p.ignoresTerm) {
        this.exit(p.pid);
      }
    }
  }

  /** POSIX adapter over this table (Linux-like when `markers` is true, macOS-like otherwise). */
  posixAdapter(opts: { markers?: boolean } = {}): PlatformAdapter {
    const adapter: PlatformAdapter = {
      platform: opts.markers ? 'linux' : 'darwin',
      listProcesses: async () => this.rows(),
      signal: (pid, signal) => {
        try {
          this.kill(pid, signal);
          return 'ok';
        } catch (err) {
          return (err as { code: string }).code === 'EPERM' ? 'denied' : 'gone';
        }
      },
    };
    if (opts.markers) {
      adapter.readMarker = (pid) => this.procs.get(pid)?.marker;
      adapter.readProcess = (pid) => this.rowOf(pid);
    }
    return adapter;
  }

  /** A clock whose timers fire at once and advance `now`: tests never sleep. */
  clock(): Clock {
    return {
      now: () => this.now,
      setTimeout: (fn, ms) => {
        this.now += ms;
        queueMicrotask(fn);
        return 0;
      },
      clearTimeout: () => {},
    };
  }

  rowOf(pid: number): ProcessInfo | undefined {
    const p = this.procs.get(pid);
    return (
      p && { pid: p.pid, ppid: p.ppid, pgid: p.pgid, sid: p.sid, state: p.state, startTime: p.startTime }
    );
  }

  alive(): number[] {
    return [...this.procs.values()].filter((p) => p.state !== 'Z').map((p) => p.pid);
  }
}
