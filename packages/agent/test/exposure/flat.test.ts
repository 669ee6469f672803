import { describe, expect, it, test } from 'vitest';
import {
  buildFlatTools,
  type FlatToolInput,
  fullToolName,
  parseFullToolName,
  shortToolName,
  TOOL_NAME_PATTERN,
  toolIdentity,
} from '../../src/exposure/flat';
import { loadCatalog, schemaProblems } from './schema-check';

describe('fullToolName', () => {
  test.each([
    { server: 'github', tool: 'create_issue', expected: 'mcp__github__create_issue' },
    { server: 'brave-search', tool: 'brave_web_search', expected: 'mcp__brave-search__brave_web_search' },
    { server: 'awslabs.aws-docs', tool: 'read.doc v2', expected: 'mcp__awslabs_aws-docs__read_doc_v2' },
    { server: 'a..b', tool: 'x', expected: 'mcp__a_b__x' },
    { server: 'notion', tool: 'API-get-user', expected: 'mcp__notion__API-get-user' },
    { server: 's', tool: 'résumé/ünïcode', expected: 'mcp__s__r_sum___n_code' },
    { server: 's', tool: '', expected: 'mcp__s___' },
    { server: 's', tool: 'a__b', expected: 'mcp__s__a__b' },
  ])('$server / $tool', ({ server, tool, expected }) => {
    expect(fullToolName(server, tool)).toBe(expected);
  });

  it('maps one UTF-16 pair (an emoji) to one underscore', () => {
    expect(toolIdentity('go😀')).toBe('go_');
  });
});

describe('parseFullToolName', () => {
  test.each([
    { name: 'mcp__github__create_issue', expected: { server: 'github', tool: 'create_issue' } },
    { name: 'mcp__s__a__b', expected: { server: 's', tool: 'a__b' } },
    { name: 'mcp__my_server__t', expected: { server: 'my_server', tool: 't' } },
    { name: 'mcp__a___tool', expected: { server: 'a_', tool: 'tool' } },
    { name: 'mcp__s___', expected: { server: 's', tool: '_' } },
    { name: 'mcp__github', expected: undefined },
    { name: 'mcp____x', expected: undefined },
    { name: 'github__create_issue', expected: undefined },
    { name: 'ReadOutput', expected: undefined },
    { name: '', expected: undefined },
  ])('$name', ({ name, expected }) => {
    expect(parseFullToolName(name)).toEqual(expected);
  });

  it('round-trips every full name of the catalog', () => {
    for (const t of loadCatalog()) {
      const full = fullToolName(t.server, t.name);
      expect(parseFullToolName(full)).toEqual({ server: t.server, tool: t.name });
    }
  });
});

describe('shortToolName', () => {
  it('keeps names within the limit and shortens longer ones stably', () => {
    expect(shortToolName('mcp__a__b')).toBe('mcp__a__b');
    const long = `mcp__${'s'.repeat(30)}__${'t'.repeat(40)}`;
    const short = shortToolName(long);
    expect(short).toHaveLength(64);
    expect(short).toMatch(/^mcp__s{30}__t{18}_[0-9a-f]{8}$/);
    expect(shortToolName(long)).toBe(short);
    expect(shortToolName(`${long}x`)).not.toBe(short);
  });
});

const tool = (server: string, name: string, extra: Partial<FlatToolInput> = {}): FlatToolInput => ({
  server,
  name,
  ...extra,
});

