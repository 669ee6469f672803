import { readFileSync } from 'node:fs';
import { waitFor } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcReaperError } from '../src/errors';
import { MARKER_ENV, resolveMarkerNamespace } from '../src/marker';
import { spawnTracked } from '../src/spawn';
import { createCleanup, readLine, running } from './helpers';

const cleanup = createCleanup();
afterEach(() => {
  cleanup.run();
});

describe('resolveMarkerNamespace', () => {
  it.each([
    ['option wins', 'opt', { WAVE_REAPER_NAMESPACE: 'env' }, 'opt'],
    ['then the environment', undefined, { WAVE_REAPER_NAMESPACE: 'env' }, 'env'],
    ['then wave', undefined, {}, 'wave'],
    ['empty option falls through', '', { WAVE_REAPER_NAMESPACE: 'env' }, 'env'],
    ['empty variable falls through', undefined, { WAVE_REAPER_NAMESPACE: '' }, 'wave'],
  ])('%s', (_name, option, env, expected) => {
    expect(resolveMarkerNamespace(option, env)).toBe(expected);
  });
});

describe.runIf(process.platform === 'linux')('spawnTracked (Linux)', () => {
  it('starts a group and session leader with piped stdio, the marker in its environment and its start time', async () => {
    const p = spawnTracked('sh', ['-c', 'echo "ID $WAVE_REAPER_ID"; echo "FOO $FOO"; exec sleep 1000'], {
      env: { ...process.env, FOO: 'bar', [MARKER_ENV]: 'inherited:should-be-replaced' },
      markerNamespace: 'unit',
    });
    cleanup.pid(p.pid);
    expect(p.marker).toMatch(/^unit:[0-9a-f-]{36}$/);
    expect(p.child.stdin).not.toBeNull();
    expect(p.child.stderr).not.toBeNull();
    expect(await readLine(p.child, 'ID ')).toBe(p.marker);
    const stat = readFileSync(`/proc/${p.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(Number(f[2])).toBe(p.pid); // pgid
    expect(Number(f[3])).toBe(p.pid); // session
    expect(p.pgid).toBe(p.pid);
    expect(p.startTime).toBe(Number(f[19]));
    const result = await p.kill();
    expect(result.survivors).toEqual([]);
    expect(running(p.pid)).toBe(false);
  });

  it('Symbol.asyncDispose kills the whole tree (what `await using` calls)', async () => {
    const p = spawnTracked('sh', ['-c', 'sleep 1000 & echo "KID $!"; wait']);
    cleanup.pid(p.pid);
    const kid = Number(await readLine(p.child, 'KID '));
    cleanup.pid(kid);
    expect(running(kid)).toBe(true);
    await p[Symbol.asyncDispose]();
    expect(running(p.pid)).toBe(false);
    expect(running(kid)).toBe(false);
    await p[Symbol.asyncDispose](); // a second dispose is harmless
  });

  it('keeps the caller environment and takes the namespace from WAVE_REAPER_NAMESPACE', async () => {
    const saved = process.env.WAVE_REAPER_NAMESPACE;
    process.env.WAVE_REAPER_NAMESPACE = 'from-env';
    try {
      const p = spawnTracked('sh', ['-c', 'echo "HOME $HOME"; exec sleep 1000']);
      cleanup.pid(p.pid);
      expect(p.marker.startsWith('from-env:')).toBe(true);
      expect(await readLine(p.child, 'HOME ')).toBe(process.env.HOME ?? '');
      await p.kill();
    } finally {
      if (saved === undefined) delete process.env.WAVE_REAPER_NAMESPACE;
      else process.env.WAVE_REAPER_NAMESPACE = saved;
    }
  });

  it('each spawn gets its own marker', () => {
    const a = spawnTracked('sleep', ['1000'], { stdio: 'ignore' });
    const b = spawnTracked('sleep', ['1000'], { stdio: 'ignore' });
    cleanup.pid(a.pid, b.pid);
    expect(a.marker).not.toBe(b.marker);
  });

  it('a command that cannot start throws SPAWN_FAILED, and the late error event does not crash', async () => {
    let caught: unknown;
    try {
      spawnTracked('/definitely/not/a/command-xyz', []);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProcReaperError);
    expect((caught as ProcReaperError).code).toBe('SPAWN_FAILED');
    expect((caught as Error).message).toContain('/definitely/not/a/command-xyz');
    // The 'error' event fires on a later tick; an unhandled one would fail the run.
    await new Promise((resolve) => setImmediate(resolve)); // the swallowed 'error' event fires on the next tick
  });

  it('arguments spawn() rejects synchronously also become SPAWN_FAILED, with the cause kept', () => {
    const err = (() => {
      try {
        spawnTracked('sle\0ep', ['1000']);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ProcReaperError);
    expect(err).toMatchObject({ code: 'SPAWN_FAILED' });
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('a missing working directory is named in the message (it fails like a missing command)', async () => {
    const cwd = '/definitely/not/a/dir-xyz';
    let caught: unknown;
    try {
      spawnTracked('sleep', ['1000'], { cwd });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'SPAWN_FAILED' });
    expect((caught as Error).message).toContain(cwd);
    await new Promise((resolve) => setImmediate(resolve)); // the swallowed 'error' event fires on the next tick
  });

  it('a failed spawn leaves no handle behind (no pipe, no process handle)', async () => {
    const count = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap' || r === 'ProcessWrap').length;
    const before = count();
    expect(() => spawnTracked('/definitely/not/a/command-xyz')).toThrow(ProcReaperError);
    expect(count()).toBeGreaterThan(before); // the pipes and the process handle exist for a moment...
    await waitFor(() => count() <= before, { timeoutMs: 30_000 }); // ...and are closed
  });
});
