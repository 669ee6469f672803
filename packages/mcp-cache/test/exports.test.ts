import type { Clock as TestkitClock } from '@wave/testkit';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isMcpCacheError, McpCacheError } from '../src/errors';
import * as api from '../src/index';
import type { Clock } from '../src/types';

describe('public API', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual(['McpCacheError', 'createToolCache', 'isMcpCacheError']);
  });
});

describe('isMcpCacheError', () => {
  it('recognises the error by name and code, also from another copy of the package', () => {
    const own = new McpCacheError('INVALID_INPUT', 'x');
    const foreign = Object.assign(new Error('x'), { name: 'McpCacheError', code: 'INVALID_OPTION' });
    expect(isMcpCacheError(own)).toBe(true);
    expect(isMcpCacheError(own, 'INVALID_INPUT')).toBe(true);
    expect(isMcpCacheError(own, 'INVALID_OPTION')).toBe(false);
    expect(isMcpCacheError(foreign, 'INVALID_OPTION')).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an unknown code', Object.assign(new Error('x'), { name: 'McpCacheError', code: 'NOPE' })],
    ['a look-alike object', { name: 'McpCacheError', code: 'INVALID_INPUT', message: 'x' }],
    ['null', null],
  ])('rejects %s', (_label, value) => {
    expect(isMcpCacheError(value)).toBe(false);
  });
});

describe('one clock shape', () => {
  it("the shared Clock (proc-reaper's, testkit's) fits this package's Clock, whose timer is optional", () => {
    expectTypeOf<TestkitClock>().toMatchTypeOf<Clock>();
    expectTypeOf<Required<Clock>>().toEqualTypeOf<Omit<TestkitClock, 'clearTimeout'>>();
  });
});
