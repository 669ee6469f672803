import { describe, expect, test } from 'vitest';
import { cutText, failureText, successText, toScriptValue } from '../../src/exposure/exec/result';

const png = (data: string) => ({ type: 'image' as const, mimeType: 'image/png', data });

describe('toScriptValue', () => {
  test.each([
    ['a string', { content: 'hello' }, { ok: true, payload: '"hello"', images: [] }],
    [
      'text blocks are joined',
      {
        content: [
          { type: 'text' as const, text: 'a' },
          { type: 'text' as const, text: 'b' },
        ],
      },
      { ok: true, payload: '"a\\nb"', images: [] },
    ],
    [
      'empty text falls back to structured content',
      { content: [], structured: { n: 1 } },
      { ok: true, payload: '"{\\"n\\":1}"', images: [] },
    ],
    [
      'an error result rejects with its text',
      { content: ' went wrong ', isError: true },
      { ok: false, message: 'went wrong', images: [] },
    ],
    [
      'an error result with no text',
      { content: [], isError: true },
      { ok: false, message: 'the tool reported an error', images: [] },
    ],
  ])('%s', (_name, result, expected) => {
    expect(toScriptValue(result, 8)).toEqual(expected);
  });

  test('images become placeholders; those over the limit are marked omitted', () => {
    const v = toScriptValue({ content: [{ type: 'text', text: 'see' }, png('A'), png('B')] }, 1);
    expect(v).toEqual({
      ok: true,
      payload: JSON.stringify([
        { type: 'text', text: 'see' },
        { type: 'image', mimeType: 'image/png' },
        { type: 'image', mimeType: 'image/png', omitted: true },
      ]),
      images: [png('A')],
    });
  });
});

describe('texts', () => {
  test('cutText states the total length', () => {
    expect(cutText('abcdef', 3, 'result')).toBe('abc\n[result cut: showing the first 3 of 6 characters]');
    expect(cutText('abc', 3, 'result')).toBe('abc');
    expect(cutText('abcd', 3, 'result', 1000)).toBe(
      'abc\n[result cut: showing the first 3 of 1000 characters]',
    );
  });

  test('success and failure texts', () => {
    const base = {
      console: '',
      consoleCut: false,
      maxResultChars: 100,
      maxConsoleChars: 100,
      omittedImages: 0,
    };
    expect(successText({ ...base, value: undefined })).toBe(
      'The script finished without returning a value and printed nothing.',
    );
    expect(successText({ ...base, value: undefined, console: 'log' })).toBe('Console output:\nlog');
    expect(successText({ ...base, value: '', console: '' })).toBe('Result:\n');
    expect(failureText('boom', '', false, 100)).toBe('Exec failed: boom');
    expect(failureText('boom', 'a', true, 100)).toBe(
      'Exec failed: boom\n\nConsole output before the failure:\na\n[console output cut after 100 characters]',
    );
  });
});
