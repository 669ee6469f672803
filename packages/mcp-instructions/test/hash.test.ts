import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HASH_PREFIX, hashInstructions } from '../src/hash';

/** Independent reference: BigInt FNV-1a 64 over TextEncoder's UTF-8 bytes. */
function referenceFnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return HASH_PREFIX + h.toString(16).padStart(16, '0');
}

describe('hashInstructions', () => {
  // Published FNV-1a 64-bit test vectors (ASCII input).
  it.each([
    ['', 'cbf29ce484222325'],
    ['a', 'af63dc4c8601ec8c'],
    ['foobar', '85944171f73967e8'],
  ])('FNV-1a 64 of %j is %s', (input, hex) => {
    expect(hashInstructions(input)).toBe(`fnv1a64:${hex}`);
  });

  it.each([
    ['ASCII', 'Rate limit: 10 requests per minute.'],
    ['two-byte UTF-8', 'Größe café ñ'],
    ['three-byte UTF-8 (CJK)', '调用前必须先登录，限流每分钟十次'],
    ['four-byte UTF-8 (surrogate pair)', 'emoji 😀 and 𝄞'],
    ['lone high surrogate', 'bad \ud83d here'],
    ['lone low surrogate', 'bad \ude00 here'],
    ['high surrogate at the end', 'end \ud83d'],
    ['newlines', 'line 1\r\nline 2\n'],
  ])('matches the BigInt/TextEncoder reference for %s', (_label, text) => {
    expect(hashInstructions(text)).toBe(referenceFnv1a64(text));
  });

  it('matches the reference for arbitrary strings, including lone surrogates', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(hashInstructions(text)).toBe(referenceFnv1a64(text));
      }),
      { numRuns: 500 },
    );
  });

  it('is a prefixed 16-digit lowercase hex string and tells texts apart', () => {
    expect(hashInstructions('x')).toMatch(/^fnv1a64:[0-9a-f]{16}$/);
    expect(hashInstructions('text')).not.toBe(hashInstructions('text '));
    expect(hashInstructions('a'.repeat(5000) + 'b')).not.toBe(hashInstructions('a'.repeat(5000) + 'c'));
  });
});
