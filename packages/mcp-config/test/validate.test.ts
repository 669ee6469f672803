import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../src/parse';
import { MAX_TIMEOUT_MS, validateServer } from '../src/validate';

const ctx = { source: 'project' as const, file: '/w/.mcp.json' };
type Expect = [code: string, severity: 'error' | 'warning', field?: string][];

function codes(name: string, entry: unknown): Expect {
  return validateServer(name, entry, ctx).issues.map((i) =>
    i.field === undefined ? [i.code, i.severity] : [i.code, i.severity, i.field],
  );
}

const ok = { command: 'node' };
const remote = { url: 'https://example.com/mcp' };

describe('validateServer: names', () => {
  it.each([
    ['a', true],
    ['A-b_9', true],
    ['_a_', true],
    ['a_-_b', true],
    ['x'.repeat(64), true],
    ['x'.repeat(128), true],
    // names other hosts write (Kiro, Amazon Q, Claude Desktop)
    ['awslabs.aws-documentation-mcp-server', true],
    ['My Server', true],
    ['a/b', true],
    ['a:b', true],
    ['a__b', true],
    ['ünï', true],
    ['__proto__', false], // would be the prototype of every host's name-keyed object
    ['constructor', true],
    ['', false],
    ['x'.repeat(129), false],
    ['a\nb', false],
    ['tab\there', false],
    ['nul\u0000', false],
    ['del\u007f', false],
    ['c1\u0085', false],
  ])('%j valid=%s', (name, valid) => {
    const v = validateServer(name, ok, ctx);
    expect(v.nameValid).toBe(valid);
    expect(v.ok).toBe(valid);
    if (!valid) {
      expect(v.issues).toHaveLength(1);
      expect(v.issues[0]).toMatchObject({
        code: 'NAME_INVALID',
        severity: 'error',
        source: 'project',
        file: '/w/.mcp.json',
      });
      expect(v.issues[0]!.message).toContain('/w/.mcp.json');
    }
  });
});

