import { type ChildProcess, spawn } from 'node:child_process';
import { createReaper } from './engine';
import { ProcReaperError } from './errors';
import { createMarker, MARKER_ENV, resolveMarkerNamespace } from './marker';
import type { SpawnOptions, TrackedProcess } from './types';

/**
 * Spawn a child so that its whole tree can be reaped later.
 *
 * - POSIX: `detached: true`, so the child leads a new session and process
 *   group: the group catches grandchildren even after they are orphaned,
 *   and no terminal signal (Ctrl-C in the host's terminal) reaches the tree
 *   behind the host's back.
 * - Windows: not detached (a detached child would get its own console
 *   window), `windowsHide: true`.
 * - stdio is piped (`['pipe', 'pipe', 'pipe']`) unless `stdio` says otherwise.
 * - The child's environment (`options.env`, else `process.env`) gets
 *   `WAVE_REAPER_ID=<namespace>:<uuid>`; every descendant that does not
 *   scrub its environment inherits it, so the tree is found even when
 *   parent links are broken (double fork, `setsid`).
 *
 * The start time is read at once on Linux (one small file), so a recycled
 * pid is recognised later.
 *
 * @throws {ProcReaperError} `SPAWN_FAILED` when no process was created (not
 * found, not executable, missing `cwd`, arguments `spawn` rejects); the
 * message names the command (and `cwd`), `cause` holds Node's error when
 * there was one at once. Nothing is left behind.
 */
export function spawnTracked(
  command: string,
  args: readonly string[] = [],
  options: SpawnOptions = {},
): TrackedProcess {
  const { markerNamespace, reaper: givenReaper, env, ...rest } = options;
  const baseEnv = env ?? process.env;
  const marker = createMarker(resolveMarkerNamespace(markerNamespace, process.env));
  const isWindows = process.platform === 'win32';
  const cwdHint = rest.cwd === undefined ? '' : `, and that the working directory ${String(rest.cwd)} exists`;
  const failed = (reason: string, cause?: unknown) =>
    new ProcReaperError(
      'SPAWN_FAILED',
      `proc-reaper: could not start "${command}": ${reason}. Check that the command exists, is on PATH and is executable${cwdHint}.`,
      cause === undefined ? undefined : { cause },
    );
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      stdio: 'pipe',
      ...rest,
      env: { ...baseEnv, [MARKER_ENV]: marker },
      detached: !isWindows,
      windowsHide: true,
    });
  } catch (err) {
    // spawn() throws at once for bad arguments (a NUL byte, a bad option)
    // and for some OS errors (EPERM from `uid`/`gid`): no process exists.
    throw failed((err as Error).message, err);
  }
  const pid = child.pid;
  if (pid === undefined) {
    // Node reports the reason (ENOENT, EACCES; a missing cwd is ENOENT too)
    // in an 'error' event on the next tick and closes the pipes itself; the
    // caller never sees this child, so swallow that event instead of letting
    // it crash the host as an unhandled 'error'.
    child.once('error', () => {});
    throw failed('no process was created');
  }
  const reaper = givenReaper ?? createReaper();
  const startTime = reaper.adapter.readProcess?.(pid)?.startTime;
  const handle: TrackedProcess = {
    child,
    pid,
    marker,
    pgid: isWindows ? undefined : pid,
    startTime,
    kill: (opts) => reaper.killTree(handle, opts),
    [Symbol.asyncDispose]: async () => {
      await reaper.killTree(handle);
    },
  };
  return handle;
}