describe('buildFlatTools', () => {
  it('declares each tool under its full name, sorted, with a sanitized schema', () => {
    const flat = buildFlatTools([
      tool('zeta', 'b', { description: 'B', inputSchema: { $schema: 'x' } }),
      tool('alpha', 'a', {
        description: 'A',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      }),
      tool('zeta', 'a', { annotations: { readOnlyHint: true } }),
    ]);
    expect(flat.declarations).toEqual([
      {
        name: 'mcp__alpha__a',
        description: 'A',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      },
      {
        name: 'mcp__zeta__a',
        description: 'Tool "a" of MCP server "zeta".',
        inputSchema: { type: 'object', properties: {} },
      },
      { name: 'mcp__zeta__b', description: 'B', inputSchema: { type: 'object', properties: {} } },
    ]);
    expect(flat.resolve('mcp__zeta__a')).toEqual({
      server: 'zeta',
      tool: 'a',
      fullName: 'mcp__zeta__a',
      declaredName: 'mcp__zeta__a',
      readOnly: true,
    });
    expect(flat.resolve('mcp__zeta__b')?.readOnly).toBe(false);
    expect(flat.resolve('mcp__zeta__c')).toBeUndefined();
    expect(flat.resolve('ReadOutput')).toBeUndefined();
  });

  it('maps names providers reject, and resolves them to the real tool name', () => {
    const flat = buildFlatTools([tool('my.server', 'files/read file')]);
    expect(flat.declarations[0]?.name).toBe('mcp__my_server__files_read_file');
    expect(flat.resolve('mcp__my_server__files_read_file')).toMatchObject({
      server: 'my.server',
      tool: 'files/read file',
    });
  });

  it('gives a name over 64 characters a stable short form that resolves back', () => {
    const server = 'awslabs_aws-documentation-mcp-server';
    const name = 'search_documentation_with_extended_options';
    const flat = buildFlatTools([tool(server, name)]);
    const declared = flat.declarations[0]?.name as string;
    expect(declared).toHaveLength(64);
    expect(declared).toMatch(TOOL_NAME_PATTERN);
    const target = flat.resolve(declared);
    expect(target).toEqual({
      server,
      tool: name,
      fullName: `mcp__${server}__${name}`,
      declaredName: declared,
      readOnly: false,
    });
    // the full name resolves too, and the short form is the same in a new build with other tools
    expect(flat.resolve(`mcp__${server}__${name}`)?.declaredName).toBe(declared);
    const again = buildFlatTools([tool('other', 'x'), tool(server, name)]);
    expect(again.resolve(declared)?.tool).toBe(name);
  });

  it('keeps two long names with the same prefix apart', () => {
    const prefix = 'x'.repeat(60);
    const flat = buildFlatTools([tool('s', `${prefix}_one`), tool('s', `${prefix}_two`)]);
    const names = flat.declarations.map((d) => d.name);
    expect(new Set(names).size).toBe(2);
    expect(flat.resolve(names[0] as string)?.tool).not.toBe(flat.resolve(names[1] as string)?.tool);
  });

  test.each([
    { order: 'a.b first', inputs: [tool('s', 'a.b'), tool('s', 'a_b')] },
    { order: 'a_b first', inputs: [tool('s', 'a_b'), tool('s', 'a.b')] },
  ])('handles a collision the same way whatever the order ($order)', ({ inputs }) => {
    const flat = buildFlatTools(inputs);
    const names = flat.declarations.map((d) => d.name);
    expect(names[0]).toBe('mcp__s__a_b');
    expect(names[1]).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/);
    // "a.b" sorts before "a_b" ('.' < '_'), so "a.b" keeps the plain name
    expect(flat.resolve('mcp__s__a_b')?.tool).toBe('a.b');
    expect(flat.resolve(names[1] as string)?.tool).toBe('a_b');
  });

  it('reuses sanitized schemas from a cache across builds', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', format: 'uuid' } } };
    const cache = new WeakMap<object, Record<string, unknown>>();
    const first = buildFlatTools([tool('s', 't', { inputSchema: schema })], { schemaCache: cache });
    const second = buildFlatTools([tool('s', 't', { inputSchema: schema }), tool('s', 'u')], {
      schemaCache: cache,
    });
    expect(second.declarations[0]?.inputSchema).toBe(first.declarations[0]?.inputSchema);
    expect(cache.get(schema)).toEqual({
      type: 'object',
      properties: { q: { type: 'string', description: '(format: uuid)' } },
    });
    const uncached = buildFlatTools([tool('s', 't', { inputSchema: schema })]);
    expect(uncached.declarations[0]?.inputSchema).not.toBe(first.declarations[0]?.inputSchema);
    expect(uncached.declarations[0]?.inputSchema).toEqual(first.declarations[0]?.inputSchema);
  });

  it('declares a repeated tool once', () => {
    const flat = buildFlatTools([
      tool('s', 't', { description: 'first' }),
      tool('s', 't', { description: 'second' }),
    ]);
    expect(flat.declarations).toHaveLength(1);
    expect(flat.declarations[0]?.description).toBe('first');
  });

  it('cuts very long descriptions', () => {
    const flat = buildFlatTools([tool('s', 't', { description: 'y'.repeat(10_000) })], {
      maxDescriptionLength: 100,
    });
    expect(flat.declarations[0]?.description).toHaveLength(100);
  });

  describe('the real catalog', () => {
    const catalog = loadCatalog();
    const inputs: FlatToolInput[] = catalog.map((t) => ({
      server: t.server,
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));

    it('declares every tool under a unique valid name that resolves back', () => {
      const flat = buildFlatTools(inputs);
      expect(flat.declarations).toHaveLength(252);
      const names = flat.declarations.map((d) => d.name);
      expect(new Set(names).size).toBe(252);
      for (const d of flat.declarations) {
        expect(d.name).toMatch(TOOL_NAME_PATTERN);
        expect(schemaProblems(d.inputSchema)).toEqual([]);
      }
      for (const t of catalog) {
        const target = flat.resolve(fullToolName(t.server, t.name));
        expect(target).toMatchObject({ server: t.server, tool: t.name });
        expect(flat.resolve(target?.declaredName as string)).toEqual(target);
      }
      expect([...names].sort()).toEqual(names);
    });

    it('is the same whatever the input order', () => {
      const reversed = buildFlatTools([...inputs].reverse());
      expect(JSON.stringify(reversed.declarations)).toBe(JSON.stringify(buildFlatTools(inputs).declarations));
    });

    it('an unrelated change (one server goes away) moves no other declaration', () => {
      const all = buildFlatTools(inputs).declarations;
      const withoutSlack = buildFlatTools(inputs.filter((t) => t.server !== 'slack')).declarations;
      expect(withoutSlack).toEqual(all.filter((d) => !d.name.startsWith('mcp__slack__')));
    });
  });
});
