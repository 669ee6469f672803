import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { addServer, removeServer } from '../src/edit';
import { type ConfigFs, nodeConfigFs } from '../src/fs';
import { loadMcpConfig } from '../src/load';

async function loadProject(workdir: string) {
  const started = Date.now();
  const r = await loadMcpConfig({ workdir, home: tempDir('home-'), env: {} });
  return { ...r, ms: Date.now() - started };
}

describe('a config that is not a regular file is refused before reading', () => {
  it('a FIFO: load reports CONFIG_IO and does not wait for a writer', async () => {
    const dir = tempDir();
    execFileSync('mkfifo', [join(dir, '.mcp.json')]);
    const r = await loadProject(dir);
    expect(r.issues.map((i) => [i.code, i.source])).toEqual([['CONFIG_IO', 'project']]);
    expect(r.issues[0]?.message).toContain('not a regular file');
  });

  it('a symlink to /dev/zero: refused, nothing read', async () => {
    const dir = tempDir();
    symlinkSync('/dev/zero', join(dir, '.mcp.json'));
    const r = await loadProject(dir);
    expect(r.issues.map((i) => i.code)).toEqual(['CONFIG_IO']);
    expect(r.issues[0]?.message).toContain('not a regular file');
  });

  it('a symlink to /dev/stdin: refused, the host stdin is not read', async () => {
    const dir = tempDir();
    symlinkSync('/dev/stdin', join(dir, '.mcp.json'));
    const r = await loadProject(dir);
    expect(r.servers).toEqual([]);
    expect(r.issues.map((i) => i.code)).toEqual(['CONFIG_IO']);
    expect(r.issues[0]?.message).toContain('not a regular file');
  });

  it('the reader itself refuses a FIFO and a device, and enforces maxBytes while reading', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await expect(nodeConfigFs.readFile(fifo)).rejects.toMatchObject({ code: 'EWAVENOTFILE' });
    await expect(nodeConfigFs.readFile('/dev/zero', { maxBytes: 10 })).rejects.toMatchObject({
      code: 'EWAVENOTFILE',
    });
    const big = join(dir, 'big');
    writeFileSync(big, 'x'.repeat(11));
    await expect(nodeConfigFs.readFile(big, { maxBytes: 10 })).rejects.toMatchObject({ code: 'EFBIG' });
    await expect(nodeConfigFs.readFile(big, { maxBytes: 11 })).resolves.toBe('x'.repeat(11));
  });

  it('a file that grows past the cap after stat is still capped (the size is counted while reading)', async () => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, '{}');
    const fs: ConfigFs = {
      ...nodeConfigFs,
      stat: async (path) => {
        const st = await nodeConfigFs.stat(path);
        await writeFile(path, `{"mcpServers": {}, "x": "${'y'.repeat(5 * 1024 * 1024)}"}`);
        return st;
      },
    };
    const r = await loadMcpConfig({ workdir: dir, home: tempDir('home-'), env: {}, fs });
    expect(r.issues.map((i) => i.code)).toEqual(['CONFIG_IO']);
    expect(r.issues[0]?.message).toContain('larger than');
  });

  it('edits refuse a FIFO with CONFIG_IO', async () => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    execFileSync('mkfifo', [file]);
    await expect(addServer(file, 'a', { command: 'x' })).rejects.toMatchObject({ code: 'CONFIG_IO' });
    await expect(removeServer(file, 'a')).rejects.toMatchObject({ code: 'CONFIG_IO' });
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
  });
});

