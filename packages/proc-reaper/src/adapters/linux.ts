import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { parseEnvironMarker, parseProcStat } from '../parse';
import type { KillFn, ListHint, PlatformAdapter, ProcessInfo } from '../types';
import { processKill, sendSignal } from './signal';

export interface LinuxAdapterOptions {
  /** Root of the proc filesystem; tests point it at a fake tree. @default '/proc' */
  procRoot?: string;
  /** @default process.kill */
  kill?: KillFn;
}

/**
 * Linux: read `/proc` directly, never run `ps`.
 *
 * Cost (measured on a 2-core VM, see README): about 10 us per process for a
 * full listing with one reused buffer and synchronous open/read/close, which
 * is 3-7x faster than `fs.promises` for thousands of tiny files. Rescans
 * while a kill polls re-read only the tree's members and pids that were not
 * in the previous listing (new processes); a pid that was in the previous
 * listing and is not a member keeps its row, because a non-member cannot
 * become a member (its parent, group, session and environment do not
 * change) and the pid cannot be recycled within one poll interval.
 */
export function createLinuxAdapter(opts: LinuxAdapterOptions = {}): PlatformAdapter {
  const root = opts.procRoot ?? '/proc';
  const kill = opts.kill ?? processKill;
  // One buffer per adapter (not per module), allocated on first use: a stat
  // line is at most ~1.2 KiB (52 numeric fields and a 16-byte name).
  let buf: Buffer | undefined;

  const readStat = (pid: string): ProcessInfo | undefined => {
    let fd: number | undefined;
    buf ??= Buffer.allocUnsafe(4096);
    try {
      fd = openSync(`${root}/${pid}/stat`, 'r');
      const n = readSync(fd, buf, 0, buf.length, 0);
      return parseProcStat(buf.toString('latin1', 0, n));
    } catch {
      return undefined; // exited between readdir and open: simply gone
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };

  return {
    platform: 'linux',
    async listProcesses(hint?: ListHint): Promise<ProcessInfo[]> {
      const out: ProcessInfo[] = [];
      let entries: string[];
      try {
        entries = readdirSync(root);
      } catch {
        return out;
      }
      for (const name of entries) {
        const c = name.charCodeAt(0);
        if (c < 48 || c > 57) continue; // not a pid directory
        if (hint !== undefined) {
          const pid = Number(name);
          const prev = hint.previous.get(pid);
          if (prev !== undefined && !hint.reread.has(pid)) {
            out.push(prev);
            continue;
          }
        }
        const info = readStat(name);
        if (info !== undefined) out.push(info);
      }
      return out;
    },
    readMarker(pid: number): string | undefined {
      try {
        return parseEnvironMarker(readFileSync(`${root}/${pid}/environ`));
      } catch {
        return undefined; // gone, or another user's process (EACCES)
      }
    },
    readProcess: (pid: number) => readStat(String(pid)),
    signal: (pid, signal) => sendSignal(kill, pid, signal),
  };
}