describe('validateServer: rules', () => {
  it.each<[string, unknown, Expect, string?]>([
    // entry shape
    ['null entry', null, [['SERVER_INVALID', 'error']]],
    ['string entry', 'npx foo', [['SERVER_INVALID', 'error']]],
    ['number entry', 5, [['SERVER_INVALID', 'error']]],
    ['array entry', [ok], [['SERVER_INVALID', 'error']]],
    ['empty object', {}, [['SERVER_INVALID', 'error']]],
    // type
    ['type not a string', { type: 5, command: 'x' }, [['FIELD_INVALID', 'error', 'type']], 'stdio'],
    ['explicit stdio', { type: 'stdio', command: 'x' }, [], 'stdio'],
    ['explicit http', { type: 'http', ...remote }, [], 'http'],
    ['explicit sse', { type: 'sse', ...remote }, [], 'sse'],
    ['command infers stdio', ok, [], 'stdio'],
    ['url infers http (never sse)', remote, [], 'http'],
    ['unknown type kept', { type: 'ws', url: 'ws://x' }, [['TRANSPORT_UNKNOWN', 'error', 'type']], 'ws'],
    [
      'upper-case type is unknown',
      { type: 'HTTP', ...remote },
      [['TRANSPORT_UNKNOWN', 'error', 'type']],
      'HTTP',
    ],
    [
      'streamable-http is unknown',
      { type: 'streamable-http', ...remote },
      [['TRANSPORT_UNKNOWN', 'error', 'type']],
    ],
    // command
    ['empty command', { command: '' }, [['FIELD_INVALID', 'error', 'command']]],
    ['blank command', { command: '  ' }, [['FIELD_INVALID', 'error', 'command']]],
    ['number command', { command: 5 }, [['FIELD_INVALID', 'error', 'command']]],
    ['NUL in command', { command: 'a\0b' }, [['FIELD_INVALID', 'error', 'command']]],
    ['.. first', { command: '../bin/x' }, [['COMMAND_INVALID', 'error', 'command']]],
    ['.. in the middle', { command: '/opt/a/../b' }, [['COMMAND_INVALID', 'error', 'command']]],
    ['.. with backslashes', { command: 'C:\\a\\..\\b.exe' }, [['COMMAND_INVALID', 'error', 'command']]],
    ['.. alone', { command: '..' }, [['COMMAND_INVALID', 'error', 'command']]],
    ['..name is not a segment', { command: '..foo' }, []],
    ['a..b is not a segment', { command: '/opt/a..b/x' }, []],
    ['./relative is fine', { command: './server' }, []],
    ['absolute is fine', { command: '/usr/bin/node' }, []],
    // args
    ['args string', { command: 'x', args: '-y pkg' }, [['FIELD_INVALID', 'error', 'args']]],
    ['args number item', { command: 'x', args: [1] }, [['FIELD_INVALID', 'error', 'args[0]']]],
    ['args null item', { command: 'x', args: ['a', null] }, [['FIELD_INVALID', 'error', 'args[1]']]],
    ['args NUL', { command: 'x', args: ['a\0'] }, [['FIELD_INVALID', 'error', 'args[0]']]],
    ['args empty', { command: 'x', args: [] }, []],
    // env
    ['env array', { command: 'x', env: [] }, [['FIELD_INVALID', 'error', 'env']]],
    ['env number value', { command: 'x', env: { PORT: 8080 } }, [['FIELD_INVALID', 'error', 'env.PORT']]],
    ['env null value', { command: 'x', env: { A: null } }, [['FIELD_INVALID', 'error', 'env.A']]],
    ['env key with =', { command: 'x', env: { 'A=B': 'x' } }, [['FIELD_INVALID', 'error', 'env.A=B']]],
    ['env empty key', { command: 'x', env: { '': 'x' } }, [['FIELD_INVALID', 'error', 'env.']]],
    ['env fine', { command: 'x', env: { A: 'x', B: '' } }, []],
    // cwd
    ['cwd empty', { command: 'x', cwd: '' }, [['FIELD_INVALID', 'error', 'cwd']]],
    ['cwd number', { command: 'x', cwd: 5 }, [['FIELD_INVALID', 'error', 'cwd']]],
    ['cwd fine', { command: 'x', cwd: 'sub/dir' }, []],
    // url
    ['url not a url', { url: 'not a url' }, [['URL_INVALID', 'error', 'url']]],
    ['url relative', { url: '/mcp' }, [['URL_INVALID', 'error', 'url']]],
    ['url ftp', { url: 'ftp://host/x' }, [['URL_INVALID', 'error', 'url']]],
    ['url file', { url: 'file:///etc/passwd' }, [['URL_INVALID', 'error', 'url']]],
    ['url number', { url: 5 }, [['FIELD_INVALID', 'error', 'url']]],
    ['url empty', { url: '' }, [['FIELD_INVALID', 'error', 'url']]],
    ['url with variable checked later', { url: '${BASE}/mcp' }, []],
    ['url loopback http', { url: 'http://127.0.0.1:3000/mcp' }, []],
    // headers
    ['headers array', { ...remote, headers: [] }, [['FIELD_INVALID', 'error', 'headers']]],
    [
      'header name with space',
      { ...remote, headers: { 'X Key': 'v' } },
      [['FIELD_INVALID', 'error', 'headers.X Key']],
    ],
    [
      'header value CRLF',
      { ...remote, headers: { A: 'x\r\nB: y' } },
      [['FIELD_INVALID', 'error', 'headers.A']],
    ],
    ['header value number', { ...remote, headers: { A: 5 } }, [['FIELD_INVALID', 'error', 'headers.A']]],
    ['headers fine', { ...remote, headers: { Authorization: 'Bearer ${T}' } }, []],
    // transport consistency
    [
      'command and url',
      { command: 'x', url: 'https://h' },
      [['TRANSPORT_CONFLICT', 'error', 'url']],
      'stdio',
    ],
    ['command and headers', { command: 'x', headers: {} }, [['TRANSPORT_CONFLICT', 'error', 'headers']]],
    ['url and env', { ...remote, env: {} }, [['TRANSPORT_CONFLICT', 'error', 'env']], 'http'],
    ['url and args', { ...remote, args: [] }, [['TRANSPORT_CONFLICT', 'error', 'args']]],
    ['url and cwd', { ...remote, cwd: '/tmp' }, [['TRANSPORT_CONFLICT', 'error', 'cwd']]],
    [
      'type stdio with url',
      { type: 'stdio', url: 'https://h' },
      [
        ['TRANSPORT_CONFLICT', 'error', 'url'],
        ['SERVER_INVALID', 'error', 'command'],
      ],
    ],
    [
      'type http with command',
      { type: 'http', command: 'x' },
      [
        ['TRANSPORT_CONFLICT', 'error', 'command'],
        ['SERVER_INVALID', 'error', 'url'],
      ],
    ],
    [
      'type sse with only args',
      { type: 'sse', args: [] },
      [
        ['TRANSPORT_CONFLICT', 'error', 'args'],
        ['SERVER_INVALID', 'error', 'url'],
      ],
    ],
    ['type stdio alone', { type: 'stdio' }, [['SERVER_INVALID', 'error', 'command']]],
    ['type sse alone', { type: 'sse' }, [['SERVER_INVALID', 'error', 'url']]],
    ['only args', { args: ['x'] }, [['SERVER_INVALID', 'error']]],
    [
      'unknown type skips consistency',
      { type: 'custom', command: 'x', url: 'whatever' },
      [['TRANSPORT_UNKNOWN', 'error', 'type']],
    ],
    // extension fields: warnings, the field is dropped
    ['lifecycle eager', { ...ok, lifecycle: 'eager' }, []],
    ['lifecycle keep-alive', { ...ok, lifecycle: 'keep-alive' }, []],
    ['lifecycle bad', { ...ok, lifecycle: 'sometimes' }, [['FIELD_IGNORED', 'warning', 'lifecycle']]],
    ['lifecycle number', { ...ok, lifecycle: 1 }, [['FIELD_IGNORED', 'warning', 'lifecycle']]],
    ['idleTimeoutMs fine', { ...ok, idleTimeoutMs: 1000 }, []],
    ['idleTimeoutMs max', { ...ok, idleTimeoutMs: MAX_TIMEOUT_MS }, []],
    ['idleTimeoutMs 0', { ...ok, idleTimeoutMs: 0 }, [['FIELD_IGNORED', 'warning', 'idleTimeoutMs']]],
    ['idleTimeoutMs negative', { ...ok, idleTimeoutMs: -1 }, [['FIELD_IGNORED', 'warning', 'idleTimeoutMs']]],
    [
      'idleTimeoutMs fraction',
      { ...ok, idleTimeoutMs: 1.5 },
      [['FIELD_IGNORED', 'warning', 'idleTimeoutMs']],
    ],
    [
      'idleTimeoutMs string',
      { ...ok, idleTimeoutMs: '1000' },
      [['FIELD_IGNORED', 'warning', 'idleTimeoutMs']],
    ],
    [
      'idleTimeoutMs over setTimeout max',
      { ...ok, idleTimeoutMs: 2 ** 31 },
      [['FIELD_IGNORED', 'warning', 'idleTimeoutMs']],
    ],
    ['connectTimeoutMs fine', { ...ok, connectTimeoutMs: 5000 }, []],
    [
      'connectTimeoutMs bad',
      { ...ok, connectTimeoutMs: Number.NaN },
      [['FIELD_IGNORED', 'warning', 'connectTimeoutMs']],
    ],
    ['callTimeoutMs fine', { ...ok, callTimeoutMs: 60000 }, []],
    [
      'callTimeoutMs bad',
      { ...ok, callTimeoutMs: Number.POSITIVE_INFINITY },
      [['FIELD_IGNORED', 'warning', 'callTimeoutMs']],
    ],
    ['approveTools fine', { ...ok, approveTools: ['get_*', 'list_*'] }, []],
    ['approveTools string', { ...ok, approveTools: 'get_*' }, [['FIELD_IGNORED', 'warning', 'approveTools']]],
    [
      'approveTools empty glob',
      { ...ok, approveTools: [''] },
      [['FIELD_IGNORED', 'warning', 'approveTools']],
    ],
    ['approveTools number', { ...ok, approveTools: [1] }, [['FIELD_IGNORED', 'warning', 'approveTools']]],
    ['readOnlyTools fine', { ...ok, readOnlyTools: { 'read_*': true, 'delete_*': false } }, []],
    ['readOnlyTools empty object', { ...ok, readOnlyTools: {} }, []],
    [
      'readOnlyTools value not a boolean',
      { ...ok, readOnlyTools: { 'read_*': 'yes' } },
      [['FIELD_IGNORED', 'warning', 'readOnlyTools']],
    ],
    [
      'readOnlyTools an array of globs',
      { ...ok, readOnlyTools: ['read_*'] },
      [['FIELD_IGNORED', 'warning', 'readOnlyTools']],
    ],
    [
      'readOnlyTools a boolean',
      { ...ok, readOnlyTools: true },
      [['FIELD_IGNORED', 'warning', 'readOnlyTools']],
    ],
    ['readOnlyTools null', { ...ok, readOnlyTools: null }, [['FIELD_IGNORED', 'warning', 'readOnlyTools']]],
    [
      'readOnlyTools empty glob',
      { ...ok, readOnlyTools: { '': true } },
      [['FIELD_IGNORED', 'warning', 'readOnlyTools']],
    ],
    [
      'readOnlyTools blank glob',
      { ...ok, readOnlyTools: { 'get_*': true, ' ': false } },
      [['FIELD_IGNORED', 'warning', 'readOnlyTools']],
    ],
    ['description fine', { ...ok, description: 'GitHub API' }, []],
    ['description number', { ...ok, description: 5 }, [['FIELD_IGNORED', 'warning', 'description']]],
    // unknown keys: warnings, ignored
    ['unknown key', { ...ok, foo: 1 }, [['UNKNOWN_KEY', 'warning', 'foo']]],
    ['disabled: true (Cline, Roo, Kiro) is read quietly', { ...ok, disabled: true }, []],
    ['disabled: false draws no warning', { ...ok, disabled: false }, []],
    ['disabled not a boolean', { ...ok, disabled: 'yes' }, [['FIELD_IGNORED', 'warning', 'disabled']]],
    [
      'idleTimeout (seed 002 spelling)',
      { ...ok, idleTimeout: 5 },
      [['UNKNOWN_KEY', 'warning', 'idleTimeout']],
    ],
    ['autoApprove (Cline)', { ...ok, autoApprove: ['x'] }, [['UNKNOWN_KEY', 'warning', 'autoApprove']]],
    ['undefined values count as absent', { command: 'x', url: undefined, type: undefined }, []],
  ])('%s', (_label, entry, expected, transport) => {
    const v = validateServer('srv', entry, ctx);
    expect(codes('srv', entry)).toEqual(expected);
    expect(v.ok).toBe(!expected.some(([, severity]) => severity === 'error'));
    expect(v.nameValid).toBe(true);
    if (transport !== undefined) expect(v.transport).toBe(transport);
    for (const issue of v.issues) {
      expect(issue).toMatchObject({ server: 'srv', source: 'project', file: '/w/.mcp.json' });
      expect(issue.message).toContain('"srv"');
    }
  });

  it('keeps only the valid fields, unexpanded', () => {
    const v = validateServer(
      'srv',
      {
        command: '${BIN}',
        args: ['a', '${B}'],
        env: { T: '${T}' },
        lifecycle: 'bogus',
        idleTimeoutMs: 5,
        foo: 1,
      },
      ctx,
    );
    expect(v.config).toEqual({
      command: '${BIN}',
      args: ['a', '${B}'],
      env: { T: '${T}' },
      idleTimeoutMs: 5,
    });
  });

  it('keeps readOnlyTools in written order, "__proto__" as a plain key', () => {
    const entry = JSON.parse(
      '{"command": "x", "readOnlyTools": {"read_*": true, "__proto__": false, "*": false}}',
    ) as object;
    const v = validateServer('srv', entry, ctx);
    expect(v.issues).toEqual([]);
    const r = v.config.readOnlyTools!;
    expect(Object.entries(r)).toEqual([
      ['read_*', true],
      ['__proto__', false],
      ['*', false],
    ]);
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
  });

  it('an invalid readOnlyTools is dropped with a message naming file, server, glob and what to write', () => {
    const bad = validateServer('srv', { ...ok, readOnlyTools: { 'read_*': 'yes' } }, ctx);
    expect(bad.config.readOnlyTools).toBeUndefined();
    const [value] = bad.issues;
    expect(value!.message).toContain('/w/.mcp.json');
    expect(value!.message).toContain('"srv"');
    expect(value!.message).toContain('"read_*"');
    expect(value!.message).toContain('true or false');
    expect(value!.message).toContain('readOnlyHint');
    const [shape] = validateServer('srv', { ...ok, readOnlyTools: ['read_*'] }, ctx).issues;
    expect(shape!.message).toContain('{"read_*": true, "delete_*": false}');
    const [empty] = validateServer('srv', { ...ok, readOnlyTools: { '': true } }, ctx).issues;
    expect(empty!.message).toContain('empty');
  });

  it('unknown-key warnings carry hints that say what to write', () => {
    const [issue] = validateServer('s', { ...ok, idleTimeout: 5 }, ctx).issues;
    expect(issue!.message).toContain('idleTimeoutMs');
    const [type] = validateServer('s', { type: 'streamable-http', ...remote }, ctx).issues;
    expect(type!.message).toContain('Streamable HTTP is "http"');
  });

  it('hints are own entries of the hint tables: "constructor" and "__proto__" get no inherited text', () => {
    const entry = JSON.parse('{"command": "x", "constructor": 1, "__proto__": 2, "toString": 3}') as object;
    const messages = validateServer('s', entry, ctx).issues.map((i) => i.message);
    expect(messages).toHaveLength(3);
    for (const m of messages) {
      expect(m).toMatch(/is ignored\.$/);
      expect(m).not.toContain('native code');
      expect(m).not.toContain('[object');
    }
    const type = validateServer('s', { type: 'constructor', url: 'https://h' }, ctx).issues[0]!.message;
    expect(type).not.toContain('native code');
  });

  it('a parse or type message never nests brackets', () => {
    const type = validateServer('s', { type: 'streamable-http', ...remote }, ctx).issues[0]!.message;
    const depth = (text: string) => {
      let d = 0;
      let max = 0;
      for (const c of text) {
        if (c === '(') max = Math.max(max, ++d);
        if (c === ')') d--;
      }
      return max;
    };
    expect(depth(type)).toBeLessThanOrEqual(1);
  });

  it('does not crash on odd JavaScript values (constructor source)', () => {
    const odd = [Symbol('x'), 10n, () => 1, new Date(0), new Map(), Object.create(null)];
    for (const value of odd) {
      expect(() => validateServer('s', value, { source: 'constructor' })).not.toThrow();
      expect(() =>
        validateServer('s', { command: value, args: [value], env: { A: value } }, { source: 'constructor' }),
      ).not.toThrow();
    }
  });

  it('reads own properties only (an inherited command does not count)', () => {
    const entry = Object.create({ command: 'inherited' }) as object;
    expect(codes('s', entry)).toEqual([['SERVER_INVALID', 'error']]);
  });
});

