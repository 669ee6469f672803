/**
 * Independent oracles for the real-process tests: they read /proc on their
 * own (not through the package) so that a bug in the reaper cannot hide
 * itself. Plus a cleanup registry: every test SIGKILLs, by pid, whatever it
 * started and is still alive.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const fixture = (name: string): string =>
  fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** State letter from /proc/<pid>/stat, or undefined when there is no such process. */
export function procState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** Running: present and neither a zombie nor dead. */
export function running(pid: number): boolean {
  const s = procState(pid);
  return s !== undefined && s !== 'Z' && s !== 'X';
}

/** Pids of running processes whose environment has WAVE_REAPER_ID=<marker>. */
export function markerCarriers(marker: string): number[] {
  const needle = Buffer.from(`WAVE_REAPER_ID=${marker}\0`);
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`);
      if (
        (env.indexOf(needle) === 0 || env.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0) &&
        running(Number(name))
      ) {
        out.push(Number(name));
      }
    } catch {}
  }
  return out;
}

/** Pids of running processes in process group `pgid` or session `sid`. */
export function groupOrSessionMembers(id: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'latin1');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      if ((Number(f[2]) === id || Number(f[3]) === id) && f[0] !== 'Z') out.push(Number(name));
    } catch {}
  }
  return out;
}

/** First stdout line starting with `prefix` (rest of the line), bounded. */
export function readLine(child: ChildProcess, prefix: string, timeoutMs = 30_000): Promise<string> {
  const stdout = child.stdout;
  if (!stdout) return Promise.reject(new Error('child has no stdout pipe'));
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: stdout });
    const timer = setTimeout(() => {
      rl.close();
      reject(new Error(`no "${prefix}" line within ${timeoutMs} ms`));
    }, timeoutMs);
    rl.on('line', (line) => {
      if (!line.startsWith(prefix)) return;
      clearTimeout(timer);
      rl.close();
      resolve(line.slice(prefix.length));
    });
  });
}

/** What a test started: pids and markers, SIGKILLed (by pid) in afterEach. */
export function createCleanup() {
  const pids = new Set<number>();
  const markers = new Set<string>();
  return {
    pid(...list: (number | undefined)[]) {
      for (const p of list) if (p !== undefined) pids.add(p);
    },
    marker(m: string) {
      markers.add(m);
    },
    /** SIGKILL everything still running; returns how many had to be killed. */
    run(): number {
      const all = new Set(pids);
      for (const m of markers) for (const p of markerCarriers(m)) all.add(p);
      let killed = 0;
      for (const p of all) {
        if (p === process.pid || !running(p)) continue;
        try {
          process.kill(p, 'SIGKILL');
          killed++;
        } catch {}
      }
      pids.clear();
      markers.clear();
      return killed;
    },
  };
}
