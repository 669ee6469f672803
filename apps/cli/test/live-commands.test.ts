import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { findProcessesByMarker, fixturePath, realServer } from '@wave/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sandbox } from './helpers';

const hello = fixturePath('hello');
const namespace = process.env.WAVE_REAPER_NAMESPACE ?? '';

function noneLeft(): void {
  expect(findProcessesByMarker(namespace)).toEqual([]);
}

describe('wave mcp connect / tools / call', () => {
  it('connect dials, prints tools and instructions, caches the tools, and leaves no process', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    let r = await s.wave(['mcp', 'connect', 'hello']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/connected hello in \d+ ms, 8 tools/);
    expect(r.stdout).toContain('HELLO-INSTRUCTIONS-END');
    noneLeft();
    // list now shows the cached tools, never as connected.
    r = await s.wave(['mcp', 'list']);
    expect(r.stdout).toMatch(/8 tools, ~\d+ tokens \(cached, last connected/);
    expect(r.stdout).toMatch(/hello {2}stdio {2}not connected\n/);
    r = await s.wave(['mcp', 'list', '--json']);
    const v = JSON.parse(r.stdout).servers[0];
    expect(v.status).toBe('not connected');
    expect(v.tools).toMatchObject({ count: 8, cached: true });
    expect(v.tools.lastConnectedAt).toBeTypeOf('number');
  });

  it('call prints the result; --json prints the MCP result; a tool error exits 1', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    let r = await s.wave(['mcp', 'call', 'hello', 'echo', '{"text":"hi there"}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hi there');
    r = await s.wave(['mcp', 'call', 'hello', 'add', '{"a":2,"b":3}', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).content[0].text).toContain('5');
    await writeFile(join(s.root, 'args.json'), '{"text":"from a file"}');
    r = await s.wave(['mcp', 'call', 'hello', 'echo', '--args-file', join(s.root, 'args.json')]);
    expect(r.stdout).toContain('from a file');
    r = await s.wave(['mcp', 'call', 'hello', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has no tool "nope"');
    r = await s.wave(['mcp', 'call', 'hello', 'fail', '{}']);
    expect(r.code).toBe(1);
    r = await s.wave(['mcp', 'call', 'hello', 'echo', '[1]']);
    expect(r.code).toBe(2);
    noneLeft();
  });

  it('tools with no name: every enabled server, untrusted project servers skipped with a hint', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'hello', '--', process.execPath, hello]);
    await s.wave(['mcp', 'add', 'off', '--', process.execPath, hello]);
    await s.wave(['mcp', 'disable', 'off']);
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [hello] } } }),
    );
    let r = await s.wave(['mcp', 'tools']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hello: 8 tools');
    expect(r.stdout).toMatch(/^ {2}echo \(~\d+ tokens\)/m);
    expect(r.stdout).not.toContain('off:');
    expect(r.stdout).not.toContain('repo:');
    expect(r.stderr).toContain('skipped "repo": not trusted on this machine (wave mcp trust repo)');
    r = await s.wave(['mcp', 'tools', '--json', '--trust']);
    expect(r.code).toBe(0);
    const servers = JSON.parse(r.stdout).servers as { name: string; status: string; tools: unknown[] }[];
    expect(servers.map((x) => [x.name, x.status, x.tools.length]).sort()).toEqual([
      ['hello', 'connected', 8],
      ['repo', 'connected', 8],
    ]);
    noneLeft();
  });

  it('tools and call against the real server-everything', async () => {
    const s = await sandbox();
    const everything = realServer('everything');
    await s.wave(['mcp', 'add-json', 'everything', JSON.stringify(everything)]);
    let r = await s.wave(['mcp', 'tools', 'everything', '--json']);
    expect(r.code).toBe(0);
    const tools = JSON.parse(r.stdout).servers[0].tools as { name: string; tokens: number }[];
    expect(tools.map((t) => t.name)).toContain('echo');
    for (const t of tools) expect(t.tokens).toBeGreaterThan(0);
    r = await s.wave(['mcp', 'call', 'everything', 'echo', '{"message":"wave"}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('wave');
    noneLeft();
  });
});

