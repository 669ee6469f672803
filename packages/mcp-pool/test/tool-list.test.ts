/**
 * Each listed tool is checked on its own: what has one obvious meaning is
 * repaired, what cannot be used is dropped with a reason, the rest is kept.
 */
import { describe, expect, it } from 'vitest';
import { checkTools } from '../src/tool-list';

const ok = { name: 'ok', inputSchema: { type: 'object' } };

describe('checkTools (pure)', () => {
  it.each([
    ['a valid tool is kept as it is', [ok], ['ok'], []],
    [
      'an inputSchema with only $schema (server-gitlab) gets type "object"',
      [{ name: 'g', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#' } }],
      ['g'],
      [],
    ],
    ['no inputSchema at all: an object schema without properties', [{ name: 'n' }], ['n'], []],
    ['no name', [{ inputSchema: { type: 'object' } }, ok], ['ok'], ['#0']],
    ['a name that is not a string', [{ name: 7, inputSchema: { type: 'object' } }], [], ['#0']],
    ['an inputSchema that is a string', [{ name: 's', inputSchema: 'object' }], [], ['s']],
    ['an inputSchema of type "array"', [{ name: 'a', inputSchema: { type: 'array' } }], [], ['a']],
    ['not an object at all', ['tool', null, ok], ['ok'], ['#0', '#1']],
    ['a second tool with the same name', [ok, { ...ok, description: 'again' }], ['ok'], ['ok']],
  ])('%s', (_name, raw, kept, dropped) => {
    const r = checkTools(raw as unknown[]);
    expect(r.tools.map((t) => t.name)).toEqual(kept);
    expect(r.dropped.map((d) => d.tool)).toEqual(dropped);
    for (const d of r.dropped) expect(d.reason).not.toBe('');
    for (const t of r.tools) expect(t.inputSchema.type).toBe('object');
  });

  it('a repaired schema keeps everything else it said', () => {
    const r = checkTools([
      { name: 'g', description: 'd', inputSchema: { $schema: 'x', properties: { q: { type: 'string' } } } },
    ]);
    expect(r.tools[0]).toEqual({
      name: 'g',
      description: 'd',
      inputSchema: { $schema: 'x', type: 'object', properties: { q: { type: 'string' } } },
    });
  });
});
