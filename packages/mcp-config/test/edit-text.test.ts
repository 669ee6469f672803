import { createScanner, parse } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { addServerToText, removeServerFromText } from '../src/edit';
import { McpConfigError } from '../src/errors';

/** Every comment in a JSONC text (jsonc-parser scanner: 12 line, 13 block). */
function comments(text: string): string[] {
  const scanner = createScanner(text, false);
  const out: string[] = [];
  for (let kind = scanner.scan(); kind !== 17; kind = scanner.scan()) {
    if (kind === 12 || kind === 13) out.push(scanner.getTokenValue());
  }
  return out;
}

function servers(text: string): Record<string, unknown> | undefined {
  const doc = parse(text.replace(/^\uFEFF/, ''), [], { allowTrailingComma: true }) as
    | { mcpServers?: Record<string, unknown> }
    | undefined;
  return doc?.mcpServers;
}

/** True when `small` can be obtained from `big` by deleting characters. */
function isSubsequence(small: string, big: string): boolean {
  let i = 0;
  for (let j = 0; j < big.length && i < small.length; j++) if (big[j] === small[i]) i++;
  return i === small.length;
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof McpConfigError) return err.code;
    throw err;
  }
  return 'no error';
}

const value = { command: 'node', args: ['srv.js'] };

const DOCS: Record<string, string> = {
  commented:
    '{\n  // My servers\n  "mcpServers": {\n    /* the db */\n    "db": {"command": "pg-mcp"}, // keep me\n  },\n}\n',
  fourSpaces: '{\n    "mcpServers": {\n        "db": {\n            "command": "pg"\n        }\n    }\n}\n',
  tabs: '{\n\t"mcpServers": {\n\t\t"db": {\n\t\t\t"command": "pg"\n\t\t}\n\t}\n}\n',
  crlf: '{\r\n  "mcpServers": {\r\n    "db": {\r\n      "command": "pg" // crlf comment\r\n    }\r\n  }\r\n}\r\n',
  bom: '\uFEFF{\n  "mcpServers": {\n    "db": {"command": "pg"}\n  }\n}\n',
  minified: '{"mcpServers":{"db":{"command":"pg"}}}',
  otherKeys: '{\n  // nothing here yet\n  "$schema": "x",\n  "other": [1, 2]\n}\n',
  emptyServers: '{\n  "mcpServers": {}\n}\n',
  emptyServersWithComment: '{\n  "mcpServers": {\n    // add servers here\n  }\n}\n',
  trailingCommas: '{\n  "mcpServers": {\n    "db": {"command": "pg", "args": ["a",],},\n  },\n}\n',
  noFinalNewline: '{\n  "mcpServers": {\n    "db": {"command": "pg"}\n  }\n}',
  commentsOnly: '// todo: add servers\n',
};

