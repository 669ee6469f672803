import { PS_ARGS, parsePsOutput } from '../parse';
import type { CommandRunner, KillFn, PlatformAdapter, ProcessInfo } from '../types';
import { execRunner } from './runner';
import { processKill, sendSignal } from './signal';

export interface DarwinAdapterOptions {
  /** @default execFile with LC_ALL=C and TZ=UTC */
  runner?: CommandRunner;
  /** @default process.kill */
  kill?: KillFn;
}

/**
 * macOS (and other POSIX systems without `/proc`): one
 * `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` per listing. `stat` tells
 * zombies and stopped processes apart; `lstart` gives a start time, so a
 * recycled pid is recognised. The environment of other processes is not
 * readable cheaply, so there is no marker scan: the parent-pid walk and the
 * process group do the work.
 */
export function createDarwinAdapter(opts: DarwinAdapterOptions = {}): PlatformAdapter {
  const runner = opts.runner ?? execRunner;
  const kill = opts.kill ?? processKill;
  return {
    platform: 'darwin',
    async listProcesses(): Promise<ProcessInfo[]> {
      const { stdout } = await runner('ps', PS_ARGS, { timeoutMs: 10_000 });
      return parsePsOutput(stdout);
    },
    signal: (pid, signal) => sendSignal(kill, pid, signal),
  };
}
