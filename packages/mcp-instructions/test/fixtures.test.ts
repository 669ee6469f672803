import { deepFreeze } from '@wave/testkit';
import { describe, expect, it } from 'vitest';
import { computeInstructionsDelta } from '../src/delta';
import type { ServerInstructionsState } from '../src/types';
import { loadFixtures } from './fixture-loader';

const fixtures = loadFixtures();

describe('fixtures: history + servers -> expected delta', () => {
  it('has a table of fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const history = deepFreeze(structuredClone(f.history)) as object[];
    const servers = deepFreeze(structuredClone(f.servers)) as ServerInstructionsState[];
    const delta = computeInstructionsDelta(history, servers, f.options);

    if (f.expected === null) {
      expect(delta, f.rule).toBeNull();
      return;
    }
    expect(delta, f.rule).not.toBeNull();
    if (delta === null) return;
    expect(delta.role).toBe('user');
    expect(delta.isMeta).toBe(true);
    expect(delta.mcpInstructions, f.rule).toEqual(f.expected.mcpInstructions);
    if (f.expected.content !== undefined) expect(delta.content, f.rule).toBe(f.expected.content);
    for (const part of f.expected.contentIncludes ?? []) expect(delta.content, f.rule).toContain(part);
    for (const part of f.expected.contentExcludes ?? []) expect(delta.content, f.rule).not.toContain(part);

    // The delta itself is the memory: appending it makes the next call say nothing.
    expect(computeInstructionsDelta([...history, delta], servers, f.options), 'idempotent').toBeNull();
  });
});
