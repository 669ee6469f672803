import { spawn } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../src/load';
import { localStatePath, readLocalState, setServerDisabled } from '../src/local-state';
import { discoverPlugins } from '../src/plugins';

async function home(): Promise<string> {
  return tempDir('wave-plugin-attacks-');
}

async function put(file: string, text: string | Buffer): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, text);
}

/** The pid of a process that has exited (and so names no process now). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = child.pid;
  await new Promise((r) => child.on('exit', r));
  if (pid === undefined) throw new Error('no pid');
  return pid;
}

describe('hostile plugin manifests', () => {
  it('a "__proto__" key under mcpServers stays data: no prototype is planted, the name is refused', async () => {
    const h = await home();
    await put(
      join(h, 'plugins/p/plugin.json'),
      '{"name":"p","mcpServers":{"__proto__":{"evil":{"command":"x"}},"ok":{"command":"node"}}}',
    );
    const found = await discoverPlugins({ home: h });
    const p = found.plugins[0];
    expect(p?.name).toBe('p');
    expect(Object.getPrototypeOf(p?.mcpServers)).toBe(Object.prototype);
    expect((p?.mcpServers as Record<string, unknown> | undefined)?.evil).toBeUndefined();
    expect(Object.keys(p?.mcpServers ?? {}).sort()).toEqual(['__proto__', 'ok']);
    const loaded = await loadMcpConfig({ workdir: h, home: h, env: {}, plugins: found.plugins });
    expect(loaded.servers.map((s) => s.name)).toEqual(['ok']);
  });

  it('a manifest nested 200 000 deep is reported and skipped, the others load', async () => {
    const h = await home();
    await put(
      join(h, 'plugins/deep/plugin.json'),
      `{"name":"deep","x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
    );
    await put(join(h, 'plugins/fine/plugin.json'), '{"name":"fine","mcpServers":{"s":{"command":"node"}}}');
    const found = await discoverPlugins({ home: h });
    expect(found.plugins.map((p) => p.name)).toEqual(['fine']);
    expect(found.issues).toHaveLength(1);
    expect(found.issues[0]?.message).toContain('deep');
  });

  it('a manifest name that is "..", absolute, or holds control characters or invalid UTF-8 is refused', async () => {
    const h = await home();
    await put(join(h, 'plugins/a/plugin.json'), '{"name":".."}');
    await put(join(h, 'plugins/b/plugin.json'), '{"name":"/etc"}');
    await put(join(h, 'plugins/c/plugin.json'), '{"name":"x\\u001b[2Jy"}');
    await put(
      join(h, 'plugins/d/plugin.json'),
      Buffer.from([...Buffer.from('{"name":"r'), 0xff, 0xfe, ...Buffer.from('"}')]),
    );
    const found = await discoverPlugins({ home: h });
    expect(found.plugins).toEqual([]);
    expect(found.issues.map((i) => i.plugin).sort()).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('local state lock', () => {
  it('a lock left by a killed process (its pid is gone) does not make the next change wait', async () => {
    const h = await home();
    await writeFile(`${localStatePath(h)}.lock`, String(await deadPid()));
    const t0 = Date.now();
    await setServerDisabled(h, { name: 'a', source: 'user' }, true);
    // Without the pid check the lock counts as stale only when 10 s old.
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await readLocalState(h)).disabled).toEqual(['user:a']);
  });

  it('a lock dated a day in the future is not obeyed forever', async () => {
    const h = await home();
    const lock = `${localStatePath(h)}.lock`;
    await writeFile(lock, '');
    const future = new Date(Date.now() + 86_400_000);
    await utimes(lock, future, future);
    await setServerDisabled(h, { name: 'a', source: 'user' }, true);
    expect((await readLocalState(h)).disabled).toEqual(['user:a']);
  });
});
