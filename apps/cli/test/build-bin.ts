/**
 * Vitest globalSetup: builds the `wave` binary once per run into a fresh
 * folder under the app's node_modules/.cache (never into dist/, which a
 * parallel `turbo run build` may be writing; inside the app so that its npm
 * dependencies resolve) and hands its path to the tests as `inject('waveBin')`.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    waveBin: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const appDir = dirname(dirname(fileURLToPath(import.meta.url)));
  const cache = join(appDir, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  const out = await mkdtemp(join(cache, 'wave-bin-'));
  const tsup = createRequire(join(appDir, 'package.json')).resolve('tsup/dist/cli-default.js');
  const r = spawnSync(process.execPath, [tsup, '--out-dir', out, '--no-sourcemap'], {
    cwd: appDir,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (r.status !== 0) throw new Error(`building the wave binary failed:\n${r.stdout}\n${r.stderr}`);
  project.provide('waveBin', join(out, 'bin.js'));
  return async () => {
    await rm(out, { recursive: true, force: true });
  };
}
