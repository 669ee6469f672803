import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import {
  isLocallyDisabled,
  isServerTrusted,
  localServerKey,
  localStatePath,
  normalizeLocalState,
  readLocalState,
  setServerDisabled,
  trustServer,
} from '../src/local-state';

async function home(): Promise<string> {
  return tempDir('wave-local-');
}

const user = { name: 'gh', source: 'user' as const, fingerprint: 'f1' };
const project = { name: 'gh', source: 'project' as const, file: '/repo/.mcp.json', fingerprint: 'f1' };

describe('local state', () => {
  it('keys tell sources, files and plugins apart', () => {
    expect(localServerKey(user)).toBe('user:gh');
    expect(localServerKey(project)).toBe('project:/repo/.mcp.json#gh');
    expect(localServerKey({ ...project, file: '/other/.mcp.json' })).not.toBe(localServerKey(project));
    expect(localServerKey({ name: 'gh', source: 'plugin', plugin: 'p' })).toBe('plugin:p#gh');
  });

  it('missing or corrupt file reads as empty; malformed parts are dropped', async () => {
    const h = await home();
    expect(await readLocalState(h)).toEqual({ disabled: [], trusted: {} });
    await writeFile(localStatePath(h), '[[[');
    expect(await readLocalState(h)).toEqual({ disabled: [], trusted: {} });
    expect(
      normalizeLocalState({ disabled: ['a', 3, 'a'], trusted: { x: 'fp', y: 2, __proto__: 'z' } }),
    ).toEqual({
      disabled: ['a'],
      trusted: { x: 'fp' },
    });
  });

  it('disable / enable round trip, without touching other switches', async () => {
    const h = await home();
    await setServerDisabled(h, user, true);
    await setServerDisabled(h, project, true);
    let s = await readLocalState(h);
    expect(isLocallyDisabled(s, user)).toBe(true);
    expect(isLocallyDisabled(s, project)).toBe(true);
    await setServerDisabled(h, user, false);
    s = await readLocalState(h);
    expect(isLocallyDisabled(s, user)).toBe(false);
    expect(isLocallyDisabled(s, project)).toBe(true);
    expect(JSON.parse(await readFile(localStatePath(h), 'utf8'))).toEqual(s);
  });

  it('trust is bound to the fingerprint; user servers need none', async () => {
    const h = await home();
    let s = await readLocalState(h);
    expect(isServerTrusted(s, user)).toBe(true);
    expect(isServerTrusted(s, project)).toBe(false);
    s = await trustServer(h, project);
    expect(isServerTrusted(s, project)).toBe(true);
    expect(isServerTrusted(s, { ...project, fingerprint: 'changed' })).toBe(false);
  });

  it('concurrent writers in separate processes lose nothing', async () => {
    const h = await home();
    const script = `
      import { setServerDisabled } from ${JSON.stringify(join(__dirname, '../src/local-state.ts'))};
      const [home, who] = process.argv.slice(2);
      await Promise.all(Array.from({ length: 10 }, (_, i) => setServerDisabled(home, { name: who + i, source: 'user' }, true)));
    `;
    const file = join(h, 'writer.mts');
    await writeFile(file, script);
    const tsx = require.resolve('tsx/cli');
    await Promise.all(
      ['a', 'b', 'c'].map(
        (who) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, [tsx, file, h, who], { stdio: 'inherit' });
            child.on('error', reject);
            child.on('exit', (code) =>
              code === 0 ? resolve() : reject(new Error(`writer ${who} exited ${code}`)),
            );
          }),
      ),
    );
    const s = await readLocalState(h);
    expect(s.disabled).toHaveLength(30);
  }, 60_000);

  it('breaks a lock left by a process that is gone, and leaves no lock or temp file behind', async () => {
    const h = await home();
    const dead = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const deadPid = await new Promise<number>((resolve) => dead.on('exit', () => resolve(dead.pid ?? 0)));
    const lock = `${localStatePath(h)}.lock`;
    await writeFile(
      lock,
      JSON.stringify({ pid: deadPid, host: hostname(), token: 'left-behind', createdAt: Date.now() }),
    );
    await setServerDisabled(h, user, true);
    expect((await readLocalState(h)).disabled).toEqual([localServerKey(user)]);
    expect(await readdir(h)).toEqual(['mcp-local-state.json']);
  });
});
