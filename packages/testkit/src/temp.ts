import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory and the way to remove it. */
export interface TempDir {
  /** Absolute path of the directory. */
  path: string;
  /** Removes the directory and everything in it; idempotent. */
  cleanup(): Promise<void>;
}

/** A temporary wave home and workdir under one root, for tests that must not touch `~`. */
export interface TempHome {
  /** Directory holding both `home` and `workdir`. */
  root: string;
  /** Use as the `home` option / `WAVE_HOME`. */
  home: string;
  /** Use as the project `workdir`. */
  workdir: string;
  /** `{ WAVE_HOME: home }`, to spread into a child's environment. */
  env: { WAVE_HOME: string };
  /** Removes `root` and everything in it; idempotent. */
  cleanup(): Promise<void>;
}

const remover = (path: string) => () => rm(path, { recursive: true, force: true, maxRetries: 3 });

/**
 * Creates a fresh directory under the OS temp dir.
 * @param prefix start of the directory name. @default 'wave-test-'
 */
export async function makeTempDir(prefix = 'wave-test-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: remover(path) };
}

/** Creates `<tmp>/wave-home-XXXX/{home,work}`: an empty wave home and an empty workdir. */
export async function makeTempHome(): Promise<TempHome> {
  const root = await mkdtemp(join(tmpdir(), 'wave-home-'));
  const home = join(root, 'home');
  const workdir = join(root, 'work');
  await Promise.all([mkdir(home), mkdir(workdir)]);
  return { root, home, workdir, env: { WAVE_HOME: home }, cleanup: remover(root) };
}
