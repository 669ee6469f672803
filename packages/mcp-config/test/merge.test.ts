import { deepFreeze } from '@wave/testkit';
import { describe, expect, it } from 'vitest';
import { isToolAutoApproved, toolReadOnlyOverride } from '../src/connect';
import { displayServer } from '../src/display';
import { fingerprint } from '../src/fingerprint';
import { mergeSources } from '../src/merge';
import type { ConfigSource, SourceLayer } from '../src/types';

const SOURCES: ConfigSource[] = ['constructor', 'project', 'user', 'plugin'];
const WORKDIR = '/work/proj';

function layer(
  source: ConfigSource,
  servers: Record<string, unknown>,
  extra: Partial<SourceLayer> = {},
): SourceLayer {
  const base: SourceLayer = { source, servers };
  if (source === 'project') base.file = `${WORKDIR}/.mcp.json`;
  if (source === 'user') base.file = '/home/u/.wave/mcp.json';
  if (source === 'plugin') {
    base.plugin = 'plug';
    base.pluginRoot = '/plugins/plug';
  }
  return { ...base, ...extra };
}

const pairs = SOURCES.flatMap((hi, i) => SOURCES.slice(i + 1).map((lo) => [hi, lo] as const));

describe('mergeSources: precedence', () => {
  it.each(pairs.flatMap(([hi, lo]) => [[hi, lo, 'in order'] as const, [hi, lo, 'reversed'] as const]))(
    '%s beats %s (layers %s)',
    (hi, lo, order) => {
      const layers = [
        layer(hi, { same: { command: `from-${hi}` } }),
        layer(lo, { same: { command: `from-${lo}`, args: ['only-lower'], env: { ONLY: 'lower' } } }),
      ];
      const { servers, issues } = mergeSources(order === 'in order' ? layers : layers.reverse(), {
        workdir: WORKDIR,
      });
      expect(issues).toEqual([]);
      expect(servers).toHaveLength(1);
      const [winner] = servers;
      expect(winner!.source).toBe(hi);
      // whole entry replaced, never deep-merged
      expect(winner!.config.command).toBe(`from-${hi}`);
      expect(winner!.config.args).toBeUndefined();
      expect(winner!.config.env).toBeUndefined();
      expect(winner!.shadowed).toHaveLength(1);
      expect(winner!.shadowed![0]!.source).toBe(lo);
      expect(winner!.shadowed![0]!.fingerprint).toBe(
        fingerprint(
          {
            command: `from-${lo}`,
            args: ['only-lower'],
            // a plugin server's raw env carries its root (it decides what runs)
            env: lo === 'plugin' ? { ONLY: 'lower', WAVE_PLUGIN_ROOT: '/plugins/plug' } : { ONLY: 'lower' },
          },
          WORKDIR,
        ),
      );
    },
  );

  it('all four sources: constructor wins, the rest are shadowed highest first', () => {
    const { servers } = mergeSources(
      [...SOURCES].reverse().map((s) => layer(s, { x: { command: s } })),
      { workdir: WORKDIR },
    );
    expect(servers.map((s) => [s.name, s.source])).toEqual([['x', 'constructor']]);
    expect(servers[0]!.shadowed!.map((s) => s.source)).toEqual(['project', 'user', 'plugin']);
    expect(servers[0]!.shadowed![1]).toMatchObject({ source: 'user', file: '/home/u/.wave/mcp.json' });
    expect(servers[0]!.shadowed![2]).toMatchObject({ source: 'plugin', plugin: 'plug' });
  });

  it('project over user: the seed scenario, and shadowed says which file', () => {
    const { servers } = mergeSources([
      layer('user', { db: { command: 'user-db' }, search: { command: 'rg-mcp' } }),
      layer('project', { db: { command: 'project-db' } }),
    ]);
    expect(servers.map((s) => [s.name, s.source, s.config.command])).toEqual([
      ['db', 'project', 'project-db'],
      ['search', 'user', 'rg-mcp'],
    ]);
    expect(servers[0]!.shadowed).toEqual([
      expect.objectContaining({ source: 'user', file: '/home/u/.wave/mcp.json' }),
    ]);
  });

  it('two plugins with one name: the earlier plugin wins, with a warning', () => {
    const { servers, issues } = mergeSources([
      layer('plugin', { s: { command: 'a' } }, { plugin: 'first', pluginRoot: '/p1' }),
      layer('plugin', { s: { command: 'b' } }, { plugin: 'second', pluginRoot: '/p2' }),
    ]);
    expect(servers.map((s) => s.plugin)).toEqual(['first']);
    expect(issues).toEqual([
      expect.objectContaining({ code: 'PLUGIN_CONFLICT', severity: 'warning', server: 's' }),
    ]);
  });

  it('an invalid higher definition still hides the lower one (kept, not connectable)', () => {
    const { servers, issues } = mergeSources([
      layer('user', { gh: { command: 'good' } }),
      layer('project', { gh: { command: 'x', args: 'oops' } }),
    ]);
    expect(servers).toHaveLength(1);
    expect(servers[0]).toMatchObject({ source: 'project', connectable: false });
    expect(servers[0]!.shadowed![0]!.source).toBe('user');
    expect(issues.map((i) => i.code)).toEqual(['FIELD_INVALID']);
  });

  it('an invalid name is dropped and hides nothing', () => {
    const { servers, issues } = mergeSources([
      layer('project', { 'bad\nname': { command: 'x' } }),
      layer('user', { ok: { command: 'y' } }),
    ]);
    expect(servers.map((s) => s.name)).toEqual(['ok']);
    expect(issues.map((i) => [i.code, i.source])).toEqual([['NAME_INVALID', 'project']]);
  });

  it('output is in precedence order, document order inside a layer', () => {
    const { servers } = mergeSources([
      layer('plugin', { p1: { command: 'x' } }),
      layer('user', { u2: { command: 'x' }, u1: { command: 'x' } }),
      layer('constructor', { c1: { command: 'x' } }),
      layer('project', { pb: { command: 'x' }, pa: { command: 'x' } }),
    ]);
    expect(servers.map((s) => s.name)).toEqual(['c1', 'pb', 'pa', 'u2', 'u1', 'p1']);
  });

  it('does not mutate its input', () => {
    const layers = deepFreeze([
      layer('plugin', { p: { command: '${WAVE_PLUGIN_ROOT}/x', env: { A: '${A}' }, approveTools: ['x'] } }),
      layer('project', { q: { url: '${U}', headers: { H: '${H}' }, approveTools: ['y'] } }),
    ]);
    expect(() => mergeSources(layers, { env: { A: 'a', U: 'https://h', H: 'h' } })).not.toThrow();
  });

  it('a layer whose servers are not an object is reported and skipped', () => {
    const { servers, issues } = mergeSources([
      layer('constructor', 'nope' as unknown as Record<string, unknown>),
      layer('user', { ok: { command: 'x' } }),
    ]);
    expect(servers.map((s) => s.name)).toEqual(['ok']);
    expect(issues).toEqual([expect.objectContaining({ code: 'CONFIG_MALFORMED', source: 'constructor' })]);
  });

  it('an entry that throws when read is reported; the others load', () => {
    const evil = {
      get command(): string {
        throw new Error('boom');
      },
    };
    const { servers, issues } = mergeSources([layer('constructor', { evil, fine: { command: 'x' } })]);
    expect(servers.map((s) => s.name)).toEqual(['fine']);
    expect(issues).toEqual([expect.objectContaining({ code: 'SERVER_INVALID', server: 'evil' })]);
    expect(issues[0]!.message).toContain('boom');
  });

  it('passes layer issues through, file-level first, sources in precedence order', () => {
    const fileIssue = {
      severity: 'error' as const,
      code: 'CONFIG_MALFORMED' as const,
      source: 'user' as const,
      message: 'x',
    };
    const { issues } = mergeSources([
      layer('user', { '': {} }, { issues: [fileIssue] }),
      layer('project', { p: {} }),
    ]);
    expect(issues.map((i) => [i.source, i.code])).toEqual([
      ['project', 'SERVER_INVALID'],
      ['user', 'CONFIG_MALFORMED'],
      ['user', 'NAME_INVALID'],
    ]);
  });
});

