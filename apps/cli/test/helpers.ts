import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const root = await mkdtemp(join(tmpdir(), 'wave-cli-'));
  const home = join(root, 'home');
  const workdir = join(root, 'project');
  await Promise.all([mkdir(home), mkdir(workdir), mkdir(join(root, 'user-home'))]);
  onTestFinished(() => rm(root, { recursive: true, force: true, maxRetries: 3 }));
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
