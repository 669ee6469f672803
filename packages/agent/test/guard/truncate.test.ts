import { describe, expect, it, test } from 'vitest';
import {
  countLines,
  cutBytes,
  DEFAULT_OUTPUT_LIMITS,
  prefixWithinBytes,
  readOutputCall,
  summarizeStructured,
  truncateText,
  truncationNotice,
} from '../../src/guard/truncate';

const lines = (n: number, width = 3) =>
  Array.from({ length: n }, (_, i) => String(i).padStart(width, '0')).join('\n');

describe('countLines', () => {
  test.each([
    { text: '', n: 0 },
    { text: 'a', n: 1 },
    { text: 'a\n', n: 1 },
    { text: 'a\nb', n: 2 },
    { text: '\n\n', n: 2 },
  ])('$text -> $n', ({ text, n }) => expect(countLines(text)).toBe(n));
});

describe('prefixWithinBytes', () => {
  test.each([
    { text: 'abc', max: 2, chars: 2 },
    { text: 'é', max: 1, chars: 0 },
    { text: 'é', max: 2, chars: 1 },
    { text: 'a😀', max: 4, chars: 1 },
    { text: 'a😀', max: 5, chars: 3 },
    { text: '€€', max: 5, chars: 1 },
  ])('$text within $max bytes', ({ text, max, chars }) => expect(prefixWithinBytes(text, max)).toBe(chars));
});

describe('truncateText', () => {
  const cases = [
    {
      name: 'short text untouched',
      text: 'hello\nworld',
      limits: { maxBytes: 100, maxLines: 10 },
      expected: { text: 'hello\nworld', truncated: false, keptLines: 2, totalLines: 2, onLineBoundary: true },
    },
    {
      name: 'exactly at the limits untouched',
      text: 'ab\ncd\n',
      limits: { maxBytes: 6, maxLines: 2 },
      expected: { text: 'ab\ncd\n', truncated: false, keptLines: 2, totalLines: 2, onLineBoundary: true },
    },
    {
      name: 'too many lines: cut after the last allowed line',
      text: lines(10),
      limits: { maxBytes: 1000, maxLines: 4 },
      expected: {
        text: '000\n001\n002\n003\n',
        truncated: true,
        keptLines: 4,
        totalLines: 10,
        onLineBoundary: true,
      },
    },
    {
      name: 'too many bytes: cut at the last whole line that fits',
      text: lines(10),
      limits: { maxBytes: 10, maxLines: 1000 },
      expected: { text: '000\n001\n', truncated: true, keptLines: 2, totalLines: 10, onLineBoundary: true },
    },
    {
      name: 'one long line: cut inside it',
      text: 'x'.repeat(50),
      limits: { maxBytes: 20, maxLines: 1000 },
      expected: { text: 'x'.repeat(20), truncated: true, keptLines: 0, totalLines: 1, onLineBoundary: false },
    },
    {
      name: 'multi-byte characters are never split',
      text: 'é'.repeat(10),
      limits: { maxBytes: 5, maxLines: 1000 },
      expected: { text: 'éé', truncated: true, keptLines: 0, totalLines: 1, onLineBoundary: false },
    },
  ];
  test.each(cases)('$name', ({ text, limits, expected }) => {
    expect(truncateText(text, limits)).toMatchObject(expected);
  });

  it('defaults: 8 KB and 1 000 lines', () => {
    const big = lines(1500);
    const cut = truncateText(big, {
      maxBytes: DEFAULT_OUTPUT_LIMITS.maxTextBytes,
      maxLines: DEFAULT_OUTPUT_LIMITS.maxTextLines,
    });
    expect(cut.truncated).toBe(true);
    expect(cut.keptLines).toBe(1000);
    expect(cut.keptBytes).toBeLessThanOrEqual(8192);
    const wide = 'y'.repeat(100).concat('\n').repeat(200); // 20 200 bytes, 200 lines
    const cut2 = truncateText(wide, { maxBytes: 8192, maxLines: 1000 });
    expect(cut2).toMatchObject({
      truncated: true,
      keptLines: 81,
      keptBytes: 8181,
      totalBytes: 20200,
      totalLines: 200,
    });
  });
});

describe('truncationNotice', () => {
  it('names the file and the ReadOutput call that continues by lines', () => {
    const cut = truncateText(lines(10), { maxBytes: 1000, maxLines: 4 });
    expect(truncationNotice(cut, '/s/out/0001-x.txt')).toBe(
      '[Output truncated: showing the first 4 of 10 lines (16 of 39 bytes). The full output is saved at /s/out/0001-x.txt. Read on with ReadOutput {"path":"/s/out/0001-x.txt","offset":4} (offset and limit count lines).]',
    );
  });

  it('continues by characters when the cut is inside a line', () => {
    const cut = truncateText('x'.repeat(50), { maxBytes: 20, maxLines: 10 });
    expect(readOutputCall('/f', cut)).toBe('ReadOutput {"path":"/f","unit":"chars","offset":20}');
    expect(truncationNotice(cut, '/f')).toContain('showing the first 20 characters of line 1 (of 1 lines)');
  });

  it('says when the full output could not be saved', () => {
    const cut = truncateText(lines(10), { maxBytes: 1000, maxLines: 4 });
    expect(truncationNotice(cut, { error: 'EACCES: denied' })).toBe(
      '[Output truncated: showing the first 4 of 10 lines (16 of 39 bytes). The full output could not be saved (EACCES: denied).]',
    );
  });
});