describe('mergeSources: names', () => {
  it('names with dots and spaces load (Kiro, Amazon Q, Claude Desktop)', () => {
    const { servers, issues } = mergeSources([
      layer('project', {
        'awslabs.aws-documentation-mcp-server': { command: 'uvx' },
        'My Server': { command: 'x' },
      }),
    ]);
    expect(servers.map((s) => s.name)).toEqual(['awslabs.aws-documentation-mcp-server', 'My Server']);
    expect(issues).toEqual([]);
  });

  it('names that collide after the tool-identity mapping: the later one is skipped with NAME_CONFLICT', () => {
    const { servers, issues } = mergeSources([
      layer('user', { 'a.b': { command: 'u' }, 'c d': { command: 'x' } }),
      layer('project', { a_b: { command: 'p' }, 'a b': { command: 'q' } }),
    ]);
    expect(servers.map((s) => [s.name, s.source])).toEqual([
      ['a_b', 'project'],
      ['c d', 'user'],
    ]);
    expect(issues.map((i) => [i.code, i.severity, i.source, i.server])).toEqual([
      ['NAME_CONFLICT', 'error', 'project', 'a b'],
      ['NAME_CONFLICT', 'error', 'user', 'a.b'],
    ]);
    expect(issues[0]?.message).toContain('"a_b"');
    expect(issues[0]?.message).toContain('mcp__a_b__');
  });

  it('the same name in two sources is shadowing, not a conflict', () => {
    const { servers, issues } = mergeSources([
      layer('user', { 'a.b': { command: 'u' } }),
      layer('project', { 'a.b': { command: 'p' } }),
    ]);
    expect(servers.map((s) => [s.name, s.source, s.shadowed?.length])).toEqual([['a.b', 'project', 1]]);
    expect(issues).toEqual([]);
  });
});

