import fc from 'fast-check';
import { parse } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { addServerToText, removeServerFromText } from '../src/edit';

interface Entry {
  name: string;
  value: Record<string, unknown>;
  above: boolean;
  after: boolean;
}

interface Style {
  indent: string;
  eol: string;
  trailingCommas: boolean;
  header: boolean;
  minified: boolean;
}

/** Render a config file the way a person might have written it. */
function render(entries: Entry[], style: Style): string {
  if (style.minified) {
    return JSON.stringify({ mcpServers: Object.fromEntries(entries.map((e) => [e.name, e.value])) });
  }
  const { indent: i1, eol } = style;
  const i2 = i1 + i1;
  const lines = ['{'];
  if (style.header) lines.push(`${i1}// header comment`);
  lines.push(`${i1}"mcpServers": {`);
  entries.forEach((e, index) => {
    if (e.above) lines.push(`${i2}// above-${e.name}`);
    const comma = index < entries.length - 1 || style.trailingCommas ? ',' : '';
    lines.push(
      `${i2}${JSON.stringify(e.name)}: ${JSON.stringify(e.value)}${comma}${e.after ? ` // after-${e.name}` : ''}`,
    );
  });
  lines.push(`${i1}}${style.trailingCommas ? ',' : ''}`);
  lines.push('}');
  return lines.join(eol) + eol;
}

const serverValue = fc.oneof(
  fc.record({
    command: fc.constantFrom('node', 'npx', 'uvx'),
    args: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  }),
  fc.record({ url: fc.constantFrom('https://a/mcp', 'http://127.0.0.1:9/x') }),
);
const entries = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/),
    value: serverValue,
    above: fc.boolean(),
    after: fc.boolean(),
  }),
  { selector: (e) => e.name, maxLength: 8 },
);
const style = fc.record({
  indent: fc.constantFrom('  ', '    ', '\t'),
  eol: fc.constantFrom('\n', '\r\n'),
  trailingCommas: fc.boolean(),
  header: fc.boolean(),
  minified: fc.boolean(),
});

function serversOf(text: string): Record<string, unknown> {
  const errors: unknown[] = [];
  const doc = parse(text, errors as never, { allowTrailingComma: true }) as {
    mcpServers: Record<string, unknown>;
  };
  expect(errors).toEqual([]);
  return doc.mcpServers;
}

function isSubsequence(small: string, big: string): boolean {
  let i = 0;
  for (let j = 0; j < big.length && i < small.length; j++) if (big[j] === small[i]) i++;
  return i === small.length;
}

function strict(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('fuzz: edits on files written in many styles', () => {
  it('add: only inserts, keeps every comment and server, keeps line endings and strictness', () => {
    fc.assert(
      fc.property(entries, style, serverValue, (list, s, value) => {
        const text = render(list, s);
        const out = addServerToText(text, 'zz-new', value).text;
        expect(isSubsequence(text, out)).toBe(true);
        expect(serversOf(out)).toEqual({ ...serversOf(text), 'zz-new': value });
        if (s.eol === '\r\n' && !s.minified) expect(out.replace(/\r\n/g, '')).not.toContain('\n');
        if (strict(text)) expect(strict(out)).toBe(true);
        if (s.minified) expect(out).not.toContain('\n');
      }),
      { numRuns: 1000 },
    );
  });

  it('remove: only deletes, keeps the other servers and every comment not on the removed lines', () => {
    fc.assert(
      fc.property(
        entries.filter((l) => l.length > 0),
        style,
        fc.nat(),
        (list, s, pick) => {
          const text = render(list, s);
          const victim = list[pick % list.length]!;
          const out = removeServerFromText(text, victim.name).text;
          expect(isSubsequence(out, text)).toBe(true);
          const expected = serversOf(text);
          delete expected[victim.name];
          expect(serversOf(out)).toEqual(expected);
          if (strict(text)) expect(strict(out)).toBe(true);
          for (const e of s.minified ? [] : list) {
            if (e.above) expect(out).toContain(`// above-${e.name}`);
            if (e.after && e !== victim) expect(out).toContain(`// after-${e.name}`);
          }
          if (s.header && !s.minified) expect(out).toContain('// header comment');
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('overwrite: replaces one value, keeps the rest', () => {
    fc.assert(
      fc.property(
        entries.filter((l) => l.length > 0),
        style,
        fc.nat(),
        serverValue,
        (list, s, pick, value) => {
          const text = render(list, s);
          const target = list[pick % list.length]!;
          const out = addServerToText(text, target.name, value, { overwrite: true }).text;
          expect(serversOf(out)).toEqual({ ...serversOf(text), [target.name]: value });
          for (const e of s.minified ? [] : list) {
            if (e.above) expect(out).toContain(`// above-${e.name}`);
            if (e.after) expect(out).toContain(`// after-${e.name}`);
          }
          if (strict(text)) expect(strict(out)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