describe('validateServer: messages never show a literal credential', () => {
  it.each([
    ['password in a non-http url', { url: 'ftp://user:hunter2@h/x' }, 'URL_INVALID'],
    ['token as user in a non-http url', { url: 'ws://hunter2@h/x' }, 'URL_INVALID'],
    ['token in the query of a non-http url', { url: 'ws://h/x?token=hunter2' }, 'URL_INVALID'],
    ['leading space', { url: ' https://me:hunter2@h' }, 'URL_INVALID'],
    ['no slashes', { url: 'https:me:hunter2@h' }, 'URL_INVALID'],
    ['backslashes', { url: 'https:\\\\me:hunter2@h' }, 'URL_INVALID'],
    ['three slashes', { url: 'https:///me:hunter2@h' }, 'URL_INVALID'],
    ['jwt in the query', { url: 'ws://h/x?jwt=hunter2' }, 'URL_INVALID'],
    ['token after ;', { url: 'ws://h/x?a=1;token=hunter2' }, 'URL_INVALID'],
    ['percent-encoded name', { url: 'ws://h/x?api%5Fkey=hunter2' }, 'URL_INVALID'],
  ])('%s', (_label, entry, code) => {
    const issues = validateServer('s', entry, ctx).issues;
    expect(issues.map((i) => i.code)).toContain(code);
    for (const issue of issues) expect(issue.message).not.toContain('hunter2');
    // still names the url, masked, so a person can find it
    expect(issues.find((i) => i.code === code)!.message).toContain('****');
  });
});

