import { describe, expect, it } from 'vitest';
import * as api from '../src/index';
import * as vitestEntry from '../src/vitest';
import { deepFreeze } from '../src/wait';

describe('public API', () => {
  it('the root entry exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'ChildProcessTransport',
      'FIXTURE_NAMES',
      'MARKER_ENV',
      'TestkitError',
      'childProcessTransport',
      'deepFreeze',
      'deferred',
      'fakeClock',
      'fakeModelFixturePath',
      'findProcessesByMarker',
      'fixturePath',
      'fixtureServer',
      'followAuthorizationRedirect',
      'gate',
      'isPidAlive',
      'killMarked',
      'killPids',
      'listDescendants',
      'makeMarker',
      'makeTempDir',
      'makeTempHome',
      'markerEnv',
      'realServer',
      'startFakeAnthropic',
      'startFakeOpenAI',
      'startHttpFixture',
      'startOAuthFixture',
      'supportsProcScan',
      'systemClock',
      'waitFor',
    ]);
  });

  it('@wave/testkit/vitest exports exactly these runtime names', () => {
    expect(Object.keys(vitestEntry).sort()).toEqual(['describeAtomicReplace', 'tempDir']);
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects, arrays and symbol-keyed values', () => {
    const sym = Symbol('s');
    const value = deepFreeze({ a: { b: [1, { c: 2 }] }, [sym]: { d: 3 } });
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(Object.isFrozen(value[sym])).toBe(true);
    expect(() => {
      (value.a.b as unknown[]).push(3);
    }).toThrow(TypeError);
  });
});