describe('mergeSources: disabled servers', () => {
  it('disabled: true is listed with disabled: true, not connectable, quietly; disabled: false is a normal server', () => {
    const { servers, issues } = mergeSources([
      layer('project', { off: { command: 'x', disabled: true }, on: { command: 'y', disabled: false } }),
    ]);
    expect(issues).toEqual([]);
    expect(servers.map((s) => [s.name, s.disabled, s.connectable])).toEqual([
      ['off', true, false],
      ['on', undefined, true],
    ]);
  });
});

describe('mergeSources: messages never quote secrets', () => {
  it('a token typed in braces is not quoted in VARIABLE_INVALID; a default is never shown', () => {
    const { servers, issues } = mergeSources([
      layer('project', {
        s: {
          command: 'x',
          args: ['--key', '${sk-live-hunter2}'],
          env: { GITHUB_TOKEN: '${GITHUB_TOKEN:-ghp_hunter2}', B: '${sk hunter2}' },
        },
      }),
    ]);
    expect(issues.map((i) => [i.code, i.field])).toEqual([
      ['VARIABLE_INVALID', 'args[1]'],
      ['VARIABLE_INVALID', 'env.B'],
    ]);
    const text = JSON.stringify(issues) + JSON.stringify(servers.map(displayServer));
    expect(text).not.toContain('hunter2');
    expect(servers[0]!.displayEnv).toEqual({ GITHUB_TOKEN: '${GITHUB_TOKEN:-****}', B: '****' });
  });

  it('many unresolved variables: at most 20 issues and one summary', () => {
    const env: Record<string, string> = {};
    for (let i = 0; i < 50; i++) env[`K${i}`] = `\${V${i}}`;
    const { issues } = mergeSources([layer('project', { s: { command: 'x', env } })]);
    expect(issues.filter((i) => i.code === 'VARIABLE_UNRESOLVED')).toHaveLength(21);
    expect(issues.at(-1)?.message).toContain('30 more variables');
  });
});

