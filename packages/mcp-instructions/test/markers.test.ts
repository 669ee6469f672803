import { describe, expect, it } from 'vitest';
import { computeInstructionsDelta } from '../src/delta';
import { findInstructionMarkers, latestInstructionMarkers, readInstructionMarker } from '../src/markers';

const weather = { name: 'weather', available: true, permitted: true, instructions: 'Rate limit 10/min.' };

describe('findInstructionMarkers', () => {
  it('finds every marker in history order with its index, dropping malformed entries', () => {
    const first = computeInstructionsDelta([], [weather])!;
    const history = [
      { role: 'user', content: 'hi' },
      first,
      null,
      { mcpInstructions: { announced: [{ server: 'x' }], retired: ['weather', 5] } },
    ];
    expect(findInstructionMarkers(history as object[])).toEqual([
      { index: 1, marker: first.mcpInstructions },
      { index: 3, marker: { announced: [], retired: ['weather'] } },
    ]);
  });

  it('returns [] for a non-array history instead of throwing', () => {
    expect(findInstructionMarkers(undefined as unknown as object[])).toEqual([]);
  });
});

describe('readInstructionMarker', () => {
  it.each([
    ['no field', { role: 'user' }, undefined],
    ['null', null, undefined],
    ['array field', { mcpInstructions: [] }, undefined],
    ['empty object', { mcpInstructions: {} }, { announced: [], retired: [] }],
  ])('%s', (_label, message, expected) => {
    expect(readInstructionMarker(message)).toEqual(expected);
  });
});

describe('latestInstructionMarkers', () => {
  it('keeps the latest entry per server with its index', () => {
    const history = [
      {
        mcpInstructions: {
          announced: [
            { server: 'a', hash: 'h1' },
            { server: 'b', hash: 'hb' },
          ],
          retired: [],
        },
      },
      { mcpInstructions: { announced: [], retired: ['a'] } },
      {
        mcpInstructions: {
          announced: [
            { server: 'a', hash: 'h2' },
            { server: 'a', hash: 'h3' },
          ],
          retired: [],
        },
      },
    ];
    const latest = latestInstructionMarkers(history);
    expect(latest.get('a')).toEqual({ state: 'announced', server: 'a', hash: 'h3', index: 2 });
    expect(latest.get('b')).toEqual({ state: 'announced', server: 'b', hash: 'hb', index: 0 });
    expect(latest.size).toBe(2);
  });

  it('a server missing from `servers` is retired only when its latest marker is an announcement', () => {
    const history = [{ mcpInstructions: { announced: [{ server: 'gone', hash: 'h' }], retired: [] } }];
    expect(computeInstructionsDelta(history, [])?.mcpInstructions.retired).toEqual(['gone']);
    expect(computeInstructionsDelta([...history, { mcpInstructions: { retired: ['gone'] } }], [])).toBeNull();
  });

  it('survives a non-array servers argument', () => {
    expect(computeInstructionsDelta([], null as unknown as [])).toBeNull();
  });
});
