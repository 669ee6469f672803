/** Where a command reads and writes: the real process, or a test's capture. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stdout and stdin are terminals: prompts and spinners are allowed. */
  interactive: boolean;
  /** Colour allowed (a TTY, no NO_COLOR, not --json). */
  color: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * Characters a terminal acts on: C0 controls but newline and tab, DEL, C1
 * controls, zero-width and bidirectional formatting characters.
 */
const CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;
/**
 * The colour sequences picocolors writes (styles, foreground and background
 * colours, their resets); never "hidden" (8) or blink (5, 6).
 */
const OWN_SGR = /\u001b\[(?:0|1|2|3|4|7|9|2[2-9]|3[0-9]|4[0-9]|9[0-7]|10[0-7])m/g;

function escapeControl(ch: string): string {
  return `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/**
 * Text safe to write to a terminal. Pure. Server names, URLs, arguments,
 * tool descriptions and stderr lines come from files and servers wave does
 * not control: every control character in them (escape sequences that set
 * the window title, clear the screen, move the cursor or hide text; carriage
 * returns; bidirectional overrides) is shown as a visible `\u001b`-style
 * escape instead of acting. Newlines and tabs are kept; with `color`, the
 * colour sequences wave writes itself are kept too. JSON output stays valid
 * JSON (such characters only occur inside strings, where `\u001b` is the
 * same character).
 */
export function terminalSafe(text: string, color = false): string {
  if (!color) return text.replace(CONTROL, escapeControl);
  const own = text.match(OWN_SGR) ?? [];
  const parts = text.split(OWN_SGR);
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    out += (parts[i] ?? '').replace(CONTROL, escapeControl);
    if (i < own.length) out += own[i];
  }
  return out;
}

/** One line of hostile text (a name, a URL, an argument): newlines and tabs are escaped too. Pure. */
export function oneLine(text: string): string {
  return terminalSafe(text).replace(/[\n\t]/g, escapeControl);
}

export function processIo(): Io {
  const env = process.env;
  const interactive = Boolean(process.stdout.isTTY && process.stdin.isTTY);
  // no-color.org: NO_COLOR set to a non-empty value turns colour off (an empty one does not).
  const color = Boolean(process.stdout.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
  // `wave ... | head`: once the reader is gone, further output is dropped, and the command still
  // finishes normally (closing what it started) instead of dying on an unhandled EPIPE.
  const gone = { out: false, err: false };
  const onError = (which: 'out' | 'err') => (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    gone[which] = true;
  };
  process.stdout.on('error', onError('out'));
  process.stderr.on('error', onError('err'));
  return {
    out: (t) => {
      if (!gone.out) process.stdout.write(terminalSafe(t, color));
    },
    err: (t) => {
      if (!gone.err) process.stderr.write(terminalSafe(t, color));
    },
    interactive,
    color,
    env,
    cwd: process.cwd(),
  };
}

/** A failure the user can act on: printed as one message, exit code 1 (or 2 for usage). */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** The "Examples:" block that ends a command's `--help`. Pure. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
