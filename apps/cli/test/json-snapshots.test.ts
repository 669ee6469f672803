import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandbox } from './helpers';

/** Replace the sandbox's random paths (and the fingerprints, which hash the workdir) so the snapshot is stable. */
function stable(text: string, root: string): unknown {
  return JSON.parse(text.split(root).join('<root>'), (key, value) =>
    key === 'fingerprint' && typeof value === 'string' ? '<sha256>' : value,
  );
}

describe('--json output is stable', () => {
  it('wave mcp list --json', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          api: {
            url: 'https://api.example/mcp?token=abc',
            headers: { Authorization: 'Bearer ${API_TOKEN}' },
          },
          local: { command: 'node', args: ['server.js'], env: { DEBUG: '1', SECRET_KEY: 'plain' } },
        },
      }),
    );
    await writeFile(
      join(s.home, 'mcp.json'),
      JSON.stringify({ mcpServers: { local: { command: 'node', args: ['user.js'] } } }),
    );
    const r = await s.wave(['mcp', 'list', '--json'], { env: { API_TOKEN: 't' } });
    expect(r.code).toBe(0);
    expect(stable(r.stdout, s.root)).toMatchInlineSnapshot(`
      {
        "files": {
          "project": "<root>/project/.mcp.json",
          "user": "<root>/home/mcp.json",
        },
        "issues": [],
        "servers": [
          {
            "connectable": true,
            "file": "<root>/project/.mcp.json",
            "headers": {
              "Authorization": "Bearer \${API_TOKEN}",
            },
            "issues": [],
            "name": "api",
            "overrides": [],
            "source": "project",
            "status": "not connected",
            "transport": "http",
            "trusted": false,
            "url": "https://api.example/mcp?token=****",
          },
          {
            "args": [
              "server.js",
            ],
            "command": "node",
            "connectable": true,
            "env": {
              "DEBUG": "****",
              "SECRET_KEY": "****",
            },
            "file": "<root>/project/.mcp.json",
            "issues": [],
            "name": "local",
            "overrides": [
              {
                "file": "<root>/home/mcp.json",
                "fingerprint": "<sha256>",
                "source": "user",
              },
            ],
            "source": "project",
            "status": "not connected",
            "transport": "stdio",
            "trusted": false,
          },
        ],
        "workdir": "<root>/project",
      }
    `);
  });
});
