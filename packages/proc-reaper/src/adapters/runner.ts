import { execFile } from 'node:child_process';
import type { CommandRunner } from '../types';

/**
 * The real {@link CommandRunner}: `execFile` with no shell, no window on
 * Windows, a timeout, `LC_ALL=C` and `TZ=UTC` (stable `ps` output: `lstart`
 * is local wall-clock time, so without a fixed zone two processes with
 * different `TZ` would see different start times for the same process) and
 * a 64 MiB output cap.
 * A failure to start or a non-zero exit resolves with the code; it never rejects.
 */
export const execRunner: CommandRunner = (file, args, opts = {}) =>
  new Promise((resolve) => {
    execFile(
      file,
      [...args],
      {
        windowsHide: true,
        timeout: opts.timeoutMs ?? 30_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ stdout: String(stdout), stderr: String(stderr), code });
      },
    );
  });
