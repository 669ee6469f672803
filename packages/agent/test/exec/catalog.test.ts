import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { type CatalogTool, renderCatalog, renderSignature, toolAccess } from '../../src/exposure/catalog';

interface RawTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: unknown;
}

const raw: RawTool[] = JSON.parse(
  readFileSync(new URL('../fixtures/search-catalog.json', import.meta.url), 'utf8'),
);
const all: CatalogTool[] = raw.map((t) => ({ ...t, fullName: `mcp__${t.server}__${t.name}` }));
const of = (...servers: string[]) => all.filter((t) => servers.includes(t.server));
const entries = (text: string) =>
  text.split('\nTools:\n\n')[1]?.split('\n\nShowing ')[0]?.split('\n\n') ?? [];
const tokens = (text: string) => Math.ceil(text.length / 4);

describe('golden catalogs of real servers', () => {
  test.each([['everything'], ['filesystem'], ['memory']])('%s', async (server) => {
    const text = renderCatalog(of(server));
    await expect(text).toMatchFileSnapshot(`golden/${server}.txt`);
    expect(text).not.toContain('Showing');
    expect(entries(text)).toHaveLength(of(server).length);
  });

  test('the three together, cut by the budget round-robin', async () => {
    const pool = of('everything', 'filesystem', 'memory');
    const text = renderCatalog(pool, { budgetTokens: 1500 });
    await expect(text).toMatchFileSnapshot('golden/three-servers-cut.txt');
    const shown = entries(text);
    expect(
      text.endsWith(
        `Showing ${shown.length} of ${pool.length} tools. The others are callable too: find them with await tools["$codemode"].search("what you need"), which covers every tool.`,
      ),
    ).toBe(true);
  });
});

describe('budget', () => {
  test('entries are kept round-robin across servers, whole entries only', () => {
    const pool = of('everything', 'filesystem', 'memory');
    // Budget for exactly: everything#1, filesystem#1, memory#1, everything#2.
    const sig = (server: string, i: number) => renderSignature(of(server)[i] as CatalogTool);
    const budget =
      tokens(sig('everything', 0)) +
      tokens(sig('filesystem', 0)) +
      tokens(sig('memory', 0)) +
      tokens(sig('everything', 1));
    const shown = entries(renderCatalog(pool, { budgetTokens: budget }));
    expect(shown).toEqual([
      sig('everything', 0),
      sig('everything', 1),
      sig('filesystem', 0),
      sig('memory', 0),
    ]);
    const less = entries(renderCatalog(pool, { budgetTokens: budget - 1 }));
    expect(less).toEqual([sig('everything', 0), sig('filesystem', 0), sig('memory', 0)]);
  });

  test('every server gets its first entry before any gets a second (23 real servers)', () => {
    const servers = [...new Set(all.map((t) => t.server))];
    const firsts = servers.map((s) => renderSignature(of(s)[0] as CatalogTool));
    const budget = firsts.reduce((n, e) => n + tokens(e), 0);
    const text = renderCatalog(all, { budgetTokens: budget });
    expect(new Set(entries(text))).toEqual(new Set(firsts));
    expect(text).toContain(`Showing ${servers.length} of ${all.length} tools.`);
  });

  test('at least one entry is kept, even when it alone is over the budget', () => {
    const text = renderCatalog(all, { budgetTokens: 1 });
    expect(entries(text)).toHaveLength(1);
    expect(text).toContain(`Showing 1 of ${all.length} tools.`);
    expect(text).toContain('tools["$codemode"].search(');
  });

  test('no budget number appears in the text', () => {
    for (const budget of [777, 1234, 4321, 99_999]) {
      const text = renderCatalog(all, { budgetTokens: budget });
      expect(text).not.toContain(String(budget));
    }
    for (const budget of [1, 50, 500, 5000]) {
      expect(renderCatalog(of('memory', 'everything'), { budgetTokens: budget })).not.toMatch(
        /token|budget/i,
      );
    }
    expect(renderCatalog(of('memory'), { budgetTokens: 100_000 })).toBe(
      renderCatalog(of('memory'), { budgetTokens: 200_000 }),
    );
  });
});