describe('addServerToText keeps everything else', () => {
  it.each(Object.entries(DOCS))('%s', (_label, text) => {
    const out = addServerToText(text, 'new', value).text;
    const before = servers(text) ?? {};
    expect(servers(out)).toEqual({ ...before, new: value });
    // every comment survives
    for (const c of comments(text)) expect(out).toContain(c);
    // only insertions: every original character is still there, in order
    expect(isSubsequence(text, out)).toBe(true);
    // BOM, line endings and strictness are kept
    expect(out.startsWith('\uFEFF')).toBe(text.startsWith('\uFEFF'));
    if (text.includes('\r\n')) expect(out.replace(/\r\n/g, '')).not.toContain('\n');
    let strict = true;
    try {
      JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      strict = false;
    }
    if (strict) expect(() => JSON.parse(out.replace(/^\uFEFF/, ''))).not.toThrow();
  });

  it.each([
    [
      'own-line entries: after the last one (after its comment), same indent',
      '{\n  "mcpServers": {\n    "db": {"command": "pg"} // the db\n  }\n}\n',
      '{\n  "mcpServers": {\n    "db": {"command": "pg"}, // the db\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    }\n  }\n}\n',
    ],
    [
      'a trailing comma stays a trailing comma',
      '{\n  "mcpServers": {\n    "db": {"command": "pg"},\n  },\n}\n',
      '{\n  "mcpServers": {\n    "db": {"command": "pg"},\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    },\n  },\n}\n',
    ],
    [
      'tabs',
      '{\n\t"mcpServers": {\n\t\t"db": {"command": "pg"}\n\t}\n}\n',
      '{\n\t"mcpServers": {\n\t\t"db": {"command": "pg"},\n\t\t"new": {\n\t\t\t"command": "node",\n\t\t\t"args": [\n\t\t\t\t"srv.js"\n\t\t\t]\n\t\t}\n\t}\n}\n',
    ],
    [
      'one-line document stays one line',
      '{"mcpServers":{"db":{"command":"pg"}}}',
      '{"mcpServers":{"db":{"command":"pg"},"new":{"command":"node","args":["srv.js"]}}}',
    ],
    [
      'one-line object in a pretty file: appended on that line',
      '{\n  "mcpServers": { "db": { "command": "pg" } }\n}\n',
      '{\n  "mcpServers": { "db": { "command": "pg" }, "new": {"command":"node","args":["srv.js"]} }\n}\n',
    ],
    [
      'empty mcpServers',
      '{\n  "mcpServers": {}\n}\n',
      '{\n  "mcpServers": {\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    }\n  }\n}\n',
    ],
    [
      'no mcpServers: added after the other keys',
      '{\n  "$schema": "x" // why\n}\n',
      '{\n  "$schema": "x", // why\n  "mcpServers": {\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    }\n  }\n}\n',
    ],
    [
      'bare {}',
      '{}',
      '{\n  "mcpServers": {\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    }\n  }\n}\n',
    ],
    [
      'blank',
      '  \n',
      '{\n  "mcpServers": {\n    "new": {\n      "command": "node",\n      "args": [\n        "srv.js"\n      ]\n    }\n  }\n}\n',
    ],
  ])('%s', (_label, text, expected) => {
    expect(addServerToText(text, 'new', value).text).toBe(expected);
  });

  it('no file: a fresh document', () => {
    expect(addServerToText(undefined, 'a', { url: 'https://h' }).text).toBe(
      '{\n  "mcpServers": {\n    "a": {\n      "url": "https://h"\n    }\n  }\n}\n',
    );
  });

  it('SERVER_EXISTS unless overwrite; overwrite replaces only that value', () => {
    const text =
      '{\n  "mcpServers": {\n    // a\n    "a": {"command": "a"}, // about a\n    "b": {"command": "b"}\n  }\n}\n';
    expect(code(() => addServerToText(text, 'a', value))).toBe('SERVER_EXISTS');
    const out = addServerToText(text, 'a', { url: 'https://h' }, { overwrite: true });
    expect(out.replaced).toBe(true);
    expect(out.text).toBe(
      '{\n  "mcpServers": {\n    // a\n    "a": {\n      "url": "https://h"\n    }, // about a\n    "b": {"command": "b"}\n  }\n}\n',
    );
  });

  it('overwrite of a name written twice leaves one definition', () => {
    const text = '{"mcpServers": {"a": {"command": "1"}, "b": {"command": "b"}, "a": {"command": "2"}}}';
    const out = addServerToText(text, 'a', { command: '3' }, { overwrite: true }).text;
    expect(out).toBe('{"mcpServers": {"b": {"command": "b"}, "a": {"command":"3"}}}');
  });

  it.each([
    ['syntax error', '{"mcpServers": {', 'CONFIG_MALFORMED'],
    ['root array', '[]', 'CONFIG_MALFORMED'],
    ['mcpServers array', '{"mcpServers": []}', 'CONFIG_MALFORMED'],
    ['mcpServers string', '{"mcpServers": "x"}', 'CONFIG_MALFORMED'],
  ])('refuses %s', (_label, text, expected) => {
    expect(code(() => addServerToText(text, 'new', value))).toBe(expected);
  });
});

