import { describe, expect, it } from 'vitest';
import { detectFormatting, parseConfigText } from '../src/parse';

const F = '/w/.mcp.json';

describe('parseConfigText: JSONC', () => {
  it.each([
    ['plain JSON', '{"mcpServers": {"a": {"command": "x"}}}'],
    [
      'line comments',
      '// top\n{\n  // servers\n  "mcpServers": { // here\n    "a": {"command": "x"} // end\n  }\n}\n',
    ],
    ['block comments', '/* a */ {"mcpServers": /* b */ {"a": /* c */ {"command": "x"}}} /* d */'],
    ['trailing commas', '{"mcpServers": {"a": {"command": "x", "args": ["1",],},},}'],
    ['byte-order mark', '\uFEFF{"mcpServers": {"a": {"command": "x"}}}'],
    ['CRLF line endings', '{\r\n  "mcpServers": {\r\n    "a": {"command": "x"}\r\n  }\r\n}\r\n'],
    ['$schema key is silent', '{"$schema": "https://x", "mcpServers": {"a": {"command": "x"}}}'],
  ])('%s', (_label, text) => {
    const parsed = parseConfigText(text, F, 'project');
    expect(parsed.ok).toBe(true);
    expect(parsed.issues).toEqual([]);
    expect(Object.keys(parsed.servers)).toEqual(['a']);
    expect((parsed.servers.a as { command: string }).command).toBe('x');
  });

  it.each([
    ['empty file', '', 'CONFIG_EMPTY'],
    ['whitespace', '  \n\t', 'CONFIG_EMPTY'],
    ['comments only', '// nothing yet\n/* later */', 'CONFIG_EMPTY'],
  ])('%s: no servers, a warning', (_label, text, code) => {
    const parsed = parseConfigText(text, F, 'user');
    expect(parsed).toEqual({
      ok: true,
      servers: {},
      issues: [expect.objectContaining({ code, severity: 'warning', file: F, source: 'user' })],
    });
  });

  it.each([
    ['empty object', '{}'],
    ['empty mcpServers', '{"mcpServers": {}}'],
  ])('%s: no servers, no issue', (_label, text) => {
    expect(parseConfigText(text, F, 'project')).toEqual({ ok: true, servers: {}, issues: [] });
  });

  it.each([
    ['unclosed object', '{"mcpServers": {"a": {"command": "x"}}', 'line 1'],
    ['missing value', '{\n  "mcpServers": \n}', 'line 3'],
    ['garbage', 'mcpServers = yes', 'line 1'],
    ['two documents', '{} {}', 'line 1'],
    ['single quotes', "{'mcpServers': {}}", 'line 1'],
    ['root array', '[{"mcpServers": {}}]', 'array'],
    ['root string', '"x"', 'string'],
    ['root number', '5', 'number'],
    ['root null', 'null', 'null'],
    ['mcpServers array', '{"mcpServers": [{"command": "x"}]}', 'an array'],
    ['mcpServers string', '{"mcpServers": "x"}', 'a string'],
    ['mcpServers null', '{"mcpServers": null}', 'a null'],
    [
      'nested too deeply',
      '{"mcpServers": ' + '['.repeat(200_000) + ']'.repeat(200_000) + '}',
      'nested too deeply',
    ],
  ])('%s: malformed, the file is skipped', (_label, text, mentions) => {
    const parsed = parseConfigText(text, F, 'project');
    expect(parsed.ok).toBe(false);
    expect(parsed.servers).toEqual({});
    expect(parsed.issues).toHaveLength(1);
    expect(parsed.issues[0]).toMatchObject({
      code: 'CONFIG_MALFORMED',
      severity: 'error',
      file: F,
      source: 'project',
    });
    expect(parsed.issues[0]!.message).toContain(F);
    expect(parsed.issues[0]!.message).toContain(mentions);
  });

  it('names the line and column of a syntax error', () => {
    const parsed = parseConfigText('{\n  "mcpServers": {\n    "a": {"command": "x"\n  }\n}', F, 'project');
    expect(parsed.issues[0]!.message).toContain('a } is missing at line 5, column 2');
  });

  it('a name written twice: the last wins, with a warning', () => {
    const parsed = parseConfigText(
      '{"mcpServers": {"a": {"command": "1"}, "b": {"command": "b"}, "a": {"command": "2"}}}',
      F,
      'user',
    );
    expect(parsed.ok).toBe(true);
    expect(parsed.servers).toEqual({ a: { command: '2' }, b: { command: 'b' } });
    expect(parsed.issues).toEqual([
      expect.objectContaining({ code: 'DUPLICATE_SERVER', server: 'a', severity: 'warning' }),
    ]);
  });

  it('warns about other top-level keys, with a hint for VS Code "servers"', () => {
    const parsed = parseConfigText('{"servers": {"a": {"command": "x"}}, "inputs": []}', F, 'project');
    expect(parsed.servers).toEqual({});
    expect(parsed.issues.map((i) => [i.code, i.field])).toEqual([
      ['UNKNOWN_KEY', 'servers'],
      ['UNKNOWN_KEY', 'inputs'],
    ]);
    expect(parsed.issues[0]!.message).toContain('mcpServers');
  });

  it('"__proto__" keys are data, never prototypes', () => {
    const parsed = parseConfigText(
      '{"mcpServers": {"__proto__": {"command": "x"}, "a": {"__proto__": {"command": "evil"}}}}',
      F,
      'project',
    );
    expect(Object.keys(parsed.servers)).toEqual(['__proto__', 'a']);
    const a = parsed.servers.a as Record<string, unknown>;
    expect(a.command).toBeUndefined();
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).command).toBeUndefined();
  });
});

describe('detectFormatting', () => {
  it.each([
    ['two spaces', '{\n  "a": 1\n}', { insertSpaces: true, tabSize: 2, eol: '\n' }],
    ['four spaces', '{\n    "a": {\n        "b": 1\n    }\n}', { insertSpaces: true, tabSize: 4, eol: '\n' }],
    ['tabs', '{\n\t"a": 1\n}', { insertSpaces: false, eol: '\n' }],
    ['CRLF', '{\r\n  "a": 1\r\n}', { insertSpaces: true, tabSize: 2, eol: '\r\n' }],
    ['one line', '{"a": 1}', { insertSpaces: true, tabSize: 2, eol: '\n' }],
  ])('%s', (_label, text, expected) => {
    expect(detectFormatting(text)).toMatchObject(expected);
  });
});
