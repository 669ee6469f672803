import { describe, expect, it } from 'vitest';
import { computeInstructionsDelta } from '../src/delta';
import { DEFAULT_MAX_CHARS, McpInstructionsError } from '../src/errors';
import { hashInstructions } from '../src/hash';
import { renderInstructionsMessage, truncateInstructions } from '../src/render';

describe('truncateInstructions', () => {
  it.each([
    ['shorter than the limit', 'abc', 5, 'abc', false],
    ['exactly the limit', 'abcde', 5, 'abcde', false],
    ['one over', 'abcdef', 5, 'abcde', true],
    ['cut would split a pair: one unit earlier', 'abcd😀', 5, 'abcd', true],
    ['pair fits whole', 'abc😀d', 5, 'abc😀', true],
    ['lone high surrogate at the cut is kept (no pair to split)', 'abcd\ud83dxyz', 5, 'abcd\ud83d', true],
    ['limit 1 on a pair', '😀', 1, '', true],
    ['Infinity never cuts', 'x'.repeat(10_000), Number.POSITIVE_INFINITY, 'x'.repeat(10_000), false],
  ])('%s', (_label, text, max, shown, truncated) => {
    expect(truncateInstructions(text, max)).toEqual({ shown, truncated });
  });
});

describe('renderInstructionsMessage', () => {
  it('returns null when there is nothing to announce or retire (no empty heading)', () => {
    expect(renderInstructionsMessage({ announce: [], retire: [] })).toBeNull();
  });

  it('sorts and deduplicates servers and computes missing hashes', () => {
    const msg = renderInstructionsMessage({
      announce: [
        { server: 'b', instructions: 'B text' },
        { server: 'a', instructions: 'A text' },
        { server: 'b', instructions: 'dup' },
      ],
      retire: ['z', { server: 'y', reason: 'removed' }, 'z'],
    });
    expect(msg?.mcpInstructions).toEqual({
      announced: [
        { server: 'a', hash: hashInstructions('A text') },
        { server: 'b', hash: hashInstructions('B text') },
      ],
      retired: ['y', 'z'],
    });
    expect(msg?.content).not.toContain('dup');
    expect(msg?.content.indexOf('server="a"')).toBeLessThan(msg?.content.indexOf('server="b"') ?? -1);
  });

  it('keeps a given hash as is (hosts may carry hashes of their own)', () => {
    const msg = renderInstructionsMessage({
      announce: [{ server: 'a', instructions: 't', hash: 'custom' }],
      retire: [],
    });
    expect(msg?.mcpInstructions.announced).toEqual([{ server: 'a', hash: 'custom' }]);
  });

  it('retirement text never claims to delete or remove the earlier text', () => {
    for (const reason of ['offline', 'removed', 'withdrawn'] as const) {
      const msg = renderInstructionsMessage({ announce: [], retire: [{ server: 's', reason }] });
      expect(msg?.content).toContain('no longer apply');
      expect(msg?.content).not.toMatch(
        /delet|erase|forget|been removed from (the|this) (history|conversation|context)/i,
      );
    }
  });

  it('the default limit is 2048 characters', () => {
    expect(DEFAULT_MAX_CHARS).toBe(2048);
    const msg = renderInstructionsMessage({
      announce: [{ server: 's', instructions: 'y'.repeat(2049) }],
      retire: [],
    });
    expect(msg?.content).toContain(`${'y'.repeat(2048)}\n</mcp-server-instructions>`);
    expect(msg?.content).toContain('showing the first 2048 of 2049 characters');
  });

  it('output is plain JSON data (survives a transcript round trip unchanged)', () => {
    const msg = computeInstructionsDelta(
      [],
      [{ name: 's', available: true, permitted: true, instructions: 'x\ny' }],
    );
    expect(JSON.parse(JSON.stringify(msg))).toEqual(msg);
  });
});

describe('maxChars option', () => {
  const servers = [{ name: 's', available: true, permitted: true, instructions: 'text' }];
  it.each([[0], [-1], [1.5], [Number.NaN], ['10'], [null], [Number.NEGATIVE_INFINITY]])(
    'rejects %s with a typed error, even when there is nothing to say',
    (bad) => {
      const run = (history: object[]) =>
        computeInstructionsDelta(history, servers, { maxChars: bad as number });
      expect(() => run([])).toThrow(McpInstructionsError);
      try {
        run([]);
      } catch (error) {
        expect((error as McpInstructionsError).code).toBe('INVALID_MAX_CHARS');
        expect((error as Error).message).toMatch(/maxChars must be a positive integer or Infinity/);
      }
      expect(() =>
        renderInstructionsMessage({ announce: [], retire: [] }, { maxChars: bad as number }),
      ).toThrow(McpInstructionsError);
    },
  );

  it.each([[1], [2048], [Number.POSITIVE_INFINITY]])('accepts %s', (ok) => {
    expect(computeInstructionsDelta([], servers, { maxChars: ok })).not.toBeNull();
  });
});