describe('removeServerFromText', () => {
  const three =
    '{\n  "mcpServers": {\n    // a\n    "a": {"command": "a"}, // about a\n    // b\n    "b": {"command": "b"},\n    // c\n    "c": {"command": "c"}\n  }\n}\n';

  it.each([
    [
      'first',
      'a',
      '{\n  "mcpServers": {\n    // a\n    // b\n    "b": {"command": "b"},\n    // c\n    "c": {"command": "c"}\n  }\n}\n',
    ],
    [
      'middle',
      'b',
      '{\n  "mcpServers": {\n    // a\n    "a": {"command": "a"}, // about a\n    // b\n    // c\n    "c": {"command": "c"}\n  }\n}\n',
    ],
    [
      'last (the comma before it goes: strict JSON stays strict)',
      'c',
      '{\n  "mcpServers": {\n    // a\n    "a": {"command": "a"}, // about a\n    // b\n    "b": {"command": "b"}\n    // c\n  }\n}\n',
    ],
  ])('removes the %s entry with its own line only', (_label, name, expected) => {
    const out = removeServerFromText(three, name);
    expect(out.text).toBe(expected);
    expect(isSubsequence(out.text, three)).toBe(true);
    expect(out.removed).toEqual({ command: name });
  });

  it.each([
    [
      'one-line first',
      '{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}}}',
      'a',
      '{"mcpServers":{"b":{"command":"b"}}}',
    ],
    [
      'one-line last',
      '{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}}}',
      'b',
      '{"mcpServers":{"a":{"command":"a"}}}',
    ],
    ['one-line only', '{"mcpServers":{"a":{"command":"a"}}}', 'a', '{"mcpServers":{}}'],
    [
      'multi-line value',
      '{\n  "mcpServers": {\n    "a": {\n      "command": "a"\n    },\n    "b": {\n      "command": "b"\n    }\n  }\n}\n',
      'a',
      '{\n  "mcpServers": {\n    "b": {\n      "command": "b"\n    }\n  }\n}\n',
    ],
    [
      'trailing commas kept',
      '{\n  "mcpServers": {\n    "a": {"command": "a"},\n    "b": {"command": "b"},\n  },\n}\n',
      'b',
      '{\n  "mcpServers": {\n    "a": {"command": "a"},\n  },\n}\n',
    ],
    [
      'CRLF',
      '{\r\n  "mcpServers": {\r\n    "a": {"command": "a"},\r\n    "b": {"command": "b"}\r\n  }\r\n}\r\n',
      'a',
      '{\r\n  "mcpServers": {\r\n    "b": {"command": "b"}\r\n  }\r\n}\r\n',
    ],
    ['BOM', '\uFEFF{"mcpServers":{"a":{"command":"a"}}}', 'a', '\uFEFF{"mcpServers":{}}'],
    [
      'every duplicate',
      '{"mcpServers": {"a": {"command": "1"}, "b": {"command": "b"}, "a": {"command": "2"}}}',
      'a',
      '{"mcpServers": {"b": {"command": "b"}}}',
    ],
    [
      'an invalid name can be cleaned up',
      '{"mcpServers": {"bad name": {}, "ok": {"command": "x"}}}',
      'bad name',
      '{"mcpServers": {"ok": {"command": "x"}}}',
    ],
  ])('%s', (_label, text, name, expected) => {
    const out = removeServerFromText(text, name).text;
    expect(out).toBe(expected);
    expect(isSubsequence(out, text)).toBe(true);
  });

  it.each([
    [
      'last entry after a comment on its line: the comment of the entry before stays',
      '{\n  "mcpServers": {\n    "a": {"command": "a"}, // about a\n    /* b */ "b": {"command": "b"}\n  }\n}\n',
      'b',
      ['// about a'],
      { a: { command: 'a' } },
    ],
    [
      'entry not first on its line: the comment of the entry after stays',
      '{"mcpServers": {"a": {"command": "a"}, // about a\n    /* about b */ "b": {"command": "b"}}}',
      'a',
      ['/* about b */'],
      { b: { command: 'b' } },
    ],
    [
      'middle entry on a shared line: comments on both sides stay',
      '{"mcpServers": {"a": 1 /* about a */, "b": 2, /* about c */ "c": 3}}',
      'b',
      ['/* about a */', '/* about c */'],
      { a: 1, c: 3 },
    ],
  ])('%s', (_label, text, name, kept, remaining) => {
    const out = removeServerFromText(text, name).text;
    const left = comments(out).map((c) => c.trim());
    for (const comment of kept) expect(left).toContain(comment);
    expect(servers(out)).toEqual(remaining);
    expect(isSubsequence(out, text)).toBe(true);
  });

  it.each([
    ['missing name', three, 'zzz', 'SERVER_NOT_FOUND'],
    ['no mcpServers', '{}', 'a', 'SERVER_NOT_FOUND'],
    ['empty document', '', 'a', 'SERVER_NOT_FOUND'],
    ['syntax error', '{"mcpServers": {"a": 1', 'a', 'CONFIG_MALFORMED'],
    ['mcpServers not an object', '{"mcpServers": [1]}', 'a', 'CONFIG_MALFORMED'],
  ])('%s: %s', (_label, text, name, expected) => {
    expect(code(() => removeServerFromText(text, name))).toBe(expected);
  });

  it('SERVER_NOT_FOUND lists what is there', () => {
    try {
      removeServerFromText(three, 'zzz', '/w/.mcp.json');
    } catch (err) {
      expect((err as Error).message).toContain('a, b, c');
      expect((err as Error).message).toContain('/w/.mcp.json');
    }
    expect.assertions(2);
  });
});

describe('addServerToText: names that collide after the tool-identity mapping', () => {
  it('refuses a name whose identity another server already has (NAME_CONFLICT), the text unchanged', () => {
    const text = '{"mcpServers": {"a.b": {"command": "x"}}}';
    expect(() => addServerToText(text, 'a_b', { command: 'y' })).toThrow(
      expect.objectContaining({ code: 'NAME_CONFLICT' }),
    );
    expect(() => addServerToText(text, 'a b', { command: 'y' }, { overwrite: true })).toThrow(/mcp__a_b__/);
    expect(addServerToText(text, 'a.b', { command: 'y' }, { overwrite: true }).replaced).toBe(true);
  });
});
