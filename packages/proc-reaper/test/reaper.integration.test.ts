import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
/**
 * Real processes on Linux: every "Done means" bullet of the issue that needs
 * a real kernel. Oracles come from ./helpers (own /proc reads), not from the
 * package.
 */
import { waitFor } from '@wave/testkit';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, killTree, listDescendants } from '../src/api';
import { ProcReaperError } from '../src/errors';
import { spawnTracked } from '../src/spawn';
import type { KillResult, TrackedProcess } from '../src/types';
import {
  createCleanup,
  fixture,
  groupOrSessionMembers,
  markerCarriers,
  procState,
  readLine,
  running,
} from './helpers';

const cleanup = createCleanup();
afterEach(() => {
  cleanup.run();
});

interface HostileTree {
  middle: number;
  ignorer: number;
  setsid: number;
  doubleFork: number;
}
interface WellTree {
  middle: number;
  sleep: number;
  shell: number;
  shellSleepA: number;
  shellSleepB: number;
  node: number;
}

/** sh -> node tree.mjs -> grandchildren. The sh waits (`; exit $?`), so it is a real level. */
async function startTree<T>(
  shape: 'hostile' | 'well',
  log?: string,
): Promise<{ p: TrackedProcess; pids: T }> {
  const p = spawnTracked('sh', ['-c', `"${process.execPath}" "${fixture('tree.mjs')}"; exit $?`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TREE_SHAPE: shape, TREE_LOG: log ?? '/dev/null' },
  });
  cleanup.pid(p.pid);
  cleanup.marker(p.marker);
  const pids = JSON.parse(await readLine(p.child, 'PIDS ')) as T;
  cleanup.pid(...(Object.values(pids as object) as number[]));
  return { p, pids };
}

const tempDir = (): string => makeTempDir('proc-reaper-');

/**
 * The EPERM test runs killTree as user nobody against our process: only
 * possible as root, and only where nobody can read this checkout (not, say,
 * under a private /root).
 */
