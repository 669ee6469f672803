// Run: pnpm --filter @wave/mcp-config example   (touches only two temp directories)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  addServer,
  assertConnectable,
  displayServer,
  isMcpConfigError,
  loadMcpConfig,
  projectConfigPath,
  removeServer,
  userConfigPath,
} from '@wave/mcp-config';

const home = mkdtempSync(join(tmpdir(), 'wave-home-')); // stands for ~/.wave
const workdir = mkdtempSync(join(tmpdir(), 'project-'));

// A project file as Claude Code writes it, with a comment and a trailing comma (JSONC).
writeFileSync(
  projectConfigPath(workdir),
  `{
  // checked into the repository
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer \${GITHUB_TOKEN}" }
    },
  }
}
`,
);

// A user-level server, written atomically (the file is created).
await addServer(userConfigPath(home), 'files', {
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-filesystem', '${HOME}/notes'],
  approveTools: ['read_*', 'list_*'],
});

const { servers, issues } = await loadMcpConfig({
  workdir,
  home,
  env: { HOME: '/home/me' }, // GITHUB_TOKEN is not set
  constructorServers: { scratch: { command: 'node', args: ['server.js'], lifecycle: 'eager' } },
});

for (const server of servers) {
  const shown = displayServer(server); // unexpanded, secrets masked
  console.log(
    `${shown.name} (${shown.source}, ${shown.transport})`,
    shown.url ?? [shown.command, ...(shown.args ?? [])].join(' '),
  );
  try {
    assertConnectable(server); // what the pool calls before dialing
  } catch (err) {
    if (isMcpConfigError(err)) console.log(`  cannot connect: ${err.code}`);
  }
}
console.log(
  'issues:',
  issues.map((i) => `${i.severity} ${i.code} ${i.server ?? ''}`),
);

// Remove keeps the rest of the file byte for byte.
await removeServer(projectConfigPath(workdir), 'github');
console.log(readFileSync(projectConfigPath(workdir), 'utf8'));

rmSync(home, { recursive: true, force: true });
rmSync(workdir, { recursive: true, force: true });
