import { describe, expect, it } from 'vitest';
import { assertConnectable, isToolAutoApproved, matchToolGlob, toolReadOnlyOverride } from '../src/connect';
import { isMcpConfigError, McpConfigError } from '../src/errors';
import { mergeSources } from '../src/merge';
import type { ResolvedServer } from '../src/types';

function resolved(entry: unknown, env: Record<string, string> = {}): ResolvedServer {
  return mergeSources([{ source: 'project', file: '/w/.mcp.json', servers: { s: entry } }], { env })
    .servers[0]!;
}

function thrown(fn: () => void): McpConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof McpConfigError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

describe('assertConnectable: disabled servers', () => {
  it('a server with disabled: true is refused with SERVER_DISABLED, whatever else it has', () => {
    for (const entry of [
      { command: 'node', disabled: true },
      { url: 'https://h/mcp', disabled: true },
      { type: 'ws', url: 'ws://h', disabled: true },
    ]) {
      const err = thrown(() => assertConnectable(resolved(entry)));
      expect(err.code).toBe('SERVER_DISABLED');
      expect(err.message).toContain('"disabled"');
      expect(isMcpConfigError(err, 'SERVER_DISABLED')).toBe(true);
    }
  });

  it('a hand-built server with disabled: true is refused too', () => {
    const server: ResolvedServer = {
      name: 'x',
      source: 'constructor',
      transport: 'stdio',
      config: { command: 'node' },
      fingerprint: '',
      disabled: true,
    };
    expect(thrown(() => assertConnectable(server)).code).toBe('SERVER_DISABLED');
  });

  it('disabled: false connects', () => {
    expect(() => assertConnectable(resolved({ command: 'node', disabled: false }))).not.toThrow();
  });
});

describe('assertConnectable', () => {
  it.each([
    ['stdio', { command: 'node' }],
    ['http', { url: 'https://h/mcp' }],
    ['sse', { type: 'sse', url: 'https://h/sse' }],
    ['with warnings only', { command: 'node', foo: 1, lifecycle: 'bogus' }],
  ])('passes a valid %s server', (_label, entry) => {
    expect(() => assertConnectable(resolved(entry))).not.toThrow();
  });

  it.each([
    ['unknown type', { type: 'websocket', url: 'ws://h' }, {}, 'TRANSPORT_UNKNOWN', 'websocket'],
    [
      'unknown type even with a valid shape',
      { type: 'grpc', command: 'x' },
      {},
      'TRANSPORT_UNKNOWN',
      '"grpc"',
    ],
    [
      'unresolved variable',
      { url: 'https://h', headers: { A: '${TOKEN}' } },
      {},
      'VARIABLE_UNRESOLVED',
      'TOKEN',
    ],
    ['invalid field', { command: 'x', args: 'nope' }, {}, 'SERVER_INVALID', 'args'],
    ['conflicting fields', { command: 'x', url: 'https://h' }, {}, 'SERVER_INVALID', 'url'],
    ['url invalid after expansion', { url: '${U}' }, { U: 'x' }, 'SERVER_INVALID', 'absolute URL'],
  ])('throws for %s', (_label, entry, env, code, mentions) => {
    const err = thrown(() => assertConnectable(resolved(entry, env)));
    expect(err.code).toBe(code);
    expect(isMcpConfigError(err, code as McpConfigError['code'])).toBe(true);
    expect(err.server).toBe('s');
    expect(err.file).toBe('/w/.mcp.json');
    expect(err.message).toContain('"s"');
    expect(err.message).toContain('/w/.mcp.json');
    expect(err.message).toContain(mentions);
  });

  it.each<[string, ResolvedServer, string | undefined]>([
    [
      'hand-built stdio',
      { name: 'h', source: 'constructor', transport: 'stdio', config: { command: 'x' }, fingerprint: '' },
      undefined,
    ],
    [
      'hand-built http',
      { name: 'h', source: 'constructor', transport: 'http', config: { url: 'https://h' }, fingerprint: '' },
      undefined,
    ],
    [
      'hand-built unknown',
      { name: 'h', source: 'constructor', transport: 'carrier-pigeon', config: {}, fingerprint: '' },
      'TRANSPORT_UNKNOWN',
    ],
    [
      'hand-built stdio without command',
      { name: 'h', source: 'constructor', transport: 'stdio', config: {}, fingerprint: '' },
      'SERVER_INVALID',
    ],
    [
      'hand-built sse without url',
      { name: 'h', source: 'user', transport: 'sse', config: {}, fingerprint: '' },
      'SERVER_INVALID',
    ],
    [
      'hand-built marked not connectable',
      {
        name: 'h',
        source: 'user',
        transport: 'stdio',
        config: { command: 'x' },
        fingerprint: '',
        connectable: false,
      },
      'SERVER_INVALID',
    ],
  ])('%s', (_label, server, code) => {
    if (code === undefined) expect(() => assertConnectable(server)).not.toThrow();
    else expect(thrown(() => assertConnectable(server)).code).toBe(code);
  });
});

describe('tool approval globs', () => {
  it.each([
    ['get_*', 'get_issue', true],
    ['get_*', 'get_', true],
    ['get_*', 'list_issues', false],
    ['get_*', 'xget_issue', false],
    ['*', 'anything', true],
    ['get_?', 'get_a', true],
    ['get_?', 'get_ab', false],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['(x)+[y]', '(x)+[y]', true],
    ['Get_*', 'get_x', false],
    ['read', 'read', true],
    ['read', 'read_all', false],
  ])('%s matches %s: %s', (glob, name, expected) => {
    expect(matchToolGlob(glob, name)).toBe(expected);
  });

  it('a hand-built project server with approveTools in config is still not auto-approved', () => {
    const server: ResolvedServer = {
      name: 'p',
      source: 'project',
      transport: 'stdio',
      config: { command: 'x', approveTools: ['*'] },
      fingerprint: '',
    };
    expect(isToolAutoApproved(server, 'delete_everything')).toBe(false);
    expect(isToolAutoApproved({ ...server, source: 'user' }, 'delete_everything')).toBe(true);
  });
});

describe('toolReadOnlyOverride', () => {
  const server = (readOnlyTools?: Record<string, boolean>): ResolvedServer => ({
    name: 'db',
    source: 'project',
    transport: 'stdio',
    config: readOnlyTools === undefined ? { command: 'x' } : { command: 'x', readOnlyTools },
    fingerprint: '',
  });

  it.each<[string, Record<string, boolean> | undefined, string, boolean | undefined]>([
    ['no field', undefined, 'read_rows', undefined],
    ['no match', { 'read_*': true }, 'drop_table', undefined],
    ['a match', { 'read_*': true }, 'read_rows', true],
    ['false wins over the hint', { 'read_*': false }, 'read_rows', false],
    ['first match wins', { read_audit: false, 'read_*': true }, 'read_audit', false],
    ['first match wins (other order)', { 'read_*': true, read_audit: false }, 'read_audit', true],
    [
      'relative to the server: the full name does not match',
      { 'read_*': true },
      'mcp__db__read_rows',
      undefined,
    ],
    ['case-sensitive', { 'Read_*': true }, 'read_rows', undefined],
  ])('%s', (_label, readOnlyTools, tool, expected) => {
    expect(toolReadOnlyOverride(server(readOnlyTools), tool)).toBe(expected);
  });
});
