import { describe, expect, it } from 'vitest';
import { TailBuffer } from '../src/ring-buffer';

describe('TailBuffer', () => {
  it.each([
    // max, writes, expected text, dropped
    [10, ['abc'], 'abc', 0],
    [10, ['abcdef', 'ghijkl'], 'cdefghijkl', 2],
    [4, ['abcdefgh'], 'efgh', 4],
    [4, ['ab', 'cdefgh'], 'efgh', 4],
    [4, ['a', 'b', 'c', 'd', 'e'], 'bcde', 1],
    [4, [''], '', 0],
  ])('max %i, writes %o -> %s', (max, writes, text, dropped) => {
    const b = new TailBuffer(max);
    for (const w of writes) b.push(w);
    expect(b.text()).toBe(text);
    expect(b.droppedBytes).toBe(dropped);
  });

  it('tail keeps the last non-empty lines', () => {
    const b = new TailBuffer();
    b.push('one\n\ntwo\r\nthree\n');
    b.push('four\n');
    expect(b.tail(2)).toBe('three\nfour');
    expect(b.tail(10)).toBe('one\ntwo\nthree\nfour');
    expect(new TailBuffer().tail()).toBe('');
  });

  it('tail is bounded in characters', () => {
    const b = new TailBuffer();
    b.push(`${'x'.repeat(5000)}\n`);
    const t = b.tail(20, 100);
    expect(t.length).toBe(103);
    expect(t.startsWith('...')).toBe(true);
  });
});
