import { spawn, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { inject, onTestFinished } from 'vitest';

export interface WaveRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Sandbox {
  root: string;
  home: string;
  workdir: string;
  /** Run the built `wave` binary here, with this sandbox's WAVE_HOME and HOME. */
  wave(
    args: string[],
    opts?: { env?: Record<string, string>; cwd?: string; input?: string },
  ): Promise<WaveRun>;
}

/** A temp wave home + project folder, removed when the test ends. */
export async function sandbox(): Promise<Sandbox> {
  const root = tempDir('wave-cli-');
  const home = join(root, 'home');
  const workdir = join(root, 'project');
  await Promise.all([mkdir(home), mkdir(workdir), mkdir(join(root, 'user-home'))]);
  const bin = inject('waveBin');
  return {
    root,
    home,
    workdir,
    wave(args, opts = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [bin, ...args], {
          cwd: opts.cwd ?? workdir,
          env: {
            PATH: process.env.PATH ?? '',
            WAVE_REAPER_NAMESPACE: process.env.WAVE_REAPER_NAMESPACE ?? '',
            HOME: join(root, 'user-home'),
            WAVE_HOME: home,
            NO_COLOR: '1',
            ...opts.env,
          },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
        });
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr += d;
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(opts.input ?? '');
      });
    },
  };
}

/** A command running in a tmux pseudo-terminal (120x40), for prompts and Ctrl-C. */
export interface Terminal {
  /** Wait (up to `timeoutMs`) until the screen contains `text`; returns the screen. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  /** tmux key names: 'y', 'Enter', 'C-c', ... */
  keys(...keys: string[]): void;
  screen(): string;
  /** The screen with its colours and text attributes, as escape sequences. */
  coloredScreen(): string;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Start the built `wave` binary with `args` in a fresh tmux server (own
 * socket), in this sandbox. The pane prints `EXIT=<code>` when it ends.
 * The tmux server is killed when the test ends.
 */
export function terminal(s: Sandbox, args: string[], env: Record<string, string> = {}): Terminal {
  const socket = `wave-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const vars = {
    PATH: process.env.PATH ?? '',
    WAVE_REAPER_NAMESPACE: process.env.WAVE_REAPER_NAMESPACE ?? '',
    HOME: join(s.root, 'user-home'),
    WAVE_HOME: s.home,
    TERM: 'xterm-256color',
    ...env,
  };
  const command = [
    'cd',
    shellQuote(s.workdir),
    '&&',
    'env',
    ...Object.entries(vars).map(([k, v]) => shellQuote(`${k}=${v}`)),
    shellQuote(process.execPath),
    shellQuote(inject('waveBin')),
    ...args.map(shellQuote),
    '; echo EXIT=$?; sleep 600',
  ].join(' ');
  const tmux = (...a: string[]) => {
    const r = spawnSync('tmux', ['-L', socket, ...a], { encoding: 'utf8', timeout: 15_000 });
    if (r.status !== 0) throw new Error(`tmux ${a[0]} failed: ${r.stderr}`);
    return r.stdout;
  };
  tmux('new-session', '-d', '-x', '120', '-y', '40', command);
  onTestFinished(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server'], { timeout: 15_000 });
  });
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200');
  return {
    screen,
    coloredScreen: () => tmux('capture-pane', '-p', '-J', '-e', '-S', '-200'),
    keys: (...keys) => void tmux('send-keys', ...keys),
    async waitFor(text, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const out = screen();
        if (typeof text === 'string' ? out.includes(text) : text.test(out)) return out;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(text)}; screen:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