describe('trust', () => {
  it('a project server asks before its first run; --trust records it; a changed command asks again', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          repo: { command: process.execPath, args: [hello], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } },
        },
      }),
    );
    let r = await s.wave(['mcp', 'connect', 'repo'], { env: { GITHUB_TOKEN: 't' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has not run on this machine yet');
    expect(r.stderr).toContain(`It runs: ${process.execPath} ${hello}`);
    expect(r.stderr).toContain('environment variables: GITHUB_TOKEN');
    expect(r.stderr).toContain('wave mcp trust repo');
    noneLeft();
    r = await s.wave(['mcp', 'connect', 'repo', '--trust'], { env: { GITHUB_TOKEN: 't' } });
    expect(r.code).toBe(0);
    r = await s.wave(['mcp', 'connect', 'repo'], { env: { GITHUB_TOKEN: 't' } });
    expect(r.code).toBe(0);
    // The repository changes what the server runs: asked again.
    const text = await readFile(join(s.workdir, '.mcp.json'), 'utf8');
    await writeFile(join(s.workdir, '.mcp.json'), text.replace('"env"', '"cwd":"/","env"'));
    r = await s.wave(['mcp', 'connect', 'repo'], { env: { GITHUB_TOKEN: 't' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has not run on this machine yet');
    r = await s.wave(['mcp', 'trust', 'repo']);
    expect(r.code).toBe(0);
    r = await s.wave(['mcp', 'connect', 'repo'], { env: { GITHUB_TOKEN: 't' } });
    expect(r.code).toBe(0);
    noneLeft();
  });

  it('a plugin server asks for trust too; trusted, it runs from the plugin folder', async () => {
    const s = await sandbox();
    const src = join(s.root, 'p');
    await mkdir(src);
    await writeFile(join(src, 'plugin.json'), JSON.stringify({ name: 'greeter', version: '1.0.0' }));
    await writeFile(
      join(src, '.mcp.json'),
      JSON.stringify({
        mcpServers: { greet: { command: process.execPath, args: [hello], cwd: '${CLAUDE_PLUGIN_ROOT}' } },
      }),
    );
    expect((await s.wave(['plugin', 'add', src])).code).toBe(0);
    let r = await s.wave(['mcp', 'connect', 'greet']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'The plugin server "greet" (from plugin "greeter") has not run on this machine yet.',
    );
    expect(r.stderr).toContain(`It runs: ${process.execPath} ${hello}`);
    expect(r.stderr).toContain(`In the folder: ${join(s.home, 'plugins', 'greeter')}`);
    expect(r.stderr).toContain('wave mcp trust greet');
    noneLeft();
    expect((await s.wave(['mcp', 'trust', 'greet'])).code).toBe(0);
    r = await s.wave(['mcp', 'connect', 'greet']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/connected greet in \d+ ms, 8 tools/);
    noneLeft();
  });

  it('the prompt names the credential headers a remote project server would receive', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          remote: {
            url: 'https://someone-else.example/mcp',
            headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
          },
        },
      }),
    );
    const r = await s.wave(['mcp', 'connect', 'remote'], { env: { GITHUB_TOKEN: 'secret-value' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('It connects to: https://someone-else.example/mcp');
    expect(r.stderr).toContain('credential headers: Authorization');
    expect(r.stderr).toContain('GITHUB_TOKEN');
    expect(r.stderr).not.toContain('secret-value');
  });
});

