import {
  type FakeClock,
  fakeClock,
  MARKER_ENV as TESTKIT_MARKER_ENV,
  type Clock as TestkitClock,
} from '@wave/testkit';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isProcReaperError, ProcReaperError } from '../src/errors';
import * as api from '../src/index';
import { MARKER_ENV } from '../src/marker';
import type { Clock } from '../src/types';

describe('public API', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'MARKER_ENV',
      'ProcReaperError',
      'createLedger',
      'createReaper',
      'isAlive',
      'isProcReaperError',
      'killTree',
      'listDescendants',
      'spawnTracked',
    ]);
  });

  it('testkit finds leftovers by the same marker variable', () => {
    // testkit cannot depend on this package (this package's tests use testkit), so it keeps a copy.
    expect(TESTKIT_MARKER_ENV).toBe(MARKER_ENV);
  });
});

describe('isProcReaperError', () => {
  it('recognises the error by name and code, also from another copy of the package', () => {
    const own = new ProcReaperError('INVALID_PID', 'x');
    const foreign = Object.assign(new Error('x'), { name: 'ProcReaperError', code: 'SELF_TARGET' });
    expect(isProcReaperError(own)).toBe(true);
    expect(isProcReaperError(own, 'INVALID_PID')).toBe(true);
    expect(isProcReaperError(own, 'SPAWN_FAILED')).toBe(false);
    expect(isProcReaperError(foreign, 'SELF_TARGET')).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an unknown code', Object.assign(new Error('x'), { name: 'ProcReaperError', code: 'NOPE' })],
    ['no code', Object.assign(new Error('x'), { name: 'ProcReaperError' })],
    ['a look-alike object', { name: 'ProcReaperError', code: 'INVALID_PID', message: 'x' }],
    ['undefined', undefined],
  ])('rejects %s', (_label, value) => {
    expect(isProcReaperError(value)).toBe(false);
  });
});

describe('one clock shape', () => {
  it("testkit's Clock and FakeClock fit this package's Clock", () => {
    expectTypeOf<TestkitClock>().toEqualTypeOf<Clock>();
    expectTypeOf<FakeClock>().toMatchTypeOf<Clock>();
    const clock: Clock = fakeClock();
    expect(clock.now()).toBe(0);
  });
});
