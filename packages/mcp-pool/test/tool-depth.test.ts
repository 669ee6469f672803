import { describe, expect, it } from 'vitest';
import { checkTools, MAX_SCHEMA_DEPTH } from '../src/tool-list';

/** An object schema nested `levels` deep (`properties.n` at each level). */
function nested(levels: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) s = { type: 'object', properties: { n: s } };
  return s;
}

describe('checkTools: schemas nested too deep', () => {
  it('a schema 2000 levels deep is dropped with the reason; the other tools stay', () => {
    const r = checkTools([
      { name: 'deep', inputSchema: nested(2000) },
      { name: 'ok', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
    ]);
    expect(r.tools.map((t) => t.name)).toEqual(['ok']);
    expect(r.dropped).toEqual([
      { tool: 'deep', reason: `inputSchema: nested deeper than ${MAX_SCHEMA_DEPTH} levels` },
    ]);
  });

  it('an output schema nested too deep drops the tool too', () => {
    const r = checkTools([{ name: 'deep-out', inputSchema: { type: 'object' }, outputSchema: nested(5000) }]);
    expect(r.tools).toEqual([]);
    expect(r.dropped[0]?.reason).toMatch(/outputSchema: nested deeper/);
  });

  it('a realistic depth is kept', () => {
    const r = checkTools([{ name: 'fine', inputSchema: nested(10) }]);
    expect(r.tools.map((t) => t.name)).toEqual(['fine']);
  });

  it('an object cycle (possible from an in-process transport) is dropped, not walked forever', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: {} };
    (schema.properties as Record<string, unknown>).self = schema;
    const r = checkTools([{ name: 'cyclic', inputSchema: schema }]);
    expect(r.tools).toEqual([]);
    expect(r.dropped[0]?.tool).toBe('cyclic');
  });

  it('very deep input does not overflow the stack', () => {
    expect(() => checkTools([{ name: 'abyss', inputSchema: nested(200_000) }])).not.toThrow();
  });
});