describe('wave mcp doctor', () => {
  it('reports each server with a fix, exits 1 when one fails, and leaves no process', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'good', '--', process.execPath, hello]);
    await s.wave(['mcp', 'add', 'missing', '--', 'wave-no-such-command-xyz']);
    await s.wave([
      'mcp',
      'add-json',
      'vars',
      '{"command":"node","env":{"API_KEY":"${WAVE_TEST_UNSET_VAR}"}}',
    ]);
    await s.wave(['mcp', 'add', 'plain', '--url', 'http://example.invalid/mcp']);
    const r = await s.wave(['mcp', 'doctor', '--json', '--timeout', '20000']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      servers: {
        name: string;
        status: string;
        fixes: string[];
        warnings: string[];
        env: Record<string, string>;
        tools: number;
      }[];
    };
    expect(out.ok).toBe(false);
    const by = Object.fromEntries(out.servers.map((x) => [x.name, x]));
    expect(by.good).toMatchObject({ status: 'connected', tools: 8 });
    expect(by.missing?.status).toBe('error');
    expect(by.missing?.fixes.join(' ')).toContain('wave-no-such-command-xyz');
    expect(by.vars?.status).toBe('invalid');
    expect(by.vars?.env).toEqual({ API_KEY: '****' });
    expect(by.vars?.fixes.join(' ')).toContain('WAVE_TEST_UNSET_VAR');
    expect(by.plain?.warnings.join(' ')).toContain('plain http://');
    const text = await s.wave(['mcp', 'doctor', '--timeout', '20000']);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('ok  good (user)  connected');
    expect(text.stdout).toContain('FAIL  missing');
    noneLeft();
  });

  it('a remote server refusing its token (HTTP 401) and a TLS failure each get their fix', async () => {
    // One plain-HTTP server on loopback: it refuses every request with 401 (no OAuth), and
    // dialing it with https:// is a TLS failure.
    const http = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('bad token');
    });
    await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
    onTestFinished(() => new Promise<void>((ok) => http.close(() => ok())));
    const port = (http.address() as AddressInfo).port;
    const s = await sandbox();
    await s.wave([
      'mcp',
      'add',
      'tokened',
      '--url',
      `http://127.0.0.1:${port}/mcp`,
      '-H',
      'Authorization: Bearer ${WAVE_TEST_TOKEN}',
    ]);
    await s.wave(['mcp', 'add', 'tls', '--url', `https://127.0.0.1:${port}/mcp`]);
    const r = await s.wave(['mcp', 'doctor', '--json', '--timeout', '20000'], {
      env: { WAVE_TEST_TOKEN: 'wrong-token-value' },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('wrong-token-value');
    const by = Object.fromEntries(
      (JSON.parse(r.stdout).servers as { name: string; status: string; fixes: string[] }[]).map((x) => [
        x.name,
        x,
      ]),
    );
    expect(by.tokened?.status).toBe('error');
    expect(by.tokened?.fixes.join(' ')).toContain('HTTP 401');
    expect(by.tls?.status).toBe('error');
    expect(by.tls?.fixes.join(' ')).toContain('TLS failed');
  });

  it('tries the servers of every source in parallel: two that each wait for the other both connect', async () => {
    const s = await sandbox();
    // Each server announces itself with a file, then speaks MCP only once the other one runs too:
    // tried one after the other, the first would time out.
    const barrier = join(s.root, 'barrier.mjs');
    await writeFile(
      barrier,
      [
        "import { existsSync, writeFileSync } from 'node:fs';",
        "import { pathToFileURL } from 'node:url';",
        'const [me, other, server] = process.argv.slice(2);',
        "writeFileSync(me, '');",
        'while (!existsSync(other)) await new Promise((r) => setTimeout(r, 20));',
        'await import(pathToFileURL(server).href);',
      ].join('\n'),
    );
    const a = join(s.root, 'a.flag');
    const b = join(s.root, 'b.flag');
    await s.wave(['mcp', 'add', 'mine', '--', process.execPath, barrier, a, b, hello]);
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { theirs: { command: process.execPath, args: [barrier, b, a, hello] } } }),
    );
    const r = await s.wave(['mcp', 'doctor', '--json', '--trust', '--timeout', '20000']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      servers: { name: string; source: string; status: string }[];
    };
    expect(out.servers.map((x) => [x.name, x.source, x.status])).toEqual([
      ['theirs', 'project', 'connected'],
      ['mine', 'user', 'connected'],
    ]);
    noneLeft();
  });

  it('all good: exit 0', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'good', '--', process.execPath, hello]);
    const r = await s.wave(['mcp', 'doctor']);
    expect(r.code).toBe(0);
  });
});