function canRunAsNobody(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = spawnSync(process.execPath, ['--import', 'tsx', fixture('kill-as.ts'), 'probe'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    uid: 65534,
    gid: 65534,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return probe.status === 0 && probe.stdout.startsWith('ERROR ');
}

describe.runIf(process.platform === 'linux')('killTree on real process trees (Linux)', () => {
  it('control: killing only the direct child (as the SDK does) leaves the grandchildren alive', async () => {
    const { p, pids } = await startTree<HostileTree>('hostile');
    process.kill(p.pid, 'SIGTERM');
    process.kill(p.pid, 'SIGKILL');
    await waitFor(() => !running(p.pid));
    expect(running(p.pid)).toBe(false);
    // Give them every chance to die on their own: they do not.
    await new Promise((r) => setTimeout(r, 300));
    for (const pid of Object.values(pids)) expect(running(pid)).toBe(true);
  });

  it('3-level hostile tree (SIGTERM-ignorer, setsid, double fork): 0 survivors, the ignorer is SIGKILLed after the grace period', async () => {
    const log = join(tempDir(), 'term.log');
    const { p, pids } = await startTree<HostileTree>('hostile', log);
    const all = [p.pid, ...Object.values(pids)];
    // Sanity: the shapes are what the test claims.
    expect(procState(pids.doubleFork)).toBeDefined();
    expect(readFileSync(`/proc/${pids.doubleFork}/stat`, 'latin1')).not.toContain(` ${pids.middle} `);

    const graceMs = 400;
    const kill = p.kill({ graceMs });
    // Halfway through the grace period the ignorer has had SIGTERM and is still there.
    await waitFor(
      () => {
        try {
          return readFileSync(log, 'utf8').includes('TERM');
        } catch {
          return false;
        }
      },
      { timeoutMs: 2000 },
    );
    expect(readFileSync(log, 'utf8')).toMatch(/^TERM \d+/);
    expect(running(pids.ignorer)).toBe(true);
    const result = await kill;

    expect(result.survivors).toEqual([]);
    expect(result.forced).toBe(true);
    expect(result.ms).toBeGreaterThanOrEqual(graceMs);
    expect(new Set(result.pids)).toEqual(new Set(all));
    for (const pid of all) expect(running(pid)).toBe(false);
    expect(markerCarriers(p.marker)).toEqual([]);
    expect(groupOrSessionMembers(p.pid)).toEqual([]);
    expect(groupOrSessionMembers(pids.setsid)).toEqual([]);
  });

  it('well-behaved tree: gone before the grace period, nothing forced', async () => {
    const { p, pids } = await startTree<WellTree>('well');
    const before = await listDescendants(p.pid);
    // The snapshot sees the whole tree, down to the shell's own children.
    for (const pid of Object.values(pids)) expect(before).toContain(pid);
    const result = await killTree(p, { graceMs: 10_000 });
    expect(result.survivors).toEqual([]);
    expect(result.forced).toBe(false);
    // It did not sit out the grace period (the figure itself is in the benchmark).
    expect(result.ms).toBeLessThan(10_000);
    for (const pid of [p.pid, ...before, ...Object.values(pids)]) expect(running(pid)).toBe(false);
    expect(markerCarriers(p.marker)).toEqual([]);
  });

  it('root exited first: the handle still reaps the group member, the setsid child and the orphan', async () => {
    const p = spawnTracked('sh', [fixture('root-exits.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanup.pid(p.pid);
    cleanup.marker(p.marker);
    const pids = (await readLine(p.child, 'PIDS ')).split(' ').map(Number);
    cleanup.pid(...pids);
    await new Promise<void>((r) => (p.child.exitCode !== null ? r() : p.child.once('exit', () => r())));
    await waitFor(() => !running(p.pid));
    for (const pid of pids) expect(running(pid)).toBe(true);

    const result = await p.kill({ graceMs: 2000 });
    expect(result.survivors).toEqual([]);
    expect(result.forced).toBe(false);
    for (const pid of pids) expect(result.pids).toContain(pid);
    for (const pid of pids) expect(running(pid)).toBe(false);
  });

  it('root exited first, bare pid: the process group still finds the rest (only the marker could find a setsid child)', async () => {
    const p = spawnTracked('sh', [fixture('root-exits.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanup.pid(p.pid);
    cleanup.marker(p.marker);
    const [inGroup, setsid, orphan] = (await readLine(p.child, 'PIDS ')).split(' ').map(Number) as [
      number,
      number,
      number,
    ];
    cleanup.pid(inGroup, setsid, orphan);
    await new Promise<void>((r) => (p.child.exitCode !== null ? r() : p.child.once('exit', () => r())));

    const result = await killTree(p.pid, { graceMs: 1000 });
    expect(result.survivors).toEqual([]);
    expect(running(inGroup)).toBe(false);
    expect(running(orphan)).toBe(false);
    // A bare pid carries no marker, so the setsid'd child (other group, other
    // session, parent gone) is out of reach: this is why hosts pass the handle.
    expect(running(setsid)).toBe(true);
  });

  it('a process forking continuously during the kill: 0 survivors over 10 trials', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const p = spawnTracked('sh', [fixture('forker.sh')], { stdio: 'ignore' });
      cleanup.pid(p.pid);
      cleanup.marker(p.marker);
      // Let it build up a crowd of children, setsid'd children and orphans.
      await waitFor(() => markerCarriers(p.marker).length >= 12, { timeoutMs: 5000 });
      const result = await p.kill({ graceMs: 150 });
      expect(result.survivors, `trial ${trial}`).toEqual([]);
      expect(result.forced).toBe(true);
      expect(markerCarriers(p.marker), `trial ${trial}`).toEqual([]);
      expect(groupOrSessionMembers(p.pid), `trial ${trial}`).toEqual([]);
      expect(result.pids.length).toBeGreaterThanOrEqual(12);
    }
  });

  it('SIGKILL as the first signal skips the grace period', async () => {
    const { p, pids } = await startTree<HostileTree>('hostile');
    const result = await p.kill({ signal: 'SIGKILL', graceMs: 60_000 });
    expect(result.forced).toBe(true);
    expect(result.survivors).toEqual([]);
    expect(result.ms).toBeLessThan(60_000);
    for (const pid of Object.values(pids)) expect(running(pid)).toBe(false);
  });

  it('listDescendants finds the whole tree, including the setsid child and the orphan', async () => {
    const { p, pids } = await startTree<HostileTree>('hostile');
    const found = await listDescendants(p.pid);
    expect(new Set(found)).toEqual(new Set(Object.values(pids)));
    expect(found[0]).toBe(pids.middle); // parents before children
    await p.kill({ graceMs: 100 });
  });

  it('an already dead pid resolves with nothing to do; killing twice is fine', async () => {
    const { p } = await startTree<WellTree>('well');
    const first = await p.kill();
    expect(first.survivors).toEqual([]);
    const second = await p.kill();
    expect(second).toMatchObject({ survivors: [], forced: false });
    expect(second.pids.filter((pid) => running(pid))).toEqual([]);
    const child = spawn('true');
    await new Promise((r) => child.once('exit', r));
    await expect(killTree(child.pid!)).resolves.toMatchObject({ pids: [], survivors: [], forced: false });
  });

  it('refuses bad targets with typed errors', async () => {
    await expect(killTree(0)).rejects.toMatchObject({ code: 'INVALID_PID' });
    await expect(killTree(-5)).rejects.toBeInstanceOf(ProcReaperError);
    await expect(killTree(1.5)).rejects.toMatchObject({ code: 'INVALID_PID' });
    await expect(killTree(process.pid)).rejects.toMatchObject({ code: 'SELF_TARGET' });
    await expect(killTree(process.ppid)).rejects.toMatchObject({ code: 'SELF_TARGET' });
    await expect(killTree(1)).rejects.toMatchObject({ code: 'SELF_TARGET' });
  });

  it.runIf(canRunAsNobody())(
    'a tree we may not signal (EPERM) is reported as survivors at once, not after the grace period',
    async () => {
      const victim = spawn('sleep', ['1000'], { stdio: 'ignore' });
      cleanup.pid(victim.pid);
      // killTree run by an unprivileged user (nobody) against our (root's) process.
      const killer = spawn(process.execPath, ['--import', 'tsx', fixture('kill-as.ts'), String(victim.pid)], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        stdio: ['ignore', 'pipe', 'inherit'],
        uid: 65534,
        gid: 65534,
      });
      cleanup.pid(killer.pid);
      const result = JSON.parse(await readLine(killer, 'RESULT ', 60_000)) as KillResult;
      expect(result.survivors).toEqual([victim.pid]);
      expect(result.pids).toEqual([victim.pid]);
      // The default grace period is 2000 ms; a signal that is denied is not waited for.
      expect(result.ms).toBeLessThan(2000);
      expect(running(victim.pid!)).toBe(true);
    },
  );

  it('isAlive: true for a running process, false for a zombie and for a dead pid', async () => {
    expect(isAlive(process.pid)).toBe(true);
    expect(isAlive(0)).toBe(false);
    expect(isAlive(-1)).toBe(false);
    // `sleep 0` exits; its parent exec'd into `sleep`, which never reaps it: a zombie.
    const p = spawnTracked('sh', ['-c', 'sleep 0 & echo "Z $!"; exec sleep 1000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanup.pid(p.pid);
    const zombie = Number(await readLine(p.child, 'Z '));
    await waitFor(() => procState(zombie) === 'Z', { timeoutMs: 5000 });
    expect(() => process.kill(zombie, 0)).not.toThrow(); // the kernel still has it...
    expect(isAlive(zombie)).toBe(false); // ...but it has exited
    expect(isAlive(p.pid)).toBe(true);
    const result = await p.kill();
    expect(result.survivors).toEqual([]);
    expect(isAlive(p.pid)).toBe(false);
  });
});
