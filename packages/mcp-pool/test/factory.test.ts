import type { ResolvedServer } from '@wave/mcp-config';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock';
import { McpPoolError } from '../src/errors';
import { assertDialable, defaultTransportFactory, stdioEnvironment } from '../src/factory';

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