describe('read-only files and directories are refused, also for root', () => {
  it('a 0444 file and a 0555 directory: CONFIG_PERMISSION, nothing changed', async () => {
    const roFileDir = tempDir();
    const roFile = join(roFileDir, '.mcp.json');
    writeFileSync(roFile, '{"mcpServers": {"db": {"command": "x"}}}');
    chmodSync(roFile, 0o444);
    const roDir = tempDir();
    const inRoDir = join(roDir, '.mcp.json');
    writeFileSync(inRoDir, '{"mcpServers": {"db": {"command": "x"}}}');
    chmodSync(roDir, 0o555);
    const missingInRoDir = join(tempDir(), 'sub');
    mkdirSync(missingInRoDir, { mode: 0o555 });
    chmodSync(missingInRoDir, 0o555);

    for (const op of [
      () => addServer(roFile, 'n', { command: 'x' }),
      () => removeServer(roFile, 'db'),
      () => addServer(inRoDir, 'n', { command: 'x' }),
      () => removeServer(inRoDir, 'db'),
      () => addServer(join(missingInRoDir, 'mcp.json'), 'n', { command: 'x' }),
    ]) {
      await expect(op()).rejects.toMatchObject({ code: 'CONFIG_PERMISSION' });
    }
    expect(readFileSync(roFile, 'utf8')).toBe('{"mcpServers": {"db": {"command": "x"}}}');
    expect(readFileSync(inRoDir, 'utf8')).toBe('{"mcpServers": {"db": {"command": "x"}}}');
    expect(readdirSync(roFileDir)).toEqual(['.mcp.json']);
    expect(readdirSync(roDir)).toEqual(['.mcp.json']);
    expect(readdirSync(missingInRoDir)).toEqual([]);
    expect(lstatSync(roFile).mode & 0o777).toBe(0o444);
  });
});

describe('bytes outside the edit', () => {
  const CP1252 = Buffer.concat([
    Buffer.from('{\n  // caf'),
    Buffer.from([0xe9]),
    Buffer.from('\n  "mcpServers": {"db": {"command": "x"}}\n}\n'),
  ]);

  it('a file that is not UTF-8 loads, but edits refuse it (CONFIG_MALFORMED, says UTF-8) and leave the bytes', async () => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, CP1252);
    const loaded = await loadMcpConfig({ workdir: dir, home: tempDir('home-'), env: {} });
    expect(loaded.servers.map((s) => s.name)).toEqual(['db']);
    for (const op of [() => addServer(file, 'n', { command: 'x' }), () => removeServer(file, 'db')]) {
      const err = await op().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CONFIG_MALFORMED' });
      expect((err as Error).message).toContain('UTF-8');
    }
    expect(readFileSync(file).equals(CP1252)).toBe(true);
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
  });
});

describe('litter and links', () => {
  it('a write that fails half-way (disk full) leaves no temp file', async () => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, '{"mcpServers": {}}');
    const fs: ConfigFs = {
      ...nodeConfigFs,
      writeNewFile: async (path, data, mode) => {
        if (!path.endsWith('.lock.tmp') && !/\.lock\.\d+\.\w+\.tmp$/.test(path)) {
          // like a full disk: the file is created, the data does not fit
          writeFileSync(path, data.slice(0, 3), { mode, flag: 'wx' });
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        return nodeConfigFs.writeNewFile(path, data, mode);
      },
    };
    for (let i = 0; i < 3; i++) {
      await expect(addServer(file, 'n', { command: 'x' }, { fs })).rejects.toMatchObject({
        code: 'CONFIG_IO',
      });
    }
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
    expect(readFileSync(file, 'utf8')).toBe('{"mcpServers": {}}');
  });

  it('a dangling symlink: the file it points to is created, the link stays', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'dotfiles'));
    const link = join(dir, 'mcp.json');
    symlinkSync('dotfiles/x', link);
    const r = await addServer(link, 'a', { command: 'x' });
    expect(r.file).toBe(join(dir, 'dotfiles', 'x'));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('dotfiles/x');
    expect(JSON.parse(readFileSync(join(dir, 'dotfiles', 'x'), 'utf8'))).toEqual({
      mcpServers: { a: { command: 'x' } },
    });
  });

  it('a dangling chain of links is followed to its end', async () => {
    const dir = tempDir();
    symlinkSync('b', join(dir, 'a'));
    symlinkSync('c', join(dir, 'b'));
    await addServer(join(dir, 'a'), 's', { command: 'x' });
    expect(lstatSync(join(dir, 'b')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'c'), 'utf8')).toContain('"s"');
  });
});