describe('stability', () => {
  test('byte-identical for the same pool, whatever the order servers connected in', () => {
    const pool = of('everything', 'filesystem', 'memory', 'github', 'notion');
    const a = renderCatalog(pool, { budgetTokens: 3000 });
    const b = renderCatalog(structuredClone(pool), { budgetTokens: 3000 });
    const reordered = [
      ...of('notion'),
      ...of('memory'),
      ...of('github'),
      ...of('filesystem'),
      ...of('everything'),
    ];
    const c = renderCatalog(reordered, { budgetTokens: 3000 });
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  test('an empty pool says plainly that no tools are available', () => {
    const text = renderCatalog([]);
    expect(text).toContain('No MCP tools are available right now.');
    expect(text).not.toContain('Tools:');
    expect(text).not.toContain('Showing');
  });

  test('the whole real catalog renders every tool with a budget large enough', () => {
    const text = renderCatalog(all, { budgetTokens: 10_000_000 });
    expect(entries(text)).toHaveLength(all.length);
  });
});

describe('signatures', () => {
  test('identifier names use dot access, others bracket access', () => {
    expect(toolAccess('mcp__memory__read_graph')).toBe('tools.mcp__memory__read_graph');
    expect(toolAccess('mcp__my-server__tool-name')).toBe('tools["mcp__my-server__tool-name"]');
    expect(toolAccess('mcp__srv__x.y')).toBe('tools["mcp__srv__x.y"]');
  });

  test('types, JSDoc constraints and bounds', () => {
    const long = 'word '.repeat(80).trim();
    const tool: CatalogTool = {
      server: 'srv',
      name: 'kitchen',
      fullName: 'mcp__srv__kitchen',
      description: `  \nFirst line of the description */ with a comment end\nSecond line is not shown`,
      inputSchema: {
        type: 'object',
        $defs: {
          Node: { type: 'object', properties: { value: { type: 'string' }, next: { $ref: '#/$defs/Node' } } },
        },
        properties: {
          name: { type: 'string', description: long, minLength: 1, maxLength: 10, pattern: '^[a-z]+$' },
          count: { type: 'integer', minimum: 0, maximum: 5, default: 2 },
          when: { type: 'string', format: 'date-time', deprecated: true },
          tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
          color: { enum: ['a', 'b', 'c', 'd', 'e'] },
          maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          either: { type: ['number', 'boolean'] },
          pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
          map: { type: 'object', additionalProperties: { type: 'number' } },
          loose: { type: 'object' },
          'dashed-key': { const: 'fixed' },
          list: { $ref: '#/$defs/Node' },
          deep: {
            type: 'object',
            properties: {
              l2: {
                type: 'object',
                properties: { l3: { type: 'object', properties: { x: { type: 'string' } } } },
              },
            },
          },
          extra1: { type: 'string' },
          extra2: { type: 'string' },
        },
        required: ['name', 'dashed-key'],
      },
    };
    const text = renderSignature(tool, {
      maxEnum: 3,
      maxProperties: 14,
      maxFieldDescriptionChars: 40,
      maxDepth: 3,
    });
    expect(text).toBe(
      [
        '/** First line of the description *\\/ with a comment end */',
        'tools.mcp__srv__kitchen(args: {',
        '  /** word word word word word word word wo... @pattern ^[a-z]+$ @minLength 1 @maxLength 10 */',
        '  name: string;',
        '  /** @integer @default 2 @minimum 0 @maximum 5 */',
        '  count?: number;',
        '  /** @format date-time @deprecated */',
        '  when?: string;',
        '  /** @minItems 1 @maxItems 3 */',
        '  tags?: Array<string>;',
        '  color?: "a" | "b" | "c" | ...;',
        '  maybe?: string | null;',
        '  either?: number | boolean;',
        '  pair?: [string, number];',
        '  map?: Record<string, number>;',
        '  loose?: Record<string, unknown>;',
        '  "dashed-key": "fixed";',
        '  list?: {',
        '    value?: string;',
        '    next?: object;',
        '  };',
        '  deep?: {',
        '    l2?: {',
        '      l3?: { ... };',
        '    };',
        '  };',
        '  extra1?: string;',
        '  ...',
        '})',
      ].join('\n'),
    );
  });

  test('a tool with no arguments and one with only optional arguments', () => {
    expect(
      renderSignature({ server: 's', name: 't', fullName: 'mcp__s__t', inputSchema: { $schema: 'x' } }),
    ).toBe('tools.mcp__s__t()');
    expect(
      renderSignature({
        server: 's',
        name: 't',
        fullName: 'mcp__s__t',
        inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
      }),
    ).toBe('tools.mcp__s__t(args?: {\n  a?: string;\n})');
  });

  test('long first description lines are cut with ...', () => {
    const text = renderSignature({
      server: 's',
      name: 't',
      fullName: 'mcp__s__t',
      description: 'x'.repeat(500),
    });
    expect(text.split('\n')[0]).toBe(`/** ${'x'.repeat(197)}... */`);
  });
});
