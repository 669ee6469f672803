import { describe, expect, it } from 'vitest';
import { isMcpInstructionsError, McpInstructionsError } from '../src/errors';
import * as api from '../src/index';

describe('public API', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'McpInstructionsError',
      'computeInstructionsDelta',
      'isMcpInstructionsError',
      'readInstructionMarker',
    ]);
  });
});

describe('isMcpInstructionsError', () => {
  it('recognises the error by name and code, also from another copy of the package', () => {
    const foreign = Object.assign(new Error('x'), {
      name: 'McpInstructionsError',
      code: 'INVALID_MAX_CHARS',
    });
    expect(isMcpInstructionsError(new McpInstructionsError('INVALID_MAX_CHARS', 'x'))).toBe(true);
    expect(isMcpInstructionsError(foreign, 'INVALID_MAX_CHARS')).toBe(true);
    expect(() => api.computeInstructionsDelta([], [], { maxChars: 0 })).toThrow(
      expect.objectContaining({ name: 'McpInstructionsError' }),
    );
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an unknown code', Object.assign(new Error('x'), { name: 'McpInstructionsError', code: 'NOPE' })],
    ['a look-alike object', { name: 'McpInstructionsError', code: 'INVALID_MAX_CHARS', message: 'x' }],
  ])('rejects %s', (_label, value) => {
    expect(isMcpInstructionsError(value)).toBe(false);
  });
});
