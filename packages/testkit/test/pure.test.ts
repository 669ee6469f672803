import { describe, expect, it } from 'vitest';
import { formatLeakReport, leakNamespace } from '../src/leak-check';
import { descendantsOf, environValue, markerMatches, parseProcStat } from '../src/procfs';

describe('parseProcStat', () => {
  it.each([
    ['123 (node) S 1 123 123 0 -1 4194560', { pid: 123, state: 'S', ppid: 1, pgid: 123, sid: 123 }],
    ['7 (a b) c)) Z 2 3 4 0', { pid: 7, state: 'Z', ppid: 2, pgid: 3, sid: 4 }],
    ['42 ((sd-pam)) R 41 40 39', { pid: 42, state: 'R', ppid: 41, pgid: 40, sid: 39 }],
    ['', undefined],
    ['no parens here', undefined],
    ['12 (x) S notanumber 1 1', undefined],
    ['12 (x)', undefined],
  ])('%j', (text, expected) => {
    expect(parseProcStat(text)).toEqual(expected);
  });
});

describe('environValue', () => {
  it.each([
    ['A=1\0WAVE_REAPER_ID=ns:1\0B=2\0', 'WAVE_REAPER_ID', 'ns:1'],
    ['WAVE_REAPER_ID=\0', 'WAVE_REAPER_ID', ''],
    ['XWAVE_REAPER_ID=no\0', 'WAVE_REAPER_ID', undefined],
    ['WAVE_REAPER_ID=a=b\0', 'WAVE_REAPER_ID', 'a=b'],
    ['', 'WAVE_REAPER_ID', undefined],
  ])('%j', (environ, name, expected) => {
    expect(environValue(environ, name)).toBe(expected);
  });
});

describe('markerMatches', () => {
  it.each([
    ['ns:abc', 'ns:abc', true],
    ['ns:abc', 'ns', true],
    ['ns:abc', 'ns:', true],
    ['ns-other:abc', 'ns', false],
    ['ns:abcdef', 'ns:abc', false],
    ['ns:abc:def', 'ns:abc', true],
    [undefined, 'ns', false],
    ['ns:abc', '', false],
    ['nsx', 'ns', false],
  ])('%j vs %j -> %j', (value, query, expected) => {
    expect(markerMatches(value, query)).toBe(expected);
  });
});

describe('descendantsOf', () => {
  const table = new Map([
    [2, 1],
    [3, 2],
    [4, 3],
    [5, 2],
    [6, 1],
    [7, 7], // self-parented garbage must not loop
  ]);
  it.each([
    [1, [2, 6, 3, 5, 4]],
    [2, [3, 5, 4]],
    [4, []],
    [99, []],
    [7, []],
  ])('of %i', (root, expected) => {
    expect(descendantsOf(root, table)).toEqual(expected);
  });
});

describe('leakNamespace', () => {
  it.each([
    ['/work/main/packages/testkit', 'ab12', 'test-testkit-ab12'],
    ['/x/my pkg:v2', 'ff', 'test-my_pkg_v2-ff'],
    ['/', '00', 'test-root-00'],
  ])('%j', (dir, random, expected) => {
    expect(leakNamespace(dir, random)).toBe(expected);
  });
});

describe('formatLeakReport', () => {
  it('lists pid, marker and command line, and says what to do', () => {
    const text = formatLeakReport('test-x-1', [
      { pid: 10, marker: 'test-x-1:a', cmdline: 'node hang.mjs' },
      { pid: 11, marker: 'test-x-1:b', cmdline: 'y'.repeat(400) },
    ]);
    expect(text).toContain('2 processes of test namespace test-x-1');
    expect(text).toContain('pid 10 [test-x-1:a]: node hang.mjs');
    expect(text).toContain(`pid 11 [test-x-1:b]: ${'y'.repeat(297)}...`);
    expect(text).toContain('killMarked');
  });
});
