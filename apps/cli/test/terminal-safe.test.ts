import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { oneLine, terminalSafe } from '../src/io';

const c = pc.createColors(true);

describe('terminalSafe', () => {
  it('keeps the colour sequences picocolors writes when colour is on', () => {
    const styled = [
      c.bold('b'),
      c.dim('d'),
      c.italic('i'),
      c.underline('u'),
      c.red('r'),
      c.green('g'),
      c.yellow('y'),
      c.cyan('c'),
      c.gray('g'),
      c.bgRed('x'),
      c.redBright('x'),
      c.bgBlueBright('x'),
    ].join(' ');
    expect(terminalSafe(`${styled}\n`, true)).toBe(`${styled}\n`);
  });

  it('escapes what drives a terminal: OSC (title, clipboard), cursor moves, clears, hidden text, CR, C1, bidi', () => {
    const hostile = [
      '\u001b]0;title\u0007',
      '\u001b]52;c;ZXZpbA==\u0007',
      '\u001b[2J',
      '\u001b[1A',
      '\u001b[8m',
      '\u001b[5m',
      'a\rb',
      '\u009b31m',
      '\u202eevil',
    ];
    for (const h of hostile) {
      for (const color of [true, false]) {
        const out = terminalSafe(h, color);
        expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
      }
    }
    expect(terminalSafe('\u001b[2J')).toBe('\\u001b[2J');
    expect(terminalSafe('a\n\tb')).toBe('a\n\tb');
  });

  it('escapes every colour sequence when colour is off, and newlines in one-line fields', () => {
    expect(terminalSafe(c.red('r'))).toBe('\\u001b[31mr\\u001b[39m');
    expect(oneLine('a\nb\tc')).toBe('a\\u000ab\\u0009c');
  });
});
