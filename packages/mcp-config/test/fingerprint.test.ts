import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../src/fingerprint';
import { mergeSources } from '../src/merge';
import type { ResolvedServer, ServerConfig } from '../src/types';

const W = '/work/a';
const base: ServerConfig = {
  command: 'npx',
  args: ['-y', 'pkg'],
  env: { A: '1', B: '${TOKEN}' },
  cwd: '/tmp',
};
const remote: ServerConfig = { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${T}' } };

describe('fingerprint', () => {
  it('is sha256 hex of the stable JSON of {type, command, args, env, cwd, url, headers, workdir}', () => {
    // Independent oracle: keys sorted by hand, undefined fields left out.
    const expected = createHash('sha256')
      .update(
        '{"args":["-y","pkg"],"command":"npx","cwd":"/tmp","env":{"A":"1","B":"${TOKEN}"},"type":"stdio","workdir":"/work/a"}',
      )
      .digest('hex');
    expect(fingerprint(base, W)).toBe(expected);
    expect(fingerprint(base, W)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, ServerConfig]>([
    ['command', { ...base, command: 'node' }],
    ['an arg', { ...base, args: ['-y', 'pkg@2'] }],
    ['arg order', { ...base, args: ['pkg', '-y'] }],
    ['an env value', { ...base, env: { A: '2', B: '${TOKEN}' } }],
    ['an env key', { ...base, env: { A: '1', C: '${TOKEN}' } }],
    ['env reference name', { ...base, env: { A: '1', B: '${OTHER}' } }],
    ['cwd', { ...base, cwd: '/var' }],
    ['transport type', { ...remote, type: 'sse' }],
    ['url', { ...remote, url: 'https://h/mcp2' }],
    ['a header', { ...remote, headers: { Authorization: 'Bearer ${U}' } }],
  ])('changes with %s', (_label, changed) => {
    const original = changed.url !== undefined ? remote : base;
    expect(fingerprint(changed, W)).not.toBe(fingerprint(original, W));
  });

  it('differs per workdir', () => {
    expect(fingerprint(base, '/work/a')).not.toBe(fingerprint(base, '/work/b'));
  });

  it.each<[string, ServerConfig, ServerConfig]>([
    ['key order', { env: { B: '${TOKEN}', A: '1' }, cwd: '/tmp', args: ['-y', 'pkg'], command: 'npx' }, base],
    ['explicit stdio vs inferred', { ...base, type: 'stdio' }, base],
    ['explicit http vs inferred', { ...remote, type: 'http' }, remote],
    ['lifecycle', { ...base, lifecycle: 'keep-alive' }, base],
    ['timeouts', { ...base, idleTimeoutMs: 1, connectTimeoutMs: 2, callTimeoutMs: 3 }, base],
    ['approveTools', { ...base, approveTools: ['*'] }, base],
    ['readOnlyTools', { ...base, readOnlyTools: { '*': true } }, base],
    ['description', { ...base, description: 'x' }, base],
    ['empty env vs none', { command: 'x', env: {} }, { command: 'x' }],
    ['empty args vs none', { command: 'x', args: [] }, { command: 'x' }],
    ['empty headers vs none', { url: 'https://h', headers: {} }, { url: 'https://h' }],
  ])('does not change with %s', (_label, a, b) => {
    expect(fingerprint(a, W)).toBe(fingerprint(b, W));
  });

  it('is over unexpanded values: a changed secret does not change it', () => {
    const layers = [
      { source: 'user' as const, servers: { s: { url: 'https://h', headers: { A: '${T}' } } } },
    ];
    const one = mergeSources(layers, { env: { T: 'one' }, workdir: W }).servers[0]!;
    const two = mergeSources(layers, { env: { T: 'two' }, workdir: W }).servers[0]!;
    expect(one.config.headers).not.toEqual(two.config.headers);
    expect(one.fingerprint).toBe(two.fingerprint);
    expect(one.fingerprint).toBe(fingerprint({ url: 'https://h', headers: { A: '${T}' } }, W));
  });

  it('accepts a resolved server (uses raw) or a hand-built one (uses config)', () => {
    const resolved = mergeSources([{ source: 'user', servers: { s: { command: '${C}' } } }], {
      env: { C: 'node' },
      workdir: W,
    }).servers[0]!;
    expect(fingerprint(resolved, W)).toBe(resolved.fingerprint);
    expect(fingerprint(resolved, W)).toBe(fingerprint({ command: '${C}' }, W));
    const handBuilt: ResolvedServer = {
      name: 's',
      source: 'constructor',
      transport: 'stdio',
      config: { command: 'node' },
      fingerprint: '',
    };
    expect(fingerprint(handBuilt, W)).toBe(fingerprint({ command: 'node' }, W));
  });
});
