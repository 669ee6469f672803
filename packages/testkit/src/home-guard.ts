/**
 * Vitest globalSetup, wired for every package in `vitest.shared.ts`: the
 * whole run uses a temporary wave home (`WAVE_HOME`), so a test that forgets
 * to pass `home` (pool process ledgers, caches, sessions) never touches the
 * real `~/.wave`. Test workers are forked after setup and inherit it.
 *
 * Teardown fails the run when `~/.wave` did not exist before the run and
 * exists after it: something wrote to the real home despite the guard (a
 * hard-coded `os.homedir()`).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const home = mkdtempSync(join(tmpdir(), 'wave-test-home-'));
  const before = process.env.WAVE_HOME;
  const real = join(homedir(), '.wave');
  const existed = existsSync(real);
  process.env.WAVE_HOME = home;
  return () => {
    if (before === undefined) delete process.env.WAVE_HOME;
    else process.env.WAVE_HOME = before;
    rmSync(home, { recursive: true, force: true });
    if (!existed && existsSync(real)) {
      process.exitCode = 1;
      throw new Error(
        `${real} was created during the test run: a test wrote to the real wave home. Pass \`home\` (or WAVE_HOME) to what it creates.`,
      );
    }
  };
}
