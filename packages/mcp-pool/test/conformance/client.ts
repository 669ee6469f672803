/**
 * The MCP conformance suite's client under test: `@wave/mcp-pool` with one
 * server configured by URL. The suite runs `<this command> <server url>` with
 * the scenario name in `MCP_CONFORMANCE_SCENARIO`; exit code 0 = the client
 * did its part (the suite's checks decide the verdict).
 */
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '../../src/pool';

/** The tool each scenario's server expects a call of, with its arguments. */
const CALLS: Record<string, { tool: string; args: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: 'add_numbers', args: { a: 5, b: 3 } },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', args: {} },
  'sse-retry': { tool: 'test_reconnection', args: {} },
};

async function main(): Promise<number> {
  const url = process.argv[2];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!url) {
    console.error('usage: client <server url>');
    return 2;
  }
  if (!(scenario in CALLS)) {
    console.error(`unknown scenario "${scenario}"`);
    return 2;
  }
  const { servers, issues } = mergeSources(
    [{ source: 'constructor', servers: { conformance: { type: 'http', url } } }],
    { workdir: process.cwd() },
  );
  if (issues.length > 0) console.error(JSON.stringify(issues));
  const pool = McpPool.create({
    servers,
    timeouts: { connectMs: 20_000, callMs: 20_000 },
    // Accept every form as it is: the pool fills in the schema's defaults (SEP-1034).
    onElicitation: () => ({ action: 'accept', content: {} }),
  });
  try {
    const record = await pool.connect('conformance');
    if (record.status !== 'connected') {
      console.error(`not connected: ${record.error?.message ?? record.status}`);
      return 1;
    }
    console.log(`connected; tools: ${record.tools.map((t) => t.name).join(', ') || '(none)'}`);
    const call = CALLS[scenario];
    if (call) {
      const result = await pool.callTool('conformance', call.tool, call.args);
      console.log(JSON.stringify(result));
      if (result.isError) return 1;
    }
    return 0;
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await pool.destroy();
  }
}

process.exitCode = await main();
