import { createReaper } from './engine';
import type { KillOptions, KillResult, TrackedProcess } from './types';

/**
 * Kill a whole process tree and resolve with what happened. Never rejects
 * for a process that is already dead (ESRCH is success).
 *
 * Steps: snapshot the tree before any signal (parent-pid walk, the root's
 * process group and session, processes carrying its marker); send `signal`
 * to the group and every member whose start time still matches; poll every
 * 10-25 ms until the grace period ends, signalling processes forked
 * meanwhile; then SIGSTOP every survivor until the tree stops growing,
 * SIGKILL all, SIGCONT; check again and report survivors (e.g. EPERM).
 * Windows: `taskkill /PID <pid> /T /F` while the root is alive, then the
 * snapshot members one by one.
 *
 * Pass the handle from {@link spawnTracked} rather than its pid when you
 * can: the handle carries the marker and start time, so the tree is found
 * even after the root exited, and a recycled pid is never signalled.
 *
 * @throws {ProcReaperError} `INVALID_PID` (not a positive integer) or
 * `SELF_TARGET` (the calling process or an ancestor of it).
 */
export function killTree(target: number | TrackedProcess, opts?: KillOptions): Promise<KillResult> {
  return createReaper().killTree(target, opts);
}

/**
 * The live processes `killTree(pid)` would reach, root excluded, parents
 * before children: descendants by parent pid, members of the group and
 * session the root leads, and (Linux) processes carrying the root's marker.
 */
export function listDescendants(pid: number): Promise<number[]> {
  return createReaper().listDescendants(pid);
}

/** Is `pid` a running process? A zombie (exited, not yet collected) is not. Never throws. */
export function isAlive(pid: number): boolean {
  return createReaper().isAlive(pid);
}