describe('cutBytes', () => {
  test.each([
    { text: 'abc', max: 3, expected: 'abc' },
    { text: 'abcdef', max: 5, expected: 'ab…' },
    { text: 'ééé', max: 5, expected: 'é…' },
  ])('$text / $max', ({ text, max, expected }) => expect(cutBytes(text, max)).toBe(expected));
});

describe('summarizeStructured', () => {
  it('keeps small fields, counts blocks and types, previews the first 20', () => {
    const items = Array.from({ length: 500 }, (_, i) => ({
      type: i % 5 === 0 ? 'image' : 'text',
      id: i,
      body: 'z'.repeat(300),
    }));
    const summary = summarizeStructured({ total: 500, page: 1, items });
    const out = summary.split('\n');
    expect(out[0]).toBe('Small fields: {"total":500,"page":1}');
    expect(out[1]).toBe('Field "items": 500 blocks (image x100, text x400)');
    expect(out[2]).toMatch(/^ {2}\[0\] \{"type":"image","id":0,"body":"z+…$/);
    expect(Buffer.byteLength(out[2]?.slice(6) ?? '')).toBeLessThanOrEqual(200);
    expect(out[21]).toMatch(/^ {2}\[19\] /);
    expect(out[22]).toBe('  ... 480 more blocks');
    expect(out).toHaveLength(23);
  });

  it('summarizes a top-level array and large objects and strings', () => {
    expect(summarizeStructured([1, 'a', null, [2]]).split('\n')[0]).toBe(
      'Top level: 4 blocks (number x1, string x1, null x1, array x1)',
    );
    const big = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    const s = summarizeStructured({ meta: big, log: 'l'.repeat(5000) });
    expect(s).toContain('Field "meta": object with 1000 keys (k0, k1, k2');
    expect(s).toContain('Field "log": string of 5002 bytes');
  });

  it('keeps small fields whole up to 4 KB in total, in order', () => {
    const s = summarizeStructured({ a: 'x'.repeat(2000), b: 'y'.repeat(2000), c: 'z'.repeat(2000), d: 1 });
    const first = s.split('\n')[0] as string;
    expect(first.startsWith('Small fields: {"a":"xx')).toBe(true);
    expect(first).toContain('"b":"yy');
    expect(first).toContain('"d":1');
    expect(first).not.toContain('zzz');
    expect(s).toContain('Field "c": string of 2002 bytes');
  });

  it('is bounded by maxStructuredBytes whatever the input', () => {
    const many = Object.fromEntries(
      Array.from({ length: 2000 }, (_, i) => [`f${i}`, Array.from({ length: 30 }, () => 'w'.repeat(50))]),
    );
    const s = summarizeStructured(many);
    expect(Buffer.byteLength(s)).toBeLessThanOrEqual(16384);
  });

  it('never throws on odd values', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(summarizeStructured(cyclic)).toContain('[unprintable]');
    expect(summarizeStructured({ n: 10n })).toContain('[unprintable]');
  });
});

describe('truncateText on random text', () => {
  /** mulberry32: replayable by seed. */
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
  const ALPHABET = ['a', 'b', ' ', '\n', '\n', 'é', '€', '😀', '\r'];

  it('keeps a prefix within both limits, on a line start when any line fits (1000 seeds)', () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const r = rng(seed);
      const length = Math.floor(r() * 400);
      let text = '';
      for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(r() * ALPHABET.length)];
      const limits = { maxBytes: Math.floor(r() * 120), maxLines: Math.floor(r() * 12) };
      const cut = truncateText(text, limits);
      const where = `seed ${seed}`;
      expect(text.startsWith(cut.text), where).toBe(true);
      expect(cut.keptBytes, where).toBe(Buffer.byteLength(cut.text));
      expect(cut.keptChars, where).toBe(cut.text.length);
      expect(cut.totalLines, where).toBe(countLines(text));
      if (!cut.truncated) {
        expect(cut.text, where).toBe(text);
        continue;
      }
      expect(cut.keptBytes, where).toBeLessThanOrEqual(limits.maxBytes);
      expect(cut.keptLines, where).toBeLessThanOrEqual(limits.maxLines);
      expect(cut.text.split('\n').length - 1, where).toBe(cut.keptLines);
      const firstLineEnd = text.indexOf('\n');
      const firstLineFits =
        firstLineEnd !== -1 &&
        limits.maxLines >= 1 &&
        Buffer.byteLength(text.slice(0, firstLineEnd + 1)) <= limits.maxBytes;
      if (firstLineFits) expect(cut.onLineBoundary, where).toBe(true);
      if (cut.onLineBoundary) expect(cut.text === '' || cut.text.endsWith('\n'), where).toBe(true);
      // never a lone surrogate at the cut
      const last = cut.text.charCodeAt(cut.text.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff, where).toBe(false);
    }
  });
});
