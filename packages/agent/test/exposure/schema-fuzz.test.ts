import { describe, expect, it } from 'vitest';
import { sanitizeSchema } from '../../src/exposure/schema';
import { schemaProblems } from './schema-check';

/** A small seeded PRNG (mulberry32), so a failing case can be replayed by its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [
  'type',
  'properties',
  'required',
  'items',
  'prefixItems',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
  'enum',
  'const',
  'default',
  'description',
  'title',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'nullable',
  'not',
  '$schema',
  '__proto__',
  'constructor',
  'x-extra',
];
const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null', 'date', ''];
const REFS = [
  '#',
  '#/$defs/a',
  '#/$defs/b',
  '#/definitions/a',
  '#/properties/x',
  '#/nope',
  'http://x/y',
  '#/$defs/a/properties/0',
  '',
];

function randomValue(r: () => number, depth: number, all: object[]): unknown {
  const pick = r();
  if (depth <= 0 || pick < 0.25) {
    const leaves: unknown[] = [
      null,
      true,
      false,
      0,
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '',
      'x',
      'a'.repeat(Math.floor(r() * 5000)),
      TYPES[Math.floor(r() * TYPES.length)],
      REFS[Math.floor(r() * REFS.length)],
      undefined,
      10n,
      Symbol('s'),
      () => 1,
    ];
    return leaves[Math.floor(r() * leaves.length)];
  }
  if (pick < 0.3 && all.length > 0) return all[Math.floor(r() * all.length)]; // a JS cycle or a shared node
  if (pick < 0.45) {
    const arr: unknown[] = [];
    all.push(arr);
    const n = Math.floor(r() * 4);
    for (let i = 0; i < n; i++) arr.push(randomValue(r, depth - 1, all));
    return arr;
  }
  const obj: Record<string, unknown> = {};
  all.push(obj);
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++) {
    const key = KEYS[Math.floor(r() * KEYS.length)] as string;
    const value =
      key === 'type'
        ? r() < 0.7
          ? TYPES[Math.floor(r() * TYPES.length)]
          : randomValue(r, depth - 1, all)
        : key === '$ref'
          ? REFS[Math.floor(r() * REFS.length)]
          : key === 'properties' || key === '$defs' || key === 'definitions'
            ? Object.fromEntries(['a', 'b', 'x', '0'].map((k) => [k, randomValue(r, depth - 1, all)]))
            : randomValue(r, depth - 1, all);
    Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
  }
  if (r() < 0.02) {
    Object.defineProperty(obj, 'description', {
      enumerable: true,
      get() {
        throw new Error('hostile getter');
      },
    });
  }
  return obj;
}

function check(input: unknown): void {
  let out: Record<string, unknown> | undefined;
  expect(() => {
    out = sanitizeSchema(input);
  }).not.toThrow();
  expect(schemaProblems(out)).toEqual([]);
  expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(65536);
  expect(JSON.stringify(sanitizeSchema(input))).toBe(JSON.stringify(out));
}

describe('sanitizeSchema on random input', () => {
  it('never throws, always follows the rules (2000 seeded random schemas)', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const input = randomValue(r, 1 + Math.floor(r() * 8), []);
      try {
        check(input);
      } catch (err) {
        throw new Error(
          `seed ${seed}: ${(err as Error).message} ${JSON.stringify(schemaProblems(sanitizeSchema(input)))}`,
        );
      }
    }
  });

  it('survives 100 000 levels of nesting', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100_000; i++)
      deep = { type: 'object', properties: { a: deep }, anyOf: [deep, { type: 'null' }] };
    check(deep);
    let deepArray: unknown = {};
    for (let i = 0; i < 100_000; i++) deepArray = { items: deepArray };
    check({ properties: { a: deepArray } });
  });

  it('survives JS object cycles', () => {
    const a: Record<string, unknown> = { type: 'object' };
    a.properties = { self: a, list: { type: 'array', items: a } };
    a.anyOf = [a, { type: 'null' }];
    a.default = a;
    check(a);
  });

  it('survives a chain of $refs that point at each other', () => {
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) $defs[`d${i}`] = { $ref: `#/$defs/d${(i + 1) % 50}` };
    check({ type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs });
  });

  it('survives a Proxy whose every read throws', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no');
        },
        ownKeys() {
          throw new Error('no');
        },
        has() {
          throw new Error('no');
        },
        getOwnPropertyDescriptor() {
          throw new Error('no');
        },
      },
    );
    check(hostile);
    check({ type: 'object', properties: { p: hostile } });
  });
});