describe('validateServer: messages never quote a value of env, headers or args', () => {
  it.each([
    ['env value an array', { command: 'x', env: { API_KEY: ['hunter2'] } }],
    ['env value a number', { command: 'x', env: { API_KEY: 12345678 } }],
    ['header value an object', { url: 'https://h', headers: { Authorization: { v: 'hunter2' } } }],
    ['arg a number', { command: 'x', args: ['--token', 12345678] }],
    ['entry a string', 'hunter2'],
    ['command an array', { command: ['hunter2'] }],
    ['cwd a number', { command: 'x', cwd: 12345678 }],
  ])('%s', (_label, entry) => {
    const issues = validateServer('s', entry, ctx).issues;
    expect(issues.length).toBeGreaterThan(0);
    for (const issue of issues) {
      expect(issue.message).not.toContain('hunter2');
      expect(issue.message).not.toContain('12345678');
    }
  });

  it('urls that are not clean absolute http(s) urls are refused', () => {
    for (const url of [
      ' https://h',
      'https://h ',
      'https:h',
      'https:\\\\h',
      'https:///h',
      'https://',
      'h/x',
    ]) {
      expect(validateServer('s', { url }, ctx).issues.map((i) => i.code)).toEqual(['URL_INVALID']);
    }
    for (const url of ['https://h', 'HTTP://h:8080/x?y=1', 'http://[::1]:3000/mcp']) {
      expect(validateServer('s', { url }, ctx).issues).toEqual([]);
    }
  });
});

