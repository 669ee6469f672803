/**
 * Figures for @wave/mcp-config (printed, never asserted):
 * parse, merge, fingerprint, load from disk, and edit round trips.
 * Run: pnpm --filter @wave/mcp-config bench
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addServer, addServerToText, removeServer } from '../src/edit';
import { fingerprint } from '../src/fingerprint';
import { loadMcpConfig } from '../src/load';
import { mergeSources } from '../src/merge';
import { parseConfigText } from '../src/parse';
import type { SourceLayer } from '../src/types';

function servers(prefix: string, n: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    out[`${prefix}${i}`] =
      i % 2 === 0
        ? {
            command: 'npx',
            args: ['-y', `@scope/server-${i}`, '${HOME}/data'],
            env: { TOKEN: '${TOKEN:-none}' },
          }
        : {
            type: 'http',
            url: `https://host${i}.example/mcp`,
            headers: { Authorization: 'Bearer ${TOKEN}' },
          };
  }
  return out;
}

async function measure(label: string, runs: number, fn: () => unknown | Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(20, runs); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
  console.log(
    `${label.padEnd(58)} median ${(q(0.5) * 1000).toFixed(1).padStart(8)} µs   p95 ${(q(0.95) * 1000).toFixed(1).padStart(8)} µs   (${runs} runs)`,
  );
}

const env = { HOME: '/home/me', TOKEN: 't' };
const projectText = JSON.stringify({ mcpServers: servers('p', 16) }, null, 2);
const userText = `// user servers\n${JSON.stringify({ mcpServers: servers('u', 16) }, null, 2)}`;
const layers: SourceLayer[] = [
  { source: 'constructor', servers: servers('c', 4) },
  { source: 'project', file: '/w/.mcp.json', servers: servers('p', 12) },
  { source: 'user', file: '/h/mcp.json', servers: servers('u', 12) },
  { source: 'plugin', plugin: 'x', pluginRoot: '/plugins/x', servers: servers('g', 4) },
];

const dir = mkdtempSync(join(tmpdir(), 'mcp-config-bench-'));
try {
  const home = join(dir, 'home');
  const workdir = join(dir, 'work');
  mkdirSync(home);
  mkdirSync(workdir);
  writeFileSync(join(workdir, '.mcp.json'), projectText);
  writeFileSync(join(home, 'mcp.json'), userText);

  await measure(`parseConfigText (16 servers, ${(projectText.length / 1024).toFixed(1)} KB)`, 2000, () =>
    parseConfigText(projectText, '/w/.mcp.json', 'project'),
  );
  await measure('mergeSources (32 servers, 4 layers, expand + fingerprint)', 2000, () =>
    mergeSources(layers, { env, workdir: '/w' }),
  );
  await measure('fingerprint (one stdio server)', 20000, () =>
    fingerprint({ command: 'npx', args: ['-y', 'x'], env: { A: '${B}' } }, '/w'),
  );
  await measure('loadMcpConfig (2 files x 16 servers, real disk)', 1000, () =>
    loadMcpConfig({ workdir, home, env }),
  );
  await measure('loadMcpConfig (no files)', 1000, () =>
    loadMcpConfig({ workdir: dir, home: join(dir, 'none'), env }),
  );
  await measure('addServerToText (into a 16-server file)', 2000, () =>
    addServerToText(userText, 'new', { command: 'node', args: ['x.js'] }),
  );
  const file = join(home, 'mcp.json');
  await measure('addServer + removeServer (atomic, fsync, real disk)', 300, async () => {
    await addServer(file, 'bench', { command: 'node', args: ['x.js'] });
    await removeServer(file, 'bench');
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
