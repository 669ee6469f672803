import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, type TempDir } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The official MCP conformance suite's client scenarios, each driven through
 * `@wave/mcp-pool` (test/conformance/client.ts) with the scenario's server
 * configured by URL. The suite is pinned to 0.1.13: the newest release that
 * loads on Node 20 (0.1.14+ import `fs.globSync`, Node 22+).
 *
 * Auth scenarios run through `pool.authorize()` with a fake browser that
 * follows the authorization redirect to the pool's loopback listener: every
 * scenario of the suite's `core` set (2025-11-25) and of its `backcompat`
 * set (2025-03-26), and its `extensions` set (SEP-1046 client credentials,
 * machine to machine: `oauth.grant: "client_credentials"`, no browser).
 */
const require = createRequire(import.meta.url);
const SUITE = require
  .resolve('@modelcontextprotocol/conformance/package.json')
  .replace(/package\.json$/, 'dist/index.js');
const TSX = require.resolve('tsx/cli');
const CLIENT = fileURLToPath(new URL('./conformance/client.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** Upper bound of one scenario run (the suite's own client timeout is 30 s). */
const RUN_MS = 90_000;

const temps: TempDir[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.cleanup();
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SUITE, ...args],
      { cwd: PACKAGE_DIR, timeout: RUN_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Every client scenario the suite lists. */
async function listClientScenarios(): Promise<string[]> {
  const { code, stdout } = await run(['list']);
  expect(code).toBe(0);
  const section = stdout.slice(stdout.indexOf('Client scenarios'));
  return [...section.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]!);
}

/** Client scenarios the suite lists, without the auth ones. */
async function clientScenarios(): Promise<string[]> {
  return (await listClientScenarios()).filter((s) => !s.startsWith('auth/'));
}

const SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry'];

/** The suite's `core` auth scenarios (spec 2025-11-25), its `backcompat` ones (2025-03-26) and its `extensions`. */
const AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/resource-mismatch',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  // extensions: SEP-1046 client credentials (client_secret_basic and private_key_jwt)
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
];

describe('MCP conformance suite: client scenarios through the pool', () => {
  it('every non-auth client scenario of the pinned suite is covered here', async () => {
    expect(await clientScenarios()).toEqual(SCENARIOS);
  });

  it('every auth client scenario of the pinned suite is run here', async () => {
    const auth = (await listClientScenarios()).filter((s) => s.startsWith('auth/'));
    expect(auth.sort()).toEqual([...AUTH_SCENARIOS].sort());
  });

  it.each([...SCENARIOS, ...AUTH_SCENARIOS])(
    '%s passes',
    async (scenario) => {
      const out = await makeTempDir('wave-conformance-');
      temps.push(out);
      const command = `${process.execPath} ${TSX} --conditions=@wave/source ${CLIENT}`;
      const res = await run(['client', '--command', command, '--scenario', scenario, '-o', out.path]);
      // Results go to <out>/<scenario>-<time>/ (auth scenarios: <out>/auth/<name>-<time>/).
      const base = scenario.startsWith('auth/') ? join(out.path, 'auth') : out.path;
      const [leaf] = existsSync(base) ? readdirSync(base) : [];
      const dir = leaf === undefined ? undefined : join(base, leaf);
      expect(dir, `no results written:\n${res.stdout}\n${res.stderr}`).toBeDefined();
      const checks = JSON.parse(readFileSync(join(dir!, 'checks.json'), 'utf8')) as {
        id: string;
        status: string;
        errorMessage?: string;
      }[];
      // A WARNING passes in the suite's terms (e.g. a resumption a little late on a loaded machine).
      const bad = checks.filter((c) => c.status === 'FAILURE');
      const clientErr = readFileSync(join(dir!, 'stderr.txt'), 'utf8');
      expect(bad, `client stderr:\n${clientErr}`).toEqual([]);
      expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
      expect(res.code, res.stdout).toBe(0);
    },
    RUN_MS + 30_000,
  );
});