describe('messages never nest brackets', () => {
  const depth = (text: string) => {
    let d = 0;
    let max = 0;
    for (const c of text) {
      if (c === '(') max = Math.max(max, ++d);
      if (c === ')') d--;
    }
    return max;
  };

  it.each<[string, unknown]>([
    ['streamable-http', { type: 'streamable-http', url: 'https://h' }],
    ['upper-case type', { type: 'HTTP', url: 'https://h' }],
    ['websocket', { type: 'ws', url: 'ws://h' }],
    ['.. in command', { command: '../x' }],
    ['ftp url', { url: 'ftp://h/x' }],
    ['conflict', { command: 'x', url: 'https://h' }],
    ['bad lifecycle and timeout', { command: 'x', lifecycle: 'x', idleTimeoutMs: -1, timeout: 5 }],
    ['empty', {}],
    ['null', null],
    ['env of numbers', { command: 'x', env: { A: 1 }, args: [2] }],
  ])('%s', (_label, entry) => {
    for (const issue of validateServer('s', entry, ctx).issues)
      expect(depth(issue.message)).toBeLessThanOrEqual(1);
  });

  it('parse errors, in words', () => {
    const parsed = parseConfigText(
      '{\n  "mcpServers": {\n    "a": {"command": "x"}\n',
      '/w/.mcp.json',
      'project',
    );
    const message = parsed.issues[0]?.message ?? '';
    expect(message).toContain('a } is missing at line 4');
    expect(depth(message)).toBeLessThanOrEqual(1);
  });
});
