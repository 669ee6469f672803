/**
 * How a stdio server is started on each platform, with an injected platform
 * and file system: no Windows machine needed.
 */
import { describe, expect, it } from 'vitest';
import {
  inheritedEnvironment,
  quoteCmdArgument,
  resolveStdioCommand,
  WINDOWS_INHERITED_ENV,
} from '../src/stdio-command';

const files = (...paths: string[]) => {
  const set = new Set(paths.map((p) => p.toLowerCase()));
  return (p: string) => set.has(p.toLowerCase());
};

const winEnv = {
  Path: 'C:\\Windows\\system32;C:\\Program Files\\nodejs;C:\\Users\\me\\AppData\\Roaming\\npm',
  PATHEXT: '.COM;.EXE;.BAT;.CMD',
  ComSpec: 'C:\\Windows\\system32\\cmd.exe',
};

describe('resolveStdioCommand', () => {
  it('POSIX: the command and arguments are used as they are', () => {
    expect(
      resolveStdioCommand('npx', ['-y', 'pkg'], { platform: 'linux', env: {}, isFile: () => true }),
    ).toEqual({
      command: 'npx',
      args: ['-y', 'pkg'],
    });
  });

  it('Windows: npx resolves through PATHEXT to npx.cmd and runs through cmd.exe /d /s /c', () => {
    const r = resolveStdioCommand('npx', ['-y', '@modelcontextprotocol/server-memory'], {
      platform: 'win32',
      env: winEnv,
      isFile: files('C:\\Program Files\\nodejs\\npx.cmd'),
    });
    expect(r).toEqual({
      command: 'C:\\Windows\\system32\\cmd.exe',
      args: [
        '/d',
        '/s',
        '/c',
        '"C:\\Program^ Files\\nodejs\\npx.cmd ^"-y^" ^"@modelcontextprotocol/server-memory^""',
      ],
      windowsVerbatimArguments: true,
    });
  });

  it('Windows: an .exe found on PATH is spawned directly (PATH order wins, first extension of PATHEXT first)', () => {
    const r = resolveStdioCommand('uvx', ['mcp-server-time'], {
      platform: 'win32',
      env: winEnv,
      isFile: files('C:\\Users\\me\\AppData\\Roaming\\npm\\uvx.cmd', 'C:\\Program Files\\nodejs\\uvx.exe'),
    });
    expect(r).toEqual({ command: 'C:\\Program Files\\nodejs\\uvx.exe', args: ['mcp-server-time'] });
  });

  it('Windows: a command given with its extension is looked up as it is; .bat goes through cmd.exe', () => {
    const r = resolveStdioCommand('server.bat', [], {
      platform: 'win32',
      env: winEnv,
      isFile: files('C:\\Windows\\system32\\server.bat'),
    });
    expect(r.command).toBe('C:\\Windows\\system32\\cmd.exe');
    expect(r.args).toEqual(['/d', '/s', '/c', '"C:\\Windows\\system32\\server.bat"']);
  });

  it('Windows: a relative path with no extension is tried with each PATHEXT extension, from cwd', () => {
    const r = resolveStdioCommand('.\\bin\\tool', ['a'], {
      platform: 'win32',
      env: winEnv,
      cwd: 'D:\\proj',
      isFile: files('D:\\proj\\bin\\tool.cmd'),
    });
    expect(r.args.at(-1)).toBe('"D:\\proj\\bin\\tool.cmd ^"a^""');
  });

  it('Windows: an npm cmd-shim in node_modules\\.bin gets its metacharacters escaped twice', () => {
    const r = resolveStdioCommand('node_modules\\.bin\\srv', ['a&b'], {
      platform: 'win32',
      env: winEnv,
      cwd: 'D:\\p',
      isFile: files('D:\\p\\node_modules\\.bin\\srv.cmd'),
    });
    expect(r.args.at(-1)).toBe('"D:\\p\\node_modules\\.bin\\srv.cmd ^^^"a^^^&b^^^""');
  });

  it('Windows: without COMSPEC cmd.exe is used; a command not found is left as it is', () => {
    const env = { PATH: 'C:\\bin' };
    expect(
      resolveStdioCommand('x', [], { platform: 'win32', env, isFile: files('C:\\bin\\x.CMD') }).command,
    ).toBe('cmd.exe');
    expect(resolveStdioCommand('missing', ['1'], { platform: 'win32', env, isFile: () => false })).toEqual({
      command: 'missing',
      args: ['1'],
    });
  });
});

describe('quoteCmdArgument', () => {
  it.each([
    ['plain', '"plain"'],
    ['with space', '"with^ space"'],
    ['a"quote', '"a\\^"quote"'],
    ['back\\slash\\', '"back\\slash\\\\"'],
    ['%PATH%', '"^%PATH^%"'],
    ['a|b<c>d^e&f', '"a^|b^<c^>d^^e^&f"'],
    ['', '""'],
  ])('%j -> %s', (arg, quoted) => {
    expect(quoteCmdArgument(arg)).toBe(quoted.replace(/^"/, '^"').replace(/"$/, '^"'));
  });
});

describe('inheritedEnvironment', () => {
  const host = {
    SYSTEMROOT: 'C:\\Windows',
    APPDATA: 'C:\\Users\\me\\AppData\\Roaming',
    LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local',
    ProgramFiles: 'C:\\Program Files',
    TEMP: 'C:\\Temp',
    PATHEXT: '.COM;.EXE;.BAT;.CMD',
    ComSpec: 'C:\\Windows\\system32\\cmd.exe',
    Path: 'C:\\Windows',
    GITHUB_TOKEN: 'secret',
    HOME: '/home/me',
    SHELL: '/bin/bash',
    BASH_FUNC_x: '() { :; }',
  };

  it('Windows: what programs need to start is inherited, case-insensitively; secrets are not', () => {
    const env = inheritedEnvironment('win32', host);
    for (const k of [
      'SYSTEMROOT',
      'APPDATA',
      'LOCALAPPDATA',
      'ProgramFiles',
      'TEMP',
      'PATHEXT',
      'ComSpec',
      'Path',
    ])
      expect(env[k]).toBe(host[k as keyof typeof host]);
    expect(env.GITHUB_TOKEN).toBeUndefined();
    expect(env.SHELL).toBeUndefined();
    expect(WINDOWS_INHERITED_ENV).toContain('SYSTEMROOT');
  });

  it("Windows: a configured PATH replaces the host's Path (no duplicate key of another case)", () => {
    const env = inheritedEnvironment('win32', host, { PATH: 'D:\\tools' });
    expect(env.PATH).toBe('D:\\tools');
    expect(Object.keys(env).filter((k) => k.toUpperCase() === 'PATH')).toEqual(['PATH']);
  });

  it('POSIX: HOME, LOGNAME, PATH, SHELL, TERM, USER only; exported shell functions are not inherited', () => {
    const env = inheritedEnvironment(
      'linux',
      { ...host, PATH: '/usr/bin', SHELL: '() { evil; }' },
      { X: '1' },
    );
    expect(env).toEqual({ HOME: '/home/me', PATH: '/usr/bin', X: '1' });
  });
});
