import { describe, expect, it, test } from 'vitest';
import { cutText, sanitizeSchema } from '../../src/exposure/schema';
import { loadCatalog, schemaProblems } from './schema-check';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';

interface Case {
  name: string;
  input: unknown;
  expected: Record<string, unknown>;
}

const LONG = 'x'.repeat(3000);
const TWO_KB = 'd'.repeat(2048);

const cases: Case[] = [
  { name: 'only $schema (gitlab)', input: { $schema: DRAFT7 }, expected: { type: 'object', properties: {} } },
  { name: 'not an object: null', input: null, expected: { type: 'object', properties: {} } },
  { name: 'not an object: number', input: 42, expected: { type: 'object', properties: {} } },
  { name: 'not an object: array', input: [{ type: 'string' }], expected: { type: 'object', properties: {} } },
  { name: 'boolean true', input: true, expected: { type: 'object', properties: {} } },
  {
    name: 'type missing at the top',
    input: { properties: { q: { type: 'string' } }, required: ['q'] },
    expected: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
  {
    name: 'drops $schema, $id, title, examples, $comment',
    input: {
      $schema: DRAFT7,
      $id: 'urn:x',
      title: 'Args',
      type: 'object',
      properties: { a: { type: 'string', examples: ['x'], $comment: 'c', title: 'A' } },
    },
    expected: {
      type: 'object',
      description: 'Args',
      properties: { a: { type: 'string', description: 'A' } },
    },
  },
  {
    name: 'exclusiveMinimum into the description (sentry)',
    input: {
      type: 'object',
      properties: {
        minutes: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991, description: 'Minutes.' },
      },
    },
    expected: {
      type: 'object',
      properties: {
        minutes: { type: 'integer', description: 'Minutes. (must be > 0)', maximum: 9007199254740991 },
      },
    },
  },
  {
    name: 'draft-04 boolean exclusive bounds',
    input: {
      properties: {
        n: { type: 'number', minimum: 1, exclusiveMinimum: true, maximum: 5, exclusiveMaximum: true },
      },
    },
    expected: {
      type: 'object',
      properties: {
        n: { type: 'number', description: '(must be > 1; must be < 5)', minimum: 1, maximum: 5 },
      },
    },
  },
  {
    name: 'anyOf with null and a null default (sentry find_organizations)',
    input: {
      type: 'object',
      properties: {
        query: { default: null, anyOf: [{ type: 'string', description: 'Search query.' }, { type: 'null' }] },
      },
    },
    expected: {
      type: 'object',
      properties: { query: { description: 'Search query.', anyOf: [{ type: 'string' }, { type: 'null' }] } },
    },
  },
  {
    name: 'oneOf with null first, outer description wins',
    input: {
      properties: {
        id: { description: 'The id', oneOf: [{ type: 'null' }, { type: 'integer', minimum: 1 }] },
      },
    },
    expected: {
      type: 'object',
      properties: {
        id: { description: 'The id', anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] },
      },
    },
  },
  {
    name: 'a nullable enum keeps its string values in the non-null branch',
    input: { properties: { c: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] } } },
    expected: {
      type: 'object',
      properties: { c: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] } },
    },
  },
  {
    name: 'null inside an enum becomes the null branch',
    input: { properties: { c: { type: ['string', 'null'], enum: ['a', null] } } },
    expected: {
      type: 'object',
      properties: { c: { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'null' }] } },
    },
  },
  {
    name: 'OpenAPI nullable: true',
    input: { properties: { s: { type: 'string', nullable: true } } },
    expected: { type: 'object', properties: { s: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
  },
  {
    name: 'a type list becomes one branch per type, each with its own keywords',
    input: {
      properties: {
        v: {
          type: ['string', 'array', 'null'],
          description: 'V',
          maxLength: 5,
          items: { type: 'number' },
          minItems: 1,
        },
      },
    },
    expected: {
      type: 'object',
      properties: {
        v: {
          description: 'V',
          anyOf: [
            { type: 'string', maxLength: 5 },
            { type: 'array', items: { type: 'number' }, minItems: 1 },
            { type: 'null' },
          ],
        },
      },
    },
  },
  {
    name: 'keywords of another type are dropped (properties on a string)',
    input: {
      properties: {
        s: { type: 'string', properties: { a: { type: 'string' } }, required: ['a'], minimum: 3 },
      },
    },
    expected: { type: 'object', properties: { s: { type: 'string' } } },
  },
  {
    name: 'a non-string enum goes into the description',
    input: { properties: { level: { type: 'integer', enum: [1, 2, 3], description: 'Level' } } },
    expected: {
      type: 'object',
      properties: { level: { description: 'Level (one of 1, 2, 3)', type: 'integer' } },
    },
  },
  {
    name: 'an array without items gets items: {} (Gemini requires it)',
    input: { properties: { tags: { type: 'array' }, any: { type: 'object' } } },
    expected: {
      type: 'object',
      properties: { tags: { type: 'array', items: {} }, any: { type: 'object', properties: {} } },
    },
  },
  {
    name: 'an empty string in an enum goes into the description',
    input: { properties: { op: { type: 'string', enum: ['', 'eq', 'neq'] } } },
    expected: {
      type: 'object',
      properties: { op: { type: 'string', description: '(or an empty string)', enum: ['eq', 'neq'] } },
    },
  },
  {
    name: 'pattern goes into the description',
    input: { properties: { id: { type: 'string', pattern: '^[a-z]+$' } } },
    expected: { type: 'object', properties: { id: { type: 'string', description: '(pattern: ^[a-z]+$)' } } },
  },
  {
    name: 'union of two types with null stays anyOf',
    input: { properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] } } },
    expected: {
      type: 'object',
      properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] } },
    },
  },
  {
    name: 'a union with an unconstrained branch is unconstrained',
    input: { properties: { v: { description: 'Any', anyOf: [{ type: 'string' }, {}] } } },
    expected: { type: 'object', properties: { v: { description: 'Any' } } },
  },
  {
    name: 'recursive $ref through $defs',
    input: {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/Node' } },
      $defs: {
        Node: {
          type: 'object',
          properties: {
            label: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/Node' } },
          },
        },
      },
    },
    expected: {
      type: 'object',
      properties: {
        tree: {
          type: 'object',
          properties: {
            label: { type: 'string' },
            children: {
              type: 'array',
              items: {
                type: 'object',
                description: '(recursive reference to Node; any object accepted)',
                properties: {},
              },
            },
          },
        },
      },
    },
  },
  {
    name: 'definitions (draft-07) with a sibling description',
    input: {
      properties: { p: { $ref: '#/definitions/P', description: 'Outer' } },
      definitions: { P: { type: 'string', description: 'Inner', format: 'uuid' } },
    },
    expected: { type: 'object', properties: { p: { type: 'string', description: 'Outer (format: uuid)' } } },
  },
  {
    name: '$ref to the root',
    input: { type: 'object', properties: { self: { $ref: '#' } } },
    expected: {
      type: 'object',
      properties: {
        self: {
          type: 'object',
          description: '(recursive reference to the whole schema; any object accepted)',
          properties: {},
        },
      },
    },
  },
  {
    name: 'unresolvable $ref',
    input: { properties: { x: { $ref: 'https://example.com/s.json', description: 'X' } } },
    expected: {
      type: 'object',
      properties: {
        x: { description: 'X (schema https://example.com/s.json could not be resolved; any value accepted)' },
      },
    },
  },
  {
    name: 'JSON pointer escapes in $ref',
    input: { properties: { x: { $ref: '#/$defs/a~1b' } }, $defs: { 'a/b': { type: 'boolean' } } },
    expected: { type: 'object', properties: { x: { type: 'boolean' } } },
  },
  {
    name: 'format date-time kept, others folded',
    input: {
      properties: { at: { type: 'string', format: 'date-time' }, u: { type: 'string', format: 'uri' } },
    },
    expected: {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        u: { type: 'string', description: '(format: uri)' },
      },
    },
  },
  {
    name: 'const becomes a one-value enum',
    input: { properties: { kind: { type: 'string', const: 'page_id' } } },
    expected: { type: 'object', properties: { kind: { type: 'string', enum: ['page_id'] } } },
  },
  {
    name: 'default folded into the description',
    input: { properties: { n: { type: 'number', default: 3, description: 'Count' } } },
    expected: { type: 'object', properties: { n: { type: 'number', description: 'Count (default: 3)' } } },
  },
  {
    name: 'required names that are not properties are dropped',
    input: { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b', 7, 'a'] },
    expected: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
  },
  {
    name: 'allOf merged',
    input: {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'number' } }, required: ['b'] },
      ],
    },
    expected: {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'top-level union of objects merged (required = the common ones)',
    input: {
      anyOf: [
        {
          type: 'object',
          properties: { id: { type: 'string' }, a: { type: 'string' } },
          required: ['id', 'a'],
        },
        {
          type: 'object',
          properties: { id: { type: 'string' }, b: { type: 'string' } },
          required: ['id', 'b'],
        },
      ],
    },
    expected: {
      type: 'object',
      description: '(accepts one of 2 argument shapes; pass the properties of one)',
      properties: { id: { type: 'string' }, a: { type: 'string' }, b: { type: 'string' } },
      required: ['id'],
    },
  },
  {
    name: 'top-level non-object type',
    input: { type: 'string', description: 'A query' },
    expected: {
      type: 'object',
      description: 'A query (the server declared a string input, not an object)',
      properties: {},
    },
  },
  {
    name: 'tuple items become a union',
    input: { properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } },
    expected: {
      type: 'object',
      properties: {
        pair: {
          type: 'array',
          description: '(items in a fixed order)',
          items: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        },
      },
    },
  },
  {
    name: 'map with propertyNames (playwright browser_drop)',
    input: {
      properties: {
        data: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } },
      },
    },
    expected: {
      type: 'object',
      properties: { data: { type: 'object', description: '(any keys; values: string)', properties: {} } },
    },
  },
  {
    name: 'a 2 KB description is kept whole',
    input: { properties: { d: { type: 'string', description: TWO_KB } } },
    expected: { type: 'object', properties: { d: { type: 'string', description: TWO_KB } } },
  },
  {
    name: 'a longer description is cut at 2048 characters',
    input: { properties: { d: { type: 'string', description: LONG } } },
    expected: { type: 'object', properties: { d: { type: 'string', description: `${'x'.repeat(2047)}…` } } },
  },
  {
    name: 'unknown types and enum objects dropped',
    input: { properties: { a: { type: 'date', enum: [{ x: 1 }, 'ok', 'ok'] } } },
    expected: { type: 'object', properties: { a: { type: 'string', enum: ['ok'] } } },
  },
  {
    name: 'boolean false schema',
    input: { properties: { never: false } },
    expected: { type: 'object', properties: { never: { description: '(no value is accepted here)' } } },
  },
];

