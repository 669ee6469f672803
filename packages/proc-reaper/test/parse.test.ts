import { describe, expect, it } from 'vitest';
import { parseCimOutput, parseEnvironMarker, parseProcStat, parsePsOutput } from '../src/parse';

const stat = (comm: string, rest = 'S 10 20 30 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 34621 3133440 411') =>
  `123 (${comm}) ${rest}`;

describe('parseProcStat', () => {
  it.each([
    ['plain name', stat('cat'), { pid: 123, ppid: 10, pgid: 20, sid: 30, state: 'S', startTime: 34621 }],
    [
      'name with spaces',
      stat('my prog'),
      { pid: 123, ppid: 10, pgid: 20, sid: 30, state: 'S', startTime: 34621 },
    ],
    ['name with ") " inside', stat('a) Z 1 1 1 (b'), { pid: 123, ppid: 10, pgid: 20, startTime: 34621 }],
    [
      'zombie',
      stat('sh', 'Z 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999'),
      { state: 'Z', ppid: 1, startTime: 999 },
    ],
    [
      'real line',
      '6693 (cat) R 6687 6687 3193 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 34621 3133440 411 184',
      {
        pid: 6693,
        ppid: 6687,
        pgid: 6687,
        sid: 3193,
        state: 'R',
        startTime: 34621,
      },
    ],
  ])('%s', (_name, text, expected) => {
    expect(parseProcStat(text)).toMatchObject(expected);
  });

  it.each([[''], ['garbage'], ['123 (x'], ['abc (x) S 1 2 3'], ['5 (x) S 1 2 3']])('rejects %j', (text) => {
    expect(parseProcStat(text)).toBeUndefined();
  });
});

describe('parseEnvironMarker', () => {
  const env = (...vars: string[]) => Buffer.from(`${vars.join('\0')}\0`);
  it.each([
    ['first variable', env('WAVE_REAPER_ID=wave:a', 'PATH=/bin'), 'wave:a'],
    ['middle variable', env('PATH=/bin', 'WAVE_REAPER_ID=ns:b', 'HOME=/'), 'ns:b'],
    ['last, no trailing NUL', Buffer.from('A=1\0WAVE_REAPER_ID=x:y'), 'x:y'],
    ['only a suffix of another name', env('MY_WAVE_REAPER_ID=nope', 'A=1'), undefined],
    ['suffix then the real one', env('MY_WAVE_REAPER_ID=nope', 'WAVE_REAPER_ID=yes'), 'yes'],
    ['absent', env('PATH=/bin'), undefined],
    ['empty environ', Buffer.alloc(0), undefined],
  ])('%s', (_name, buf, expected) => {
    expect(parseEnvironMarker(buf)).toBe(expected);
  });
});

describe('parsePsOutput (macOS ps -A -o pid=,ppid=,pgid=,stat=,lstart=)', () => {
  it('parses rows, state letter and start time; skips junk lines', () => {
    const text = [
      '    1     0     1 Ss   Mon Nov 30 12:35:00 2025',
      '  412     1   412 S    Tue Dec  1 08:00:59 2025',
      '  500   412   412 Z+   Tue Dec  1 08:01:00 2025',
      'garbage line',
      '',
    ].join('\n');
    expect(parsePsOutput(text)).toEqual([
      { pid: 1, ppid: 0, pgid: 1, state: 'S', startTime: Date.UTC(2025, 10, 30, 12, 35, 0) },
      { pid: 412, ppid: 1, pgid: 412, state: 'S', startTime: Date.UTC(2025, 11, 1, 8, 0, 59) },
      { pid: 500, ppid: 412, pgid: 412, state: 'Z', startTime: Date.UTC(2025, 11, 1, 8, 1, 0) },
    ]);
  });

  it('keeps a row whose start time does not parse, without a start time', () => {
    expect(parsePsOutput('7 1 7 R   ???')).toEqual([{ pid: 7, ppid: 1, pgid: 7, state: 'R' }]);
  });
});

describe('parseCimOutput (Windows)', () => {
  it('turns FILETIME into epoch ms without losing precision; 0 means unknown', () => {
    // 2025-01-01T00:00:00.123Z as FILETIME (100 ns units since 1601).
    const ms = Date.UTC(2025, 0, 1, 0, 0, 0, 123);
    const ft = (BigInt(ms) + 11_644_473_600_000n) * 10_000n + 4567n;
    const text = `0 0 0\r\n4 0 0\r\n1234 1000 ${ft}\r\n\r\nnot a row\r\n`;
    expect(parseCimOutput(text)).toEqual([
      { pid: 0, ppid: 0 },
      { pid: 4, ppid: 0 },
      { pid: 1234, ppid: 1000, startTime: ms },
    ]);
  });
});
