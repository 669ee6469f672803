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

export function processIo(): Io {
  const env = process.env;
  const interactive = Boolean(process.stdout.isTTY && process.stdin.isTTY);
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    interactive,
    color: Boolean(process.stdout.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb',
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