describe('sanitizeSchema', () => {
  test.each(cases)('$name', ({ input, expected }) => {
    const out = sanitizeSchema(input);
    expect(out).toEqual(expected);
    expect(schemaProblems(out)).toEqual([]);
  });

  it('keeps a property named __proto__ as a plain property', () => {
    const input = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}',
    );
    const out = sanitizeSchema(input);
    expect(Object.keys(out.properties as object)).toEqual(['__proto__']);
    expect(JSON.stringify(out)).toBe(
      '{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}',
    );
  });

  it('honours keepFormats and maxDescriptionLength', () => {
    const out = sanitizeSchema(
      { properties: { u: { type: 'string', format: 'uuid', description: 'abcdefghij' } } },
      { keepFormats: ['uuid'], maxDescriptionLength: 5 },
    );
    expect(out.properties).toEqual({ u: { type: 'string', description: 'abcd…', format: 'uuid' } });
  });

  it('bounds the size: a huge schema is reduced, never over maxBytes', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 400; i++) properties[`p${i}`] = { type: 'string', description: 'y'.repeat(1000) };
    const out = sanitizeSchema({ type: 'object', properties }, { maxBytes: 20_000 });
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(20_000);
    expect(schemaProblems(out)).toEqual([]);
  });

  it('bounds $ref fan-out (each def used twice, 30 levels: 2^30 nodes if inlined naively)', () => {
    const $defs: Record<string, unknown> = { d30: { type: 'string' } };
    for (let i = 0; i < 30; i++) {
      $defs[`d${i}`] = {
        type: 'object',
        properties: { l: { $ref: `#/$defs/d${i + 1}` }, r: { $ref: `#/$defs/d${i + 1}` } },
      };
    }
    const started = performance.now();
    const out = sanitizeSchema({ type: 'object', properties: { root: { $ref: '#/$defs/d0' } }, $defs });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(schemaProblems(out)).toEqual([]);
  });
});

