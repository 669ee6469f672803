import type { ResolvedServer } from '@wave/mcp-config';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock';
import { McpPoolError } from '../src/errors';
import {
  assertDialable,
  defaultTransportFactory,
  type StdioSpawnHost,
  stdioEnvironment,
  stdioTransport,
} from '../src/factory';

const base = (over: Partial<ResolvedServer>): ResolvedServer => ({
  name: 'srv',
  source: 'project',
  transport: 'stdio',
  config: { command: 'node' },
  fingerprint: 'fp',
  ...over,
});

describe('assertDialable', () => {
  it.each<[string, Partial<ResolvedServer>, string | null]>([
    ['stdio with command', {}, null],
    ['http with url', { transport: 'http', config: { url: 'https://example.test/mcp' } }, null],
    ['sse with url', { transport: 'sse', config: { url: 'http://127.0.0.1:1/sse' } }, null],
    ['unknown type', { transport: 'websocket', config: { url: 'ws://x' } }, 'TRANSPORT_UNKNOWN'],
    ['stdio without command', { config: {} }, 'CONFIG_INVALID'],
    ['stdio with blank command', { config: { command: '  ' } }, 'CONFIG_INVALID'],
    ['http without url', { transport: 'http', config: {} }, 'CONFIG_INVALID'],
    ['http with a relative url', { transport: 'http', config: { url: '/mcp' } }, 'CONFIG_INVALID'],
    ['http with a non-http url', { transport: 'http', config: { url: 'ftp://x/y' } }, 'CONFIG_INVALID'],
  ])('%s', (_label, over, code) => {
    const s = base(over);
    if (code === null) {
      expect(() => assertDialable(s)).not.toThrow();
      return;
    }
    let err: unknown;
    try {
      assertDialable(s);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(McpPoolError);
    expect((err as McpPoolError).code).toBe(code);
    expect((err as McpPoolError).message).toContain('"srv"');
  });

  it('unknown type: the message says there is no http/sse fallback', () => {
    expect(() => assertDialable(base({ transport: 'grpc' }))).toThrow(/no fallback|no automatic fallback/);
  });
});

describe('stdioEnvironment', () => {
  it('is the SDK allow-list plus the server env (server wins), without other host variables', () => {
    const prev = process.env.WAVE_POOL_TEST_SECRET;
    process.env.WAVE_POOL_TEST_SECRET = 'do-not-leak';
    try {
      const env = stdioEnvironment(base({ config: { command: 'x', env: { FOO: 'bar', PATH: '/custom' } } }));
      expect(env.FOO).toBe('bar');
      expect(env.PATH).toBe('/custom');
      expect(env.WAVE_POOL_TEST_SECRET).toBeUndefined();
      if (process.platform !== 'win32' && process.env.HOME) expect(env.HOME).toBe(process.env.HOME);
    } finally {
      if (prev === undefined) delete process.env.WAVE_POOL_TEST_SECRET;
      else process.env.WAVE_POOL_TEST_SECRET = prev;
    }
  });
});

describe('defaultTransportFactory', () => {
  const ctx = {
    signal: new AbortController().signal,
    onPid: () => {},
    clock: systemClock(),
    stderrBytes: 1024,
    killGraceMs: 100,
  };
  it.each([
    ['stdio', base({}), 'stdio'],
    ['http', base({ transport: 'http', config: { url: 'http://127.0.0.1:1/mcp' } }), 'http'],
    ['sse', base({ transport: 'sse', config: { url: 'http://127.0.0.1:1/sse' } }), 'sse'],
  ])('%s creates an unstarted %s handle (nothing spawned, nothing fetched)', async (_l, s, kind) => {
    const h = defaultTransportFactory(s, ctx);
    expect(h.kind).toBe(kind);
    expect(h.pid()).toBeUndefined();
    expect(await h.terminate()).toMatchObject({ pids: [], survivors: [] });
  });

  it('refuses an unknown type before creating anything', () => {
    expect(() => defaultTransportFactory(base({ transport: 'carrier-pigeon' }), ctx)).toThrow(McpPoolError);
  });
});

describe('stdioTransport: what is spawned, per platform (injected; no Windows machine needed)', () => {
  const ctx = {
    signal: new AbortController().signal,
    onPid: () => {},
    clock: systemClock(),
    stderrBytes: 1024,
    killGraceMs: 100,
  };
  type Spawned = { command: string; args: readonly string[]; options: Record<string, unknown> };
  /** Starts the transport with a spawner that records what it was asked and starts nothing. */
  async function spawned(server: ResolvedServer, host: Omit<StdioSpawnHost, 'spawn'>): Promise<Spawned> {
    const seen: Spawned[] = [];
    const t = stdioTransport(server, ctx, {
      ...host,
      spawn: (command, args = [], options = {}) => {
        seen.push({ command, args, options: options as Record<string, unknown> });
        throw new Error('not spawned in this test');
      },
    });
    await expect(t.start()).rejects.toMatchObject({ code: 'SPAWN_FAILED' });
    expect(seen).toHaveLength(1);
    return seen[0]!;
  }
  const winEnv = {
    Path: 'C:\\Windows\\system32;C:\\Program Files\\nodejs',
    PATHEXT: '.COM;.EXE;.BAT;.CMD',
    ComSpec: 'C:\\Windows\\system32\\cmd.exe',
    SystemRoot: 'C:\\Windows',
    APPDATA: 'C:\\Users\\ada\\AppData\\Roaming',
    LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local',
    ProgramFiles: 'C:\\Program Files',
    TEMP: 'C:\\Users\\ada\\AppData\\Local\\Temp',
    GITHUB_TOKEN: 'do-not-leak',
  };

  it('Windows: npx (npx.cmd on Path) runs through cmd.exe /d /s /c, verbatim and quoted, with what Windows programs need', async () => {
    const server = base({
      config: { command: 'npx', args: ['-y', '@scope/server', 'a b&c'], env: { API_KEY: 'k' } },
    });
    const s = await spawned(server, {
      platform: 'win32',
      env: winEnv,
      isFile: (p) => p === 'C:\\Program Files\\nodejs\\npx.cmd',
    });
    expect(s.command).toBe('C:\\Windows\\system32\\cmd.exe');
    expect(s.args.slice(0, 3)).toEqual(['/d', '/s', '/c']);
    expect(s.args[3]).toBe('"C:\\Program^ Files\\nodejs\\npx.cmd ^"-y^" ^"@scope/server^" ^"a^ b^&c^""');
    expect(s.options.windowsVerbatimArguments).toBe(true);
    const env = s.options.env as Record<string, string>;
    for (const k of [
      'Path',
      'PATHEXT',
      'ComSpec',
      'SystemRoot',
      'APPDATA',
      'LOCALAPPDATA',
      'ProgramFiles',
      'TEMP',
    ]) {
      expect(env[k], k).toBe(winEnv[k as keyof typeof winEnv]);
    }
    expect(env.API_KEY).toBe('k');
    expect(env.GITHUB_TOKEN).toBeUndefined();
  });

  it('POSIX: the command and arguments as configured, no verbatim arguments, the POSIX allow-list', async () => {
    const server = base({ config: { command: 'npx', args: ['-y', 'a b&c'] } });
    const s = await spawned(server, {
      platform: 'linux',
      env: { PATH: '/usr/bin', HOME: '/home/ada', GITHUB_TOKEN: 'do-not-leak' },
    });
    expect([s.command, ...s.args]).toEqual(['npx', '-y', 'a b&c']);
    expect(s.options.windowsVerbatimArguments).toBeUndefined();
    expect(s.options.env).toMatchObject({ PATH: '/usr/bin', HOME: '/home/ada' });
    expect((s.options.env as Record<string, string>).GITHUB_TOKEN).toBeUndefined();
  });
});
