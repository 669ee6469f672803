import { CIM_SCRIPT, parseCimOutput } from '../parse';
import type { CommandRunner, KillFn, PlatformAdapter, ProcessInfo } from '../types';
import { execRunner } from './runner';
import { processKill, sendSignal } from './signal';

export interface Win32AdapterOptions {
  /** @default execFile (no window) */
  runner?: CommandRunner;
  /** @default process.kill (TerminateProcess on Windows) */
  kill?: KillFn;
}

/** Arguments of the PowerShell run that lists processes through CIM (no `wmic`, removed from Windows 11). */
export const POWERSHELL_ARGS: readonly string[] = ['-NoProfile', '-NonInteractive', '-Command', CIM_SCRIPT];

/**
 * Windows: list through PowerShell CIM (`Win32_Process`: pid, parent pid,
 * creation date), kill through `taskkill /PID <pid> /T /F`, which walks the
 * tree itself but only while the root is alive. There are no process groups
 * and no signals: `process.kill` is TerminateProcess, whatever the signal.
 */
export function createWin32Adapter(opts: Win32AdapterOptions = {}): PlatformAdapter {
  const runner = opts.runner ?? execRunner;
  const kill = opts.kill ?? processKill;
  return {
    platform: 'win32',
    async listProcesses(): Promise<ProcessInfo[]> {
      const { stdout } = await runner('powershell.exe', POWERSHELL_ARGS, { timeoutMs: 30_000 });
      return parseCimOutput(stdout);
    },
    signal: (pid, signal) => {
      // Negative pids (groups) mean nothing on Windows.
      if (pid <= 0) return 'gone';
      return sendSignal(kill, pid, signal);
    },
    async treeKill(pid: number): Promise<void> {
      // Exit code 128 = "not found": already gone, which is success.
      await runner('taskkill', ['/PID', String(pid), '/T', '/F'], { timeoutMs: 30_000 });
    },
  };
}
