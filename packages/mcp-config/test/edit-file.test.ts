import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { addServer, removeServer } from '../src/edit';
import { McpConfigError } from '../src/errors';
import { type ConfigFs, nodeConfigFs } from '../src/fs';
import { loadMcpConfig } from '../src/load';

const execFileAsync = promisify(execFile);

async function failure(promise: Promise<unknown>): Promise<McpConfigError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpConfigError) return err;
    throw err;
  }
  throw new Error('expected an McpConfigError');
}

const COMMENTED = '{\n  // mine\n  "mcpServers": {\n    "db": {"command": "pg-mcp"} // keep\n  }\n}\n';

describe('addServer (real files)', () => {
  it('creates the file, its directory and mcpServers; user files are 0600', async () => {
    const home = join(tempDir(), 'not', 'yet');
    const file = join(home, 'mcp.json');
    const r = await addServer(file, 'gh', { url: 'https://h/mcp' });
    expect(r).toEqual({ file, created: true, replaced: false, issues: [] });
    expect(readFileSync(file, 'utf8')).toBe(
      '{\n  "mcpServers": {\n    "gh": {\n      "url": "https://h/mcp"\n    }\n  }\n}\n',
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const loaded = await loadMcpConfig({ workdir: tempDir(), home, env: {} });
    expect(loaded.servers.map((s) => [s.name, s.source, s.config.url])).toEqual([
      ['gh', 'user', 'https://h/mcp'],
    ]);
  });

  it('a new project file is 0644', async () => {
    const file = join(tempDir(), '.mcp.json');
    await addServer(file, 'a', { command: 'x' });
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it('approveTools written to a project file comes back with a warning; to the user file without', async () => {
    const project = await addServer(join(tempDir(), '.mcp.json'), 'a', {
      command: 'x',
      approveTools: ['get_*'],
    });
    expect(project.issues.map((i) => i.code)).toEqual(['APPROVALS_NOT_TRUSTED']);
    const user = await addServer(join(tempDir(), 'mcp.json'), 'a', { command: 'x', approveTools: ['get_*'] });
    expect(user.issues).toEqual([]);
  });

  it('a variable that is not set now is no reason to refuse writing', async () => {
    const file = join(tempDir(), 'mcp.json');
    await addServer(file, 'a', { url: 'https://${HOST}/mcp', headers: { A: '${NOT_SET_ANYWHERE}' } });
    expect(readFileSync(file, 'utf8')).toContain('${NOT_SET_ANYWHERE}');
  });

  it('adds to an existing file keeping comments, formatting and mode; leaves no temp file', async () => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, COMMENTED);
    chmodSync(file, 0o640);
    const r = await addServer(file, 'fs', { command: 'npx', args: ['-y', 'server-filesystem'], foo: 1 });
    expect(r.created).toBe(false);
    expect(r.issues.map((i) => i.code)).toEqual(['UNKNOWN_KEY']);
    expect(readFileSync(file, 'utf8')).toBe(
      '{\n  // mine\n  "mcpServers": {\n    "db": {"command": "pg-mcp"}, // keep\n    "fs": {\n      "command": "npx",\n      "args": [\n        "-y",\n        "server-filesystem"\n      ],\n      "foo": 1\n    }\n  }\n}\n',
    );
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
  });

  it('SERVER_EXISTS leaves the bytes; overwrite replaces', async () => {
    const file = join(tempDir(), 'mcp.json');
    writeFileSync(file, COMMENTED);
    const err = await failure(addServer(file, 'db', { command: 'other' }));
    expect(err.code).toBe('SERVER_EXISTS');
    expect(err.message).toContain(file);
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    const r = await addServer(file, 'db', { command: 'other' }, { overwrite: true });
    expect(r.replaced).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('// keep');
    expect(readFileSync(file, 'utf8')).toContain('"command": "other"');
  });

  it.each([
    ['empty name', '', { command: 'x' }, 'SERVER_INVALID'],
    ['name with a line break', 'a\nb', { command: 'x' }, 'SERVER_INVALID'],
    ['unknown type', 'ws', { type: 'websocket', url: 'ws://h' }, 'TRANSPORT_UNKNOWN'],
    ['conflicting fields', 'x', { command: 'a', url: 'https://h' }, 'SERVER_INVALID'],
    ['.. in command', 'x', { command: '../x' }, 'SERVER_INVALID'],
    ['relative url', 'x', { url: '/mcp' }, 'SERVER_INVALID'],
    ['args not strings', 'x', { command: 'a', args: [1] }, 'SERVER_INVALID'],
    ['not plain data', 'x', { command: 'a', description: 'x', extra: 10n }, 'SERVER_INVALID'],
    ['not an object', 'x', 'npx server', 'SERVER_INVALID'],
  ])('validates before writing: %s', async (_label, name, config, code) => {
    const dir = tempDir();
    const existing = join(dir, 'mcp.json');
    writeFileSync(existing, COMMENTED);
    const err = await failure(addServer(existing, name, config));
    expect(err.code).toBe(code);
    expect(readFileSync(existing, 'utf8')).toBe(COMMENTED);
    const missing = join(dir, 'sub', '.mcp.json');
    expect((await failure(addServer(missing, name, config))).code).toBe(code);
    expect(existsSync(join(dir, 'sub'))).toBe(false);
    expect(readdirSync(dir)).toEqual(['mcp.json']);
  });

  it('names with dots and spaces are written (Kiro, Amazon Q)', async () => {
    const file = join(tempDir(), 'mcp.json');
    await addServer(file, 'awslabs.aws-documentation-mcp-server', { command: 'uvx' });
    await addServer(file, 'My Server', { command: 'x' });
    const loaded = await loadMcpConfig({ workdir: tempDir(), home: join(file, '..'), env: {} });
    expect(loaded.servers.map((s) => s.name)).toEqual(['awslabs.aws-documentation-mcp-server', 'My Server']);
    expect(loaded.issues).toEqual([]);
  });

  it('SERVER_INVALID carries the issues and names the file and the fix', async () => {
    const file = join(tempDir(), '.mcp.json');
    const err = await failure(addServer(file, 'x', { command: 'a', args: 'nope' }));
    expect(err.issues.map((i) => i.code)).toEqual(['FIELD_INVALID']);
    expect(err.message).toContain(file);
    expect(err.message).toContain('array of strings');
  });

  it.each([
    ['syntax error', '{"mcpServers": {"a": {"command": "x"}'],
    ['root array', '[1, 2]'],
    ['mcpServers array', '{"mcpServers": []}'],
  ])('CONFIG_MALFORMED (%s) leaves the bytes', async (_label, text) => {
    const file = join(tempDir(), '.mcp.json');
    writeFileSync(file, text);
    expect((await failure(addServer(file, 'n', { command: 'x' }))).code).toBe('CONFIG_MALFORMED');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('edits the target of a symlink and keeps the link', async () => {
    const dir = tempDir();
    const real = join(dir, 'dotfiles', 'mcp.json');
    mkdirSync(join(dir, 'dotfiles'));
    writeFileSync(real, COMMENTED);
    const link = join(dir, 'mcp.json');
    symlinkSync(real, link);
    const r = await addServer(link, 'n', { command: 'x' });
    expect(r.file).toBe(real);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toContain('"n"');
  });

  it('a directory where the file should be: CONFIG_IO', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.mcp.json'));
    const err = await failure(addServer(join(dir, '.mcp.json'), 'n', { command: 'x' }));
    expect(err.code).toBe('CONFIG_IO');
    expect(err.message).toContain('directory');
  });

  it('a file where the directory should be (ENOTDIR): CONFIG_IO, that file intact', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'blocker'), 'keep me');
    const err = await failure(addServer(join(dir, 'blocker', 'mcp.json'), 'n', { command: 'x' }));
    expect(err.code).toBe('CONFIG_IO');
    expect(readFileSync(join(dir, 'blocker'), 'utf8')).toBe('keep me');
  });
});

