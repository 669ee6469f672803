/**
 * Declared tool surface in gateway mode, in tokens (chars / 4), for 1, 3 and
 * 10 servers' worth of real tools, beside the raw size of declaring the same
 * tools one by one (name, description and unsanitized input schema; the
 * flat mode's sanitizer makes it somewhat smaller).
 */
import { gatewayDeclaration } from '../src/exposure/gateway';
import { loadCatalog } from './search-metrics';

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