describe('mergeSources: limits', () => {
  it('keeps 32 servers in precedence order and reports the rest in that order', () => {
    const named = (prefix: string, n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, { command: 'x' }]));
    const { servers, issues } = mergeSources([
      layer('plugin', named('pl', 5)),
      layer('user', named('u', 10)),
      layer('project', named('p', 20)),
      layer('constructor', named('c', 5)),
    ]);
    expect(servers).toHaveLength(32);
    expect(servers.map((s) => s.name)).toEqual([
      ...Array.from({ length: 5 }, (_, i) => `c${i}`),
      ...Array.from({ length: 20 }, (_, i) => `p${i}`),
      ...Array.from({ length: 7 }, (_, i) => `u${i}`),
    ]);
    expect(issues.map((i) => [i.code, i.server, i.source])).toEqual([
      ['LIMIT_EXCEEDED', 'u7', 'user'],
      ['LIMIT_EXCEEDED', 'u8', 'user'],
      ['LIMIT_EXCEEDED', 'u9', 'user'],
      ...Array.from({ length: 5 }, (_, i) => ['LIMIT_EXCEEDED', `pl${i}`, 'plugin']),
    ]);
    expect(issues.every((i) => i.severity === 'error' && i.message.includes('32'))).toBe(true);
  });

  it('exactly 32 is fine; maxServers is an option', () => {
    const many = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`s${i}`, { command: 'x' }]));
    expect(mergeSources([layer('user', many)]).issues).toEqual([]);
    const small = mergeSources([layer('user', many)], { maxServers: 3 });
    expect(small.servers.map((s) => s.name)).toEqual(['s0', 's1', 's2']);
    expect(small.issues).toHaveLength(29);
  });

  it('shadowed definitions do not count toward the limit', () => {
    const many = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`s${i}`, { command: 'x' }]));
    const { servers, issues } = mergeSources([layer('user', many), layer('project', many)]);
    expect(servers).toHaveLength(32);
    expect(issues).toEqual([]);
  });
});

describe('mergeSources: approveTools trust', () => {
  it.each([
    ['constructor', true],
    ['user', true],
    ['project', false],
    ['plugin', false],
  ] as const)('from %s applied=%s', (source, applied) => {
    const { servers, issues } = mergeSources([
      layer(source, { s: { command: 'x', approveTools: ['get_*'] } }),
    ]);
    const [s] = servers;
    if (applied) {
      expect(s!.config.approveTools).toEqual(['get_*']);
      expect(s!.raw!.approveTools).toEqual(['get_*']);
      expect(s!.requestedApprovals).toBeUndefined();
      expect(issues).toEqual([]);
      expect(isToolAutoApproved(s!, 'get_issue')).toBe(true);
    } else {
      expect(s!.config.approveTools).toBeUndefined();
      expect(s!.raw!.approveTools).toBeUndefined();
      expect(s!.requestedApprovals).toEqual(['get_*']);
      expect(issues).toEqual([
        expect.objectContaining({ code: 'APPROVALS_NOT_TRUSTED', severity: 'warning', source, server: 's' }),
      ]);
      expect(s!.connectable).toBe(true);
      expect(isToolAutoApproved(s!, 'get_issue')).toBe(false);
    }
    expect(isToolAutoApproved(s!, 'delete_repo')).toBe(false);
  });
});

