/**
 * The root entry works with the lowest and the highest version of
 * `@modelcontextprotocol/sdk` in the declared peer range. Both are installed
 * by `pnpm install` (the lowest as the devDependency alias `sdk-lowest`, the
 * highest is the devDependency the suite runs with), so this test needs no
 * network. The root entry is bundled with the SDK and zod left external, a
 * directory gets a `node_modules` with links to one SDK version and its zod,
 * and a child node process connects to a fixture server through the pool,
 * calls a tool, aborts one call, times out another, and destroys the pool
 * with a call in flight. The range starts at 1.28.0: the first version that
 * clears its request timers when a connection closes (with 1.27.1 the child
 * below never exits: the call's timer holds it). The OAuth sign-in needs
 * 1.27 (`client/auth-extensions.js` from 1.24, `OAuthDiscoveryState` from
 * 1.27); 1.23 is the first whose types hold `ElicitRequestFormParams`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeSources } from '@wave/mcp-config';
import { findProcessesByMarker, fixtureServer, isPidAlive, killPids, makeTempDir } from '@wave/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const cacheDir = join(root, 'node_modules', '.cache', 'sdk-range');
const SDK = '@modelcontextprotocol/sdk';
/** The devDependency alias that installs the lowest SDK version of the peer range. */
const LOWEST = 'sdk-lowest';

interface Manifest {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function run(cmd: string, args: string[], opts: { cwd?: string; timeout: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { ...opts, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** The installed SDK package `pkg` (the SDK itself or its alias) and the zod it resolves. */
async function sdkPackage(pkg: string): Promise<{ sdk: string; zod: string; version: string }> {
  const sdk = await realpath(join(root, 'node_modules', pkg));
  const version = (JSON.parse(await readFile(join(sdk, 'package.json'), 'utf8')) as { version: string })
    .version;
  // pnpm puts a package's dependencies and peers next to it; else the pool's own zod.
  const sibling = join(sdk, '..', '..', 'zod');
  const zod = existsSync(sibling)
    ? await realpath(sibling)
    : await realpath(join(root, 'node_modules', 'zod'));
  return { sdk, zod, version };
}

/** `<cache>/<version>/node_modules` with links to that SDK and its zod. */
async function linked(pkg: string): Promise<{ dir: string; version: string }> {
  const { sdk, zod, version } = await sdkPackage(pkg);
  const dir = join(cacheDir, `${version}-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  await symlink(sdk, join(dir, 'node_modules', SDK), 'dir');
  await symlink(zod, join(dir, 'node_modules', 'zod'), 'dir');
  return { dir, version };
}

/** The root entry as one ESM file, the SDK and zod left for the version under test. */
async function bundle(outfile: string): Promise<void> {
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsup'))('esbuild') as {
    build(o: Record<string, unknown>): Promise<unknown>;
  };
  await esbuild.build({
    entryPoints: [join(root, 'src', 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@wave/source'],
    external: [SDK, `${SDK}/*`, 'zod', 'zod/*'],
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'silent',
  });
}

let manifest: Manifest;
let bundled: string | undefined;
let range: string;

beforeAll(async () => {
  manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest;
  range = manifest.peerDependencies[SDK] ?? '';
  await mkdir(cacheDir, { recursive: true });
  bundled = join(cacheDir, `pool-${process.pid}.mjs`);
  await bundle(bundled);
}, 60_000);

const temps: { cleanup(): Promise<void> }[] = [];
afterAll(async () => {
  for (const t of temps.splice(0)) await t.cleanup();
  if (bundled !== undefined) await rm(bundled, { force: true });
  for (const dir of linkedDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const linkedDirs: string[] = [];

async function check(pkg: string) {
  const { dir, version } = await linked(pkg);
  linkedDirs.push(dir);
  await copyFile(bundled ?? '', join(dir, 'pool.mjs'));
  await copyFile(join(root, 'test', 'fixtures', 'sdk-range-check.mjs'), join(dir, 'check.mjs'));
  const home = await makeTempDir('wave-sdk-range-');
  temps.push(home);
  const ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:sdk-${version}`;
  const { servers } = mergeSources([{ source: 'constructor', servers: { hello: fixtureServer('hello') } }], {
    workdir: home.path,
  });
  try {
    const out = await run(
      process.execPath,
      [join(dir, 'check.mjs'), JSON.stringify({ servers, home: home.path, ns })],
      { cwd: dir, timeout: 60_000 },
    );
    return { version, result: JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown> };
  } finally {
    const left = findProcessesByMarker(ns).filter(isPidAlive);
    killPids(left);
    expect(left).toEqual([]);
  }
}

describe('the root entry with the SDK versions of the declared peer range', () => {
  it('the peer range is a caret range from the lowest tested version that holds the version the tests run with', () => {
    expect(range).toMatch(/^\^1\.\d+\.\d+$/);
    const lowest = range.slice(1);
    expect(manifest.devDependencies[LOWEST]).toBe(`npm:${SDK}@${lowest}`);
    const order = (v: string) => v.split('.').reduce((n, part) => n * 1000 + Number(part), 0);
    const dev = manifest.devDependencies[SDK] ?? '';
    expect(dev.split('.')[0]).toBe('1');
    expect(order(dev)).toBeGreaterThanOrEqual(order(lowest));
  });

  it('lowest and highest version: connect, call, abort, time out, call again, destroy with a call in flight', async () => {
    const want = [range.slice(1), manifest.devDependencies[SDK]];
    for (const [i, pkg] of [LOWEST, SDK].entries()) {
      const { version, result } = await check(pkg);
      expect({ version, ...result }).toEqual({
        version: want[i],
        sdkVersion: want[i],
        status: 'connected',
        echo: 'hi',
        aborted: 'CALL_ABORTED',
        timedOut: 'CALL_TIMEOUT',
        after: 'still up',
        inFlightAtDestroy: 'CONNECTION_CLOSED',
        timersAfterDestroy: 0,
      });
    }
  }, 180_000);
});
