/**
 * The MCP conformance suite's client under test: `@wave/mcp-pool` with one
 * server configured by URL. The suite runs `<this command> <server url>` with
 * the scenario name in `MCP_CONFORMANCE_SCENARIO` (and, for some auth
 * scenarios, pre-registered client credentials in `MCP_CONFORMANCE_CONTEXT`);
 * exit code 0 = the client did its part (the suite's checks decide the verdict).
 *
 * Auth scenarios (`auth/...`): a server that is `needs-auth` is signed in to
 * with `pool.authorize()`, whose `openUrl` behaves like a browser: it GETs the
 * authorization URL without following redirects, then GETs the `Location`
 * (the pool's loopback callback). A call that ends in `needs-auth` (step-up,
 * 403 insufficient_scope) signs in again, at most {@link MAX_SIGN_INS} times.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '../../src/pool';

/** The tool each scenario's server expects a call of, with its arguments. */
const CALLS: Record<string, { tool: string; args: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: 'add_numbers', args: { a: 5, b: 3 } },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', args: {} },
  'sse-retry': { tool: 'test_reconnection', args: {} },
};
/** Every auth scenario's server has this tool. */
const AUTH_CALL = { tool: 'test-tool', args: {} };
/** Sign-ins per run: the first, and the step-ups after it. */
const MAX_SIGN_INS = 3;
/** The client ID metadata document URL the suite's CIMD scenario expects. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** A browser that follows the authorization redirect to the loopback callback. */
async function browse(url: string): Promise<void> {
  const first = await fetch(url, { redirect: 'manual' });
  await first.body?.cancel();
  const location = first.headers.get('location');
  if (!location) throw new Error(`the authorization endpoint answered ${first.status} without a redirect`);
  const second = await fetch(new URL(location, url), { redirect: 'manual' });
  await second.body?.cancel();
}

async function main(): Promise<number> {
  const url = process.argv[2];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!url) {
    console.error('usage: client <server url>');
    return 2;
  }
  const isAuth = scenario.startsWith('auth/');
  if (!isAuth && !(scenario in CALLS)) {
    console.error(`unknown scenario "${scenario}"`);
    return 2;
  }
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    client_id?: string;
    client_secret?: string;
    private_key_pem?: string;
    signing_algorithm?: string;
  };
  const oauth: Record<string, string> = {};
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  if (context.private_key_pem) oauth.privateKey = context.private_key_pem;
  if (context.signing_algorithm) oauth.signingAlgorithm = context.signing_algorithm;
  // Machine-to-machine scenarios (SEP-1046): no browser, the client's own credentials.
  if (scenario.startsWith('auth/client-credentials')) oauth.grant = 'client_credentials';
  const entry = { type: 'http', url, ...(Object.keys(oauth).length > 0 ? { oauth } : {}) };
  const { servers, issues } = mergeSources([{ source: 'constructor', servers: { conformance: entry } }], {
    workdir: process.cwd(),
  });
  const home = await mkdtemp(join(tmpdir(), 'wave-conformance-home-'));
  if (issues.length > 0) console.error(JSON.stringify(issues));
  const pool = McpPool.create({
    servers,
    timeouts: { connectMs: 20_000, callMs: 20_000 },
    // Accept every form as it is: the pool fills in the schema's defaults (SEP-1034).
    onElicitation: () => ({ action: 'accept', content: {} }),
    home,
    oauth: { clientMetadataUrl: CLIENT_METADATA_URL, authorizeTimeoutMs: 20_000 },
  });
  let signIns = 0;
  const signIn = async () => {
    signIns += 1;
    console.log(`sign-in ${signIns}`);
    return pool.authorize('conformance', { openUrl: browse });
  };
  try {
    let record = await pool.connect('conformance');
    while (record.status === 'needs-auth' && signIns < MAX_SIGN_INS) record = await signIn();
    if (record.status !== 'connected') {
      console.error(`not connected: ${record.error?.message ?? record.status}`);
      return 1;
    }
    console.log(`connected; tools: ${record.tools.map((t) => t.name).join(', ') || '(none)'}`);
    const call = isAuth ? AUTH_CALL : CALLS[scenario];
    if (call) {
      let result: Awaited<ReturnType<typeof pool.callTool>>;
      for (;;) {
        try {
          result = await pool.callTool('conformance', call.tool, call.args);
          break;
        } catch (err) {
          if (pool.get('conformance')?.status !== 'needs-auth' || signIns >= MAX_SIGN_INS) throw err;
          await signIn();
        }
      }
      console.log(JSON.stringify(result));
      if (result.isError) return 1;
    }
    return 0;
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await pool.destroy();
    await rm(home, { recursive: true, force: true });
  }
}

process.exitCode = await main();