describe('mergeSources: expansion', () => {
  const env = { BIN: '/usr/bin/node', A1: 'one', TOKEN: 'secret-token', HOST: 'h.example.com', DIR: 'sub' };

  it('expands command, args, env, cwd (stdio) and keeps the unexpanded raw form', () => {
    const { servers, issues } = mergeSources(
      [
        layer('project', {
          s: { command: '${BIN}', args: ['${A1}', '${MISSING:-d}'], env: { T: '${TOKEN}' }, cwd: '${DIR}' },
        }),
      ],
      { env, workdir: WORKDIR },
    );
    expect(issues).toEqual([]);
    const [s] = servers;
    expect(s!.config).toEqual({
      type: 'stdio',
      command: '/usr/bin/node',
      args: ['one', 'd'],
      env: { T: 'secret-token' },
      cwd: `${WORKDIR}/sub`,
    });
    expect(s!.raw).toEqual({
      command: '${BIN}',
      args: ['${A1}', '${MISSING:-d}'],
      env: { T: '${TOKEN}' },
      cwd: '${DIR}',
    });
    expect(s!.displayEnv).toEqual({ T: '${TOKEN}' });
    expect(s!.connectable).toBe(true);
  });

  it('expands url and headers; displayUrl stays unexpanded', () => {
    const { servers } = mergeSources(
      [
        layer('user', {
          s: { url: 'https://${HOST}/mcp?key=${TOKEN}', headers: { Authorization: 'Bearer ${TOKEN}' } },
        }),
      ],
      { env },
    );
    const [s] = servers;
    expect(s!.config.url).toBe('https://h.example.com/mcp?key=secret-token');
    expect(s!.config.headers).toEqual({ Authorization: 'Bearer secret-token' });
    expect(s!.displayUrl).toBe('https://${HOST}/mcp?key=${TOKEN}');
    expect(s!.displayHeaders).toEqual({ Authorization: 'Bearer ${TOKEN}' });
    expect(JSON.stringify([s!.displayUrl, s!.displayHeaders, s!.raw])).not.toContain('secret-token');
  });

  it('a missing variable makes that server not connectable; the others load', () => {
    const { servers, issues } = mergeSources(
      [layer('project', { a: { command: 'x', env: { K: '${NOPE}' } }, b: { command: 'y' } })],
      { env: {} },
    );
    expect(servers.map((s) => [s.name, s.connectable])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    expect(issues).toEqual([
      expect.objectContaining({
        code: 'VARIABLE_UNRESOLVED',
        severity: 'error',
        server: 'a',
        field: 'env.K',
      }),
    ]);
    expect(issues[0]!.message).toContain('NOPE');
  });

  it.each([
    ['url expands to a non-URL', { url: '${U}' }, { U: 'nope' }, 'URL_INVALID'],
    ['url expands to ftp', { url: '${U}' }, { U: 'ftp://x' }, 'URL_INVALID'],
    ['command expands to ..', { command: '${C}' }, { C: '../evil' }, 'COMMAND_INVALID'],
    ['command expands to empty', { command: '${C:-}' }, {}, 'FIELD_INVALID'],
    [
      'header expands to a line break',
      { url: 'https://h', headers: { A: '${V}' } },
      { V: 'a\nb' },
      'FIELD_INVALID',
    ],
    ['arg expands to NUL', { command: 'x', args: ['${V}'] }, { V: 'a\0b' }, 'FIELD_INVALID'],
    ['invalid reference is a warning only', { command: 'x', args: ['${not valid}'] }, {}, 'VARIABLE_INVALID'],
  ])('%s', (_label, entry, vars, code) => {
    const { servers, issues } = mergeSources([layer('project', { s: entry })], { env: vars });
    expect(issues.map((i) => i.code)).toEqual([code]);
    expect(servers[0]!.connectable).toBe(code === 'VARIABLE_INVALID');
  });

  it('variables are looked up in the given env only (pure: process.env is not read)', () => {
    process.env.MCP_CONFIG_TEST_ONLY_IN_PROCESS = 'leak';
    try {
      const { servers } = mergeSources([
        layer('project', { s: { command: 'x', args: ['${MCP_CONFIG_TEST_ONLY_IN_PROCESS}'] } }),
      ]);
      expect(servers[0]!.connectable).toBe(false);
    } finally {
      delete process.env.MCP_CONFIG_TEST_ONLY_IN_PROCESS;
    }
  });
});

describe('mergeSources: plugin root', () => {
  it.each(['WAVE_PLUGIN_ROOT', 'CLAUDE_PLUGIN_ROOT'])('replaces ${%s} in command, args, env and cwd', (v) => {
    const { servers, issues } = mergeSources(
      [
        layer(
          'plugin',
          {
            s: {
              command: `\${${v}}/bin/srv`,
              args: ['--data', `\${${v}}/data`],
              env: { CFG: `\${${v}}/cfg` },
              cwd: `\${${v}}`,
            },
          },
          { pluginRoot: '/plugins/p' },
        ),
      ],
      { env: {} },
    );
    expect(issues).toEqual([]);
    expect(servers[0]!.config).toEqual({
      type: 'stdio',
      command: '/plugins/p/bin/srv',
      args: ['--data', '/plugins/p/data'],
      env: { CFG: '/plugins/p/cfg', WAVE_PLUGIN_ROOT: '/plugins/p' },
      cwd: '/plugins/p',
    });
    expect(servers[0]!.raw).toEqual({
      command: '/plugins/p/bin/srv',
      args: ['--data', '/plugins/p/data'],
      env: { CFG: '/plugins/p/cfg', WAVE_PLUGIN_ROOT: '/plugins/p' },
      cwd: '/plugins/p',
    });
    expect(servers[0]!.pluginRoot).toBe('/plugins/p');
    expect(servers[0]!.displayEnv).toEqual({ CFG: '****', WAVE_PLUGIN_ROOT: '/plugins/p' });
  });

  it('adds WAVE_PLUGIN_ROOT to a plugin stdio server without env; overrides a written one', () => {
    const { servers } = mergeSources([
      layer('plugin', { a: { command: 'x' }, b: { command: 'x', env: { WAVE_PLUGIN_ROOT: '/elsewhere' } } }),
    ]);
    expect(servers.map((s) => s.config.env)).toEqual([
      { WAVE_PLUGIN_ROOT: '/plugins/plug' },
      { WAVE_PLUGIN_ROOT: '/plugins/plug' },
    ]);
  });

  it('relative plugin cwd is resolved against the plugin root; project cwd against the workdir', () => {
    const { servers } = mergeSources(
      [
        layer('plugin', { a: { command: 'x', cwd: 'srv' } }),
        layer('project', { b: { command: 'x', cwd: 'tools' } }),
      ],
      { workdir: WORKDIR },
    );
    expect(servers.map((s) => s.config.cwd)).toEqual([`${WORKDIR}/tools`, '/plugins/plug/srv']);
  });

  it('plugin http servers get no env and no root substitution in url', () => {
    const { servers, issues } = mergeSources([
      layer('plugin', { h: { url: 'https://h/${CLAUDE_PLUGIN_ROOT}' } }),
    ]);
    expect(servers[0]!.config.env).toBeUndefined();
    expect(issues.map((i) => i.code)).toEqual(['VARIABLE_UNRESOLVED']);
  });

  it.each(['project', 'user', 'constructor'] as const)(
    '%s servers never get the substitution (undefined variable unless in env)',
    (source) => {
      const entry = { s: { command: '${WAVE_PLUGIN_ROOT}/x', args: ['${CLAUDE_PLUGIN_ROOT}'] } };
      const without = mergeSources([layer(source, entry, { pluginRoot: '/plugins/p' })], { env: {} });
      expect(without.servers[0]!.connectable).toBe(false);
      expect(without.issues.map((i) => i.code)).toEqual(['VARIABLE_UNRESOLVED', 'VARIABLE_UNRESOLVED']);
      expect(without.servers[0]!.config.env).toBeUndefined();
      const withEnv = mergeSources([layer(source, entry)], {
        env: { WAVE_PLUGIN_ROOT: '/from-env', CLAUDE_PLUGIN_ROOT: '/c' },
      });
      expect(withEnv.servers[0]!.config.command).toBe('/from-env/x');
      expect(withEnv.servers[0]!.config.args).toEqual(['/c']);
    },
  );

  it('the fingerprint changes when the plugin root changes', () => {
    const entry = { s: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/index.js'] } };
    const a = mergeSources([layer('plugin', entry, { pluginRoot: '/plugins/p@1' })], { workdir: WORKDIR });
    const b = mergeSources([layer('plugin', entry, { pluginRoot: '/plugins/p@2' })], { workdir: WORKDIR });
    expect(a.servers[0]!.fingerprint).not.toBe(b.servers[0]!.fingerprint);
  });
});

describe('mergeSources: resolved servers', () => {
  it('marks unknown types, keeps them, and fingerprints over raw', () => {
    const { servers } = mergeSources([layer('project', { w: { type: 'websocket', url: 'ws://h' } })], {
      workdir: WORKDIR,
    });
    expect(servers[0]).toMatchObject({
      transport: 'websocket',
      unknownType: 'websocket',
      connectable: false,
      config: { type: 'websocket', url: 'ws://h' },
    });
    expect(servers[0]!.fingerprint).toBe(fingerprint({ type: 'websocket', url: 'ws://h' }, WORKDIR));
  });

  it('normalizes config.type and fingerprints the same with or without an explicit type', () => {
    const { servers } = mergeSources(
      [layer('project', { a: { command: 'x' } }), layer('user', { b: { type: 'stdio', command: 'x' } })],
      { workdir: WORKDIR },
    );
    expect(servers.map((s) => s.config.type)).toEqual(['stdio', 'stdio']);
    expect(servers[0]!.fingerprint).toBe(servers[1]!.fingerprint);
  });

  it('every issue says where: source, file, server', () => {
    const { issues } = mergeSources([layer('user', { s: { command: 5 } })]);
    expect(issues[0]).toEqual({
      severity: 'error',
      code: 'FIELD_INVALID',
      source: 'user',
      file: '/home/u/.wave/mcp.json',
      server: 's',
      field: 'command',
      message: expect.stringContaining('/home/u/.wave/mcp.json'),
    });
  });
});

describe('mergeSources: an url checked after expansion', () => {
  it('names the url as written, with its literal password masked', () => {
    const { issues } = mergeSources(
      [{ source: 'user', file: '/h/mcp.json', servers: { s: { url: 'ftp://u:hunter2@${HOST}/x' } } }],
      { env: { HOST: 'example.com' }, workdir: '/w' },
    );
    const issue = issues.find((i) => i.code === 'URL_INVALID');
    expect(issue?.message).toContain('ftp://****:****@${HOST}/x');
    expect(issue?.message).not.toContain('hunter2');
    expect(issue?.message).not.toContain('example.com');
  });
});

describe('mergeSources: readOnlyTools', () => {
  it.each(['constructor', 'user', 'project', 'plugin'] as const)(
    'is applied from %s (it only decides parallel runs, never approval)',
    (source) => {
      const written = { 'read_*': true, 'delete_*': false };
      const { servers, issues } = mergeSources([
        layer(source, { s: { command: 'x', readOnlyTools: written } }),
      ]);
      const [s] = servers;
      expect(issues).toEqual([]);
      expect(s!.config.readOnlyTools).toEqual(written);
      expect(s!.raw!.readOnlyTools).toEqual(written);
      expect(s!.config.readOnlyTools).not.toBe(written);
      expect(s!.config.readOnlyTools).not.toBe(s!.raw!.readOnlyTools);
      expect(toolReadOnlyOverride(s!, 'read_file')).toBe(true);
      expect(toolReadOnlyOverride(s!, 'delete_file')).toBe(false);
      expect(toolReadOnlyOverride(s!, 'write_file')).toBeUndefined();
      expect(isToolAutoApproved(s!, 'read_file')).toBe(false);
    },
  );
});
