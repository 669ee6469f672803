import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fixturePath } from '@wave/testkit';
import { describe, expect, it } from 'vitest';
import { sandbox } from './helpers';

/**
 * Replace the sandbox's random paths, the fingerprints (which hash the workdir), timings and
 * times so the snapshot is stable.
 */
function stable(text: string, root: string): unknown {
  return JSON.parse(text.split(root).join('<root>'), (key, value) => {
    if (key === 'fingerprint' && typeof value === 'string') return '<sha256>';
    if ((key === 'ms' || key === 'lastConnectedAt') && typeof value === 'number') return `<${key}>`;
    return value;
  });
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

  it('wave mcp get --json (with cached tools) and wave mcp connect --json', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.home, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          hello: { command: process.execPath, args: [fixturePath('hello')], env: { HELLO_TOKEN: 'x' } },
        },
      }),
    );
    const c = await s.wave(['mcp', 'connect', 'hello', '--json']);
    expect(c.code).toBe(0);
    const connected = stable(c.stdout.split(process.execPath).join('<node>'), s.root) as {
      tools: { name: string }[];
      instructions?: string;
    };
    expect(connected.instructions).toContain('HELLO-INSTRUCTIONS-END');
    expect({
      ...connected,
      instructions: '<instructions>',
      tools: connected.tools.slice(0, 2),
    }).toMatchInlineSnapshot(`
        {
          "instructions": "<instructions>",
          "ms": "<ms>",
          "name": "hello",
          "source": "user",
          "status": "connected",
          "tools": [
            {
              "description": "Returns the given text unchanged.",
              "name": "echo",
              "tokens": 53,
            },
            {
              "description": "Adds two numbers.",
              "name": "add",
              "tokens": 54,
            },
          ],
        }
      `);
    const r = await s.wave(['mcp', 'get', 'hello', '--json']);
    expect(r.code).toBe(0);
    const got = stable(
      r.stdout.split(process.execPath).join('<node>').split(fixturePath('hello')).join('<hello>'),
      s.root,
    ) as {
      tools: { list: unknown[] };
    };
    expect({ ...got, tools: { ...got.tools, list: got.tools.list.slice(0, 2) } }).toMatchInlineSnapshot(`
      {
        "args": [
          "<hello>",
        ],
        "command": "<node>",
        "connectable": true,
        "env": {
          "HELLO_TOKEN": "****",
        },
        "file": "<root>/home/mcp.json",
        "issues": [],
        "name": "hello",
        "overrides": [],
        "source": "user",
        "status": "not connected",
        "tools": {
          "cached": true,
          "count": 8,
          "lastConnectedAt": "<lastConnectedAt>",
          "list": [
            {
              "description": "Returns the given text unchanged.",
              "name": "echo",
              "tokens": 53,
            },
            {
              "description": "Adds two numbers.",
              "name": "add",
              "tokens": 54,
            },
          ],
          "tokens": 507,
        },
        "transport": "stdio",
        "trusted": true,
      }
    `);
  });

  it('wave mcp doctor --json', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.home, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          hello: { command: process.execPath, args: [fixturePath('hello')] },
          missing: { command: 'wave-no-such-command-xyz', env: { API_KEY: '${WAVE_TEST_UNSET_VAR}' } },
          plain: { url: 'http://example.invalid/mcp', disabled: true },
        },
      }),
    );
    const r = await s.wave(['mcp', 'doctor', '--json']);
    expect(r.code).toBe(1);
    expect(stable(r.stdout, s.root)).toMatchInlineSnapshot(`
      {
        "issues": [],
        "ok": false,
        "servers": [
          {
            "env": {},
            "file": "<root>/home/mcp.json",
            "fixes": [],
            "issues": [],
            "ms": "<ms>",
            "name": "hello",
            "problems": [],
            "source": "user",
            "status": "connected",
            "tokens": 507,
            "tools": 8,
            "unresolved": [],
            "warnings": [],
          },
          {
            "env": {
              "API_KEY": "****",
            },
            "file": "<root>/home/mcp.json",
            "fixes": [
              "Set the missing variable in your environment, or give a default: Server "missing" in <root>/home/mcp.json: \${WAVE_TEST_UNSET_VAR} (in env.API_KEY) is not set and has no default; the server cannot connect. Set WAVE_TEST_UNSET_VAR in the environment or write \${WAVE_TEST_UNSET_VAR:-default}.",
            ],
            "issues": [
              {
                "code": "VARIABLE_UNRESOLVED",
                "message": "Server "missing" in <root>/home/mcp.json: \${WAVE_TEST_UNSET_VAR} (in env.API_KEY) is not set and has no default; the server cannot connect. Set WAVE_TEST_UNSET_VAR in the environment or write \${WAVE_TEST_UNSET_VAR:-default}.",
                "severity": "error",
              },
            ],
            "name": "missing",
            "problems": [],
            "source": "user",
            "status": "invalid",
            "tokens": 0,
            "tools": 0,
            "unresolved": [
              {
                "field": "env.API_KEY",
                "message": "Server "missing" in <root>/home/mcp.json: \${WAVE_TEST_UNSET_VAR} (in env.API_KEY) is not set and has no default; the server cannot connect. Set WAVE_TEST_UNSET_VAR in the environment or write \${WAVE_TEST_UNSET_VAR:-default}.",
              },
            ],
            "warnings": [],
          },
          {
            "env": {},
            "file": "<root>/home/mcp.json",
            "fixes": [],
            "issues": [],
            "name": "plain",
            "problems": [],
            "source": "user",
            "status": "disabled",
            "tokens": 0,
            "tools": 0,
            "unresolved": [],
            "warnings": [
              ""plain" uses plain http:// to example.invalid: anything it sends (headers, tokens) travels unencrypted. Use https://.",
            ],
          },
        ],
      }
    `);
  });

  it('wave plugin list --json and wave mcp import --json', async () => {
    const s = await sandbox();
    const src = join(s.root, 'src-plugin');
    await mkdir(join(src, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(src, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'tools', version: '1.2.3', description: 'Handy tools' }),
    );
    await writeFile(join(src, '.mcp.json'), JSON.stringify({ mcpServers: { ptool: { command: 'node' } } }));
    expect((await s.wave(['plugin', 'add', src])).code).toBe(0);
    let r = await s.wave(['plugin', 'list', '--json']);
    expect(r.code).toBe(0);
    expect(stable(r.stdout, s.root)).toMatchInlineSnapshot(`
      {
        "issues": [],
        "plugins": [
          {
            "description": "Handy tools",
            "name": "tools",
            "root": "<root>/home/plugins/tools",
            "servers": [
              "ptool",
            ],
            "version": "1.2.3",
          },
        ],
      }
    `);
    const f = join(s.root, 'desktop.json');
    await writeFile(
      f,
      JSON.stringify({ mcpServers: { ptool: { command: 'x' }, fresh: { command: 'y' }, bad: { args: [] } } }),
    );
    await s.wave(['mcp', 'add', 'fresh', '--', 'z']);
    r = await s.wave(['mcp', 'import', '--from', 'claude-desktop', '--path', f, '--yes', '--json']);
    expect(r.code).toBe(1);
    expect(stable(r.stdout, s.root)).toMatchInlineSnapshot(`
      {
        "file": "<root>/home/mcp.json",
        "results": [
          {
            "name": "ptool",
            "result": "added",
          },
          {
            "message": "Server "fresh" already exists in <root>/home/mcp.json; it was not changed. Remove it first, or replace it (overwrite).",
            "name": "fresh",
            "result": "exists",
          },
          {
            "message": "Server "bad" is not valid; <root>/home/mcp.json was not changed:
      - Server "bad" in <root>/home/mcp.json has neither "command" (a local stdio server) nor "url" (a remote http server); add one of them.",
            "name": "bad",
            "result": "invalid",
          },
        ],
      }
    `);
  });
});
