import type { KillFn, SignalOutcome } from '../types';

/**
 * `kill(2)` with the outcome as a value: ESRCH (no such process) is a
 * success for a reaper ("already dead"), EPERM is reported, never thrown.
 */
export function sendSignal(kill: KillFn, pid: number, signal: NodeJS.Signals | 0): SignalOutcome {
  try {
    kill(pid, signal);
    return 'ok';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM') return 'denied';
    return 'gone';
  }
}

/** `process.kill`, bound late so that tests can spy on it. */
export const processKill: KillFn = (pid, signal) => {
  process.kill(pid, signal);
};