describe('removeServer (real files)', () => {
  it('removes keeping the rest and the mode', async () => {
    const file = join(tempDir(), '.mcp.json');
    writeFileSync(
      file,
      '{\n  "mcpServers": {\n    // db\n    "db": {"command": "pg"},\n    "x": {"command": "x"} // x\n  }\n}\n',
    );
    chmodSync(file, 0o600);
    const r = await removeServer(file, 'db');
    expect(r).toEqual({ file, removed: { command: 'pg' } });
    expect(readFileSync(file, 'utf8')).toBe(
      '{\n  "mcpServers": {\n    // db\n    "x": {"command": "x"} // x\n  }\n}\n',
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('missing file: CONFIG_NOT_FOUND, nothing created', async () => {
    const dir = tempDir();
    const err = await failure(removeServer(join(dir, '.mcp.json'), 'x'));
    expect(err.code).toBe('CONFIG_NOT_FOUND');
    expect(err.message).toContain(join(dir, '.mcp.json'));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('missing directory: CONFIG_NOT_FOUND', async () => {
    const dir = tempDir();
    const err = await failure(removeServer(join(dir, 'nope', 'mcp.json'), 'x'));
    expect(err.code).toBe('CONFIG_NOT_FOUND');
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ['unknown server', COMMENTED, 'SERVER_NOT_FOUND'],
    ['malformed', '{"mcpServers": {"db": ', 'CONFIG_MALFORMED'],
  ])('%s leaves the bytes', async (_label, text, code) => {
    const file = join(tempDir(), '.mcp.json');
    writeFileSync(file, text);
    expect((await failure(removeServer(file, 'nope'))).code).toBe(code);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});

/** The real fs, failing with `code` in `method` (a permission or I/O error from the OS). */
function failingFs(method: keyof ConfigFs, code: string): ConfigFs {
  return {
    ...nodeConfigFs,
    [method]: async () => {
      throw Object.assign(new Error(`${code}: simulated`), { code });
    },
  };
}

describe('edit failures (injected fs errors) leave the bytes and no temp file', () => {
  const methods: (keyof ConfigFs)[] = [
    'realpath',
    'stat',
    'readFile',
    'checkWritable',
    'writeNewFile',
    'chmod',
    'rename',
  ];
  const cases = methods.flatMap((m) =>
    (['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EIO'] as const).map((c) => [m, c] as const),
  );

  it.each(cases)('add: %s fails with %s', async (method, errno) => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, COMMENTED);
    const err = await failure(addServer(file, 'n', { command: 'x' }, { fs: failingFs(method, errno) }));
    expect(err.code).toBe(['EACCES', 'EPERM', 'EROFS'].includes(errno) ? 'CONFIG_PERMISSION' : 'CONFIG_IO');
    expect(err.message).toContain(file);
    expect(err.message).toContain('not changed');
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
  });

  it.each(cases)('remove: %s fails with %s', async (method, errno) => {
    const dir = tempDir();
    const file = join(dir, '.mcp.json');
    writeFileSync(file, COMMENTED);
    const err = await failure(removeServer(file, 'db', { fs: failingFs(method, errno) }));
    expect(err.code).toBe(['EACCES', 'EPERM', 'EROFS'].includes(errno) ? 'CONFIG_PERMISSION' : 'CONFIG_IO');
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    expect(readdirSync(dir)).toEqual(['.mcp.json']);
  });

  it('add to a missing file: mkdir denied creates nothing', async () => {
    const dir = tempDir();
    const err = await failure(
      addServer(join(dir, 'h', 'mcp.json'), 'n', { command: 'x' }, { fs: failingFs('mkdir', 'EACCES') }),
    );
    expect(err.code).toBe('CONFIG_PERMISSION');
    expect(readdirSync(dir)).toEqual([]);
  });

  it("another writer's change during the edit is not lost (the edit is redone)", async () => {
    const dir = tempDir();
    const file = join(dir, 'mcp.json');
    writeFileSync(file, COMMENTED);
    let interfered = false;
    const fs: ConfigFs = {
      ...nodeConfigFs,
      writeNewFile: async (path, data, mode) => {
        if (!interfered) {
          interfered = true;
          writeFileSync(file, COMMENTED.replace('"db"', '"db2"'));
        }
        return nodeConfigFs.writeNewFile(path, data, mode);
      },
    };
    await addServer(file, 'n', { command: 'x' }, { fs });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"db2"');
    expect(text).toContain('"n"');
    expect(readdirSync(dir)).toEqual(['mcp.json']);
  });

  it('a file that keeps changing: CONFIG_CONFLICT, nothing written', async () => {
    const dir = tempDir();
    const file = join(dir, 'mcp.json');
    writeFileSync(file, COMMENTED);
    let reads = 0;
    const fs: ConfigFs = {
      ...nodeConfigFs,
      readFile: async (path) => `${await nodeConfigFs.readFile(path)}${' '.repeat(reads++)}`,
    };
    const err = await failure(addServer(file, 'n', { command: 'x' }, { fs }));
    expect(err.code).toBe('CONFIG_CONFLICT');
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
    expect(readdirSync(dir)).toEqual(['mcp.json']);
  });
});

/**
 * Real permission errors from the OS. Root ignores mode bits, so as root the
 * edits run in a child process as user nobody (65534); otherwise in a child as
 * ourselves. Either way nothing is simulated.
 */
describe('edit failures (real OS permission errors)', () => {
  const isRoot = process.getuid?.() === 0;
  const NOBODY = 65534;

  async function runChild(
    cases: object[],
  ): Promise<{ ok: boolean; code?: string; servers?: string[]; issues?: string[][] }[]> {
    const dir = tempDir('mcp-child-');
    chmodSync(dir, 0o755);
    const script = join(dir, 'child.mjs');
    writeFileSync(
      script,
      `const m = await import(${JSON.stringify(pathToFileURL(resolve('src/index.ts')).href)});
const out = [];
for (const c of JSON.parse(process.argv[2])) {
  try {
    if (c.op === 'add') await m.addServer(c.file, 'n', { command: 'x' });
    else if (c.op === 'remove') await m.removeServer(c.file, 'db');
    else {
      const r = await m.loadMcpConfig({ workdir: c.workdir, home: c.home, env: {} });
      out.push({ ok: true, servers: r.servers.map((s) => s.name), issues: r.issues.map((i) => [i.code, i.source]) });
      continue;
    }
    out.push({ ok: true });
  } catch (e) {
    out.push({ ok: false, code: e.code, message: e.message });
  }
}
console.log(JSON.stringify(out));
`,
    );
    const { stdout } = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', script, JSON.stringify(cases)],
      {
        cwd: resolve('.'),
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? '', HOME: dir },
        ...(isRoot ? { uid: NOBODY, gid: NOBODY } : {}),
      },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]');
  }

  function area(mode: number, fileText: string | undefined, fileMode: number): { dir: string; file: string } {
    const base = tempDir('mcp-perm-');
    chmodSync(base, 0o755);
    const dir = join(base, 'd');
    mkdirSync(dir);
    const file = join(dir, '.mcp.json');
    if (fileText !== undefined) {
      writeFileSync(file, fileText);
      if (isRoot) chownSync(file, NOBODY, NOBODY);
      chmodSync(file, fileMode);
    }
    if (isRoot) chownSync(dir, NOBODY, NOBODY);
    chmodSync(dir, mode);
    return { dir, file };
  }

  it('read-only file, read-only directory, unreadable file, missing file in a read-only directory', async () => {
    const roFile = area(0o755, COMMENTED, 0o444);
    const roDir = area(0o555, COMMENTED, 0o644);
    const unreadable = area(0o755, COMMENTED, 0o000);
    const missingInRoDir = area(0o555, undefined, 0);
    const userHome = tempDir('mcp-perm-home-');
    chmodSync(userHome, 0o755);
    writeFileSync(join(userHome, 'mcp.json'), '{"mcpServers": {"u": {"command": "x"}}}');
    chmodSync(join(userHome, 'mcp.json'), 0o644);

    const results = await runChild([
      { op: 'add', file: roFile.file },
      { op: 'remove', file: roFile.file },
      { op: 'add', file: roDir.file },
      { op: 'remove', file: roDir.file },
      { op: 'add', file: unreadable.file },
      { op: 'remove', file: unreadable.file },
      { op: 'add', file: missingInRoDir.file },
      { op: 'load', workdir: unreadable.dir, home: userHome },
    ]);
    expect(results.slice(0, 7).map((r) => [r.ok, r.code])).toEqual(
      Array(7).fill([false, 'CONFIG_PERMISSION']),
    );
    expect(results[7]).toEqual({ ok: true, servers: ['u'], issues: [['CONFIG_PERMISSION', 'project']] });

    for (const a of [roFile, roDir, unreadable]) {
      expect(readFileSync(a.file, 'utf8')).toBe(COMMENTED);
      expect(readdirSync(a.dir)).toEqual(['.mcp.json']);
    }
    expect(statSync(roFile.file).mode & 0o777).toBe(0o444);
    expect(readdirSync(missingInRoDir.dir)).toEqual([]);
  });
});
