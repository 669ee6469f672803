/**
 * Declared tool surface in gateway mode, in tokens (chars / 4), for 1, 3 and
 * 10 servers' worth of real tools, beside the raw size of declaring the same
 * tools one by one (name, description and unsanitized input schema; the
 * flat mode's sanitizer makes it somewhat smaller).
 */
import { execExposure } from '../src/exposure/exec-exposure';
import { flatExposure } from '../src/exposure/flat-exposure';
import { gatewayDeclaration } from '../src/exposure/gateway';
import { gatewayExposure } from '../src/exposure/gateway-exposure';
import type { Exposure, LiveTool } from '../src/exposure/types';
import { loadCatalog } from './search-metrics';

/** Tokens (characters / 4) of the tools declared to the model for one set of servers. */
export interface SurfaceTokens {
  servers: string[];
  tools: number;
  /** Every tool one by one as the server lists it (name, description, input schema): a raw SDK host. */
  raw: number;
  /** The agent's flat mode (sanitized schemas). */
  flat: number;
  /** The agent's Exec mode (one tool whose description is the catalog). */
  exec: number;
  /** The agent's gateway mode (one constant tool). */
  gateway: number;
}

/** Servers of the real catalog for the 1 / 3 / 10 server sets. */
export const SURFACE_SETS: readonly (readonly string[])[] = [
  ['github'],
  ['github', 'filesystem', 'memory'],
  [
    'github',
    'filesystem',
    'memory',
    'slack',
    'notion',
    'stripe',
    'supabase',
    'playwright',
    'sentry',
    'gitlab',
  ],
];

/** Declared tool surface of each mode, from the agent's own exposures, for each set of servers. */
export function toolSurfaceTokens(sets: readonly (readonly string[])[] = SURFACE_SETS): SurfaceTokens[] {
  const catalog = loadCatalog();
  const tokens = (x: unknown): number => Math.ceil(JSON.stringify(x).length / 4);
  return sets.map((servers) => {
    const tools: LiveTool[] = catalog
      .filter((t) => servers.includes(t.server))
      .map((t) => ({ ...t, fullName: `mcp__${t.server}__${t.name}` }));
    const declared = (exposure: Exposure) =>
      tokens(exposure.plan({ tools, builtins: [], servers: [] }).declarations);
    return {
      servers: [...servers],
      tools: tools.length,
      raw: tokens(
        tools.map((t) => ({ name: t.fullName, description: t.description, inputSchema: t.inputSchema })),
      ),
      flat: declared(flatExposure()),
      exec: declared(execExposure()),
      gateway: declared(gatewayExposure()),
    };
  });
}

export default function run(): void {
  const catalog = loadCatalog();
  const servers = [...new Set(catalog.map((t) => t.server))];
  const gatewayChars = JSON.stringify(gatewayDeclaration).length;
  const tokens = (chars: number): string => `${Math.round(chars / 4)}`.padStart(6);
  console.log('servers  tools  gateway tokens  one-by-one tokens (raw)');
  for (const count of [1, 3, 10]) {
    const chosen = new Set(servers.slice(0, count));
    const tools = catalog.filter((t) => chosen.has(t.server));
    const flatChars = tools.reduce(
      (sum, t) =>
        sum +
        JSON.stringify({
          name: `mcp__${t.server}__${t.name}`,
          description: t.description ?? '',
          inputSchema: t.inputSchema ?? {},
        }).length,
      0,
    );
    console.log(
      `${String(count).padStart(7)}  ${String(tools.length).padStart(5)}  ${tokens(gatewayChars).padStart(14)}  ${tokens(flatChars).padStart(23)}`,
    );
  }
}
