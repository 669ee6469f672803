import { describe, expect, it } from 'vitest';
import { expandVars, hasReferences, referencedVariables } from '../src/expand';

describe('expandVars', () => {
  it.each([
    // [label, text, env, value, missing, invalid]
    ['plain text', 'plain', {}, 'plain', [], []],
    ['${VAR} set', '${A}', { A: 'x' }, 'x', [], []],
    ['${VAR} set to empty is a value', '[${A}]', { A: '' }, '[]', [], []],
    ['${VAR} unset is missing and kept', '${A}', {}, '${A}', ['A'], []],
    ['${VAR} undefined in env is unset', '${A}', { A: undefined }, '${A}', ['A'], []],
    ['${VAR:-default} unset', '${A:-d}', {}, 'd', [], []],
    ['${VAR:-default} empty uses default (shell :-)', '${A:-d}', { A: '' }, 'd', [], []],
    ['${VAR:-default} set', '${A:-d}', { A: 'x' }, 'x', [], []],
    ['${VAR:-} empty default', '<${A:-}>', {}, '<>', [], []],
    ['default keeps later :-', '${A:-a:-b}', {}, 'a:-b', [], []],
    ['default with spaces and slashes', '${A:-/usr/local bin}', {}, '/usr/local bin', [], []],
    ['default is not expanded again (no nesting)', '${A:-${B}}', { B: 'b' }, '${B}', [], []],
    ['several references', 'pre-${A}-mid-${B:-2}-post', { A: '1' }, 'pre-1-mid-2-post', [], []],
    ['$VAR without braces is literal', '$A and $$', { A: 'x' }, '$A and $$', [], []],
    ['$${VAR} keeps the extra $', '$${A}', { A: 'x' }, '$x', [], []],
    ['missing reported once', '${A}${A}${B}', {}, '${A}${A}${B}', ['A', 'B'], []],
    ['value is not expanded again', '${A}', { A: '${B}', B: 'no' }, '${B}', [], []],
    ['digits first is not a name', '${1A}', {}, '${1A}', [], ['${1A}']],
    ['empty reference', '${}', {}, '${}', [], ['${}']],
    ['space in name', '${A B}', { 'A B': 'x' }, '${A B}', [], ['${A B}']],
    ['unclosed reference is literal', '${A', { A: 'x' }, '${A', [], []],
    ['prototype names are not inherited', '${constructor}', {}, '${constructor}', ['constructor'], []],
    ['prototype name with default', '${toString:-d}', {}, 'd', [], []],
    ['underscore names', '${_A_1}', { _A_1: 'v' }, 'v', [], []],
    ['unicode around', 'é${A}ü', { A: 'ß' }, 'éßü', [], []],
    ['case-sensitive', '${a}', { A: 'x' }, '${a}', ['a'], []],
  ])('%s', (_label, text, env, value, missing, invalid) => {
    expect(expandVars(text, env)).toEqual({ value, missing, invalid });
  });

  it.each([
    [
      'only given names replaced',
      '${WAVE_PLUGIN_ROOT}/x ${HOME}',
      { WAVE_PLUGIN_ROOT: '/p' },
      '/p/x ${HOME}',
    ],
    ['default of a given name ignored when set', '${WAVE_PLUGIN_ROOT:-/d}', { WAVE_PLUGIN_ROOT: '/p' }, '/p'],
    ['other default untouched', '${X:-d}', { WAVE_PLUGIN_ROOT: '/p' }, '${X:-d}'],
    ['invalid untouched, not reported', '${}', {}, '${}'],
  ])('partial: %s', (_label, text, env, value) => {
    expect(expandVars(text, env, { partial: true })).toEqual({ value, missing: [], invalid: [] });
  });

  it('finds references', () => {
    expect(hasReferences('a ${B} c')).toBe(true);
    expect(hasReferences('a $B c')).toBe(false);
    expect(referencedVariables('${A} ${B:-x} ${A} ${1}')).toEqual(['A', 'B']);
  });
});