describe('cutText', () => {
  test.each([
    { text: 'abc', max: 3, expected: 'abc' },
    { text: 'abcd', max: 3, expected: 'ab…' },
    { text: 'ab  cd', max: 4, expected: 'ab…' },
    { text: 'a😀b', max: 3, expected: 'a…' },
    { text: 'abc', max: 0, expected: '' },
  ])('cutText($text, $max)', ({ text, max, expected }) => {
    expect(cutText(text, max)).toBe(expected);
  });
});

describe('the real catalog (252 tools of 23 servers)', () => {
  const catalog = loadCatalog();

  it('has the tools it claims', () => {
    expect(catalog.length).toBe(252);
  });

  test.each(catalog.map((t) => ({ id: `${t.server}/${t.name}`, tool: t })))('$id', ({ tool }) => {
    const out = sanitizeSchema(tool.inputSchema);
    expect(schemaProblems(out)).toEqual([]);
    // deterministic and idempotent
    expect(JSON.stringify(sanitizeSchema(tool.inputSchema))).toBe(JSON.stringify(out));
    expect(sanitizeSchema(out)).toEqual(out);
    // every top-level property the server declared is still there
    const src = tool.inputSchema as { properties?: Record<string, unknown> };
    if (src.properties && (src as { type?: unknown }).type === 'object') {
      expect(Object.keys(out.properties as object)).toEqual(Object.keys(src.properties));
    }
  });

  it('keeps the meaning of dropped keys', () => {
    const find = (server: string, name: string) =>
      catalog.find((t) => t.server === server && t.name === name);
    const sentry = sanitizeSchema(find('sentry', 'update_issue')?.inputSchema);
    expect(JSON.stringify(sentry)).toContain('must be > 0');
    const notion = sanitizeSchema(find('notion', 'API-patch-block-children')?.inputSchema);
    const text = JSON.stringify(notion);
    expect(text).not.toContain('$ref');
    expect(text).toContain('rich_text'); // inlined from $defs
    expect(text).not.toContain('"anyOf":[{"anyOf"'); // nested unions are flattened
    const move = JSON.stringify(sanitizeSchema(find('notion', 'API-move-page')?.inputSchema));
    expect(move).toContain('format: uuid');
    expect(move).not.toContain('"format"');
  });
});
