/**
 * The root entry works with the lowest and the highest version of
 * `@modelcontextprotocol/sdk` in the declared peer range: each version is
 * installed from the registry (npm) into `node_modules/.cache/sdk-range/`,
 * the root entry is bundled with the SDK left external, and a child node
 * process connects to a fixture server through the pool, calls a tool,
 * aborts one call and times out another. The range starts at 1.27.1 (npm resolves no range to 1.27.0): the
 * first version with everything the OAuth sign-in uses
 * (`client/auth-extensions.js` from 1.24, `OAuthDiscoveryState` from 1.27);
 * 1.23 is the first whose types hold `ElicitRequestFormParams`.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeSources } from '@wave/mcp-config';
import { findProcessesByMarker, fixtureServer, isPidAlive, killPids, makeTempDir } from '@wave/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const cacheDir = join(root, 'node_modules', '.cache', 'sdk-range');
const SDK = '@modelcontextprotocol/sdk';
/** The zod the SDK gets (its peer); the pool's own zod range. */
const ZOD = '4.6.7';
const INSTALL_MS = 240_000;

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

/** Versions of the SDK that satisfy `range`, as the registry lists them (oldest first). */
async function versionsIn(range: string): Promise<string[]> {
  const out = await run('npm', ['view', `${SDK}@${range}`, 'version', '--json'], { timeout: 60_000 });
  const parsed = JSON.parse(out) as string | string[];
  return [parsed].flat();
}

/** `<cache>/<version>` with that SDK version (and zod) installed; reused when already there. */
async function installed(version: string): Promise<string> {
  const dir = join(cacheDir, version);
  const pkg = join(dir, 'node_modules', SDK, 'package.json');
  const have = await readFile(pkg, 'utf8').then(
    (t) => (JSON.parse(t) as { version: string }).version,
    () => undefined,
  );
  if (have !== version) {
    await mkdir(dir, { recursive: true });
    await run(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--loglevel=error',
        `${SDK}@${version}`,
        `zod@${ZOD}`,
      ],
      { timeout: INSTALL_MS },
    );
  }
  return dir;
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
});

async function check(version: string) {
  const dir = await installed(version);
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
    return { dir, result: JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown> };
  } finally {
    const left = findProcessesByMarker(ns).filter(isPidAlive);
    killPids(left);
    expect(left).toEqual([]);
  }
}

describe('the root entry with the SDK versions of the declared peer range', () => {
  it('the peer range is a caret range that holds the version the tests run with', async () => {
    expect(range).toMatch(/^\^1\.\d+\.\d+$/);
    const dev = manifest.devDependencies[SDK] ?? '';
    expect(await versionsIn(range)).toContain(dev);
  });

  it(
    'lowest and highest version: connect, call, abort, time out, call again',
    async () => {
      const versions = await versionsIn(range);
      const lowest = range.slice(1);
      expect(versions[0]).toBe(lowest);
      const tried = [...new Set([lowest, versions.at(-1) ?? lowest])];
      for (const version of tried) {
        const { dir, result } = await check(version);
        expect({ version, ...result }).toEqual({
          version,
          sdkEntry: expect.stringContaining(join(dir, 'node_modules')),
          status: 'connected',
          echo: 'hi',
          aborted: 'CALL_ABORTED',
          timedOut: 'CALL_TIMEOUT',
          after: 'still up',
        });
      }
    },
    2 * INSTALL_MS + 120_000,
  );
});
