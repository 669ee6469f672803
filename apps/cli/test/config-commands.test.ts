import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fixturePath } from '@wave/testkit';
import { describe, expect, it } from 'vitest';
import { sandbox } from './helpers';

const hello = fixturePath('hello');

describe('wave mcp list / add / get / remove', () => {
  it('empty state says how to add a user-level or a project-level server', async () => {
    const s = await sandbox();
    const r = await s.wave(['mcp', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No MCP servers are configured.');
    expect(r.stdout).toContain('wave mcp add memory --');
    expect(r.stdout).toContain('--scope project');
    const j = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ servers: [], issues: [] });
  });

  it('add writes the user file keeping comments; list groups by source; get names the file', async () => {
    const s = await sandbox();
    await writeFile(join(s.home, 'mcp.json'), '{\n  // my servers\n  "mcpServers": {}\n}\n');
    let r = await s.wave(['mcp', 'add', 'hello', '--', 'node', hello]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Added MCP server "hello" in ${join(s.home, 'mcp.json')}`);
    expect(await readFile(join(s.home, 'mcp.json'), 'utf8')).toContain('// my servers');
    r = await s.wave(
      ['mcp', 'add', '--scope', 'project', 'docs', '--url', 'https://docs.example/mcp?api_key=${DOCS_KEY}'],
      {
        env: { DOCS_KEY: 'k' },
      },
    );
    expect(r.code).toBe(0);
    r = await s.wave(['mcp', 'list', '--json']);
    const list = JSON.parse(r.stdout) as {
      servers: { name: string; source: string; status: string; file: string }[];
    };
    expect(list.servers.map((x) => [x.name, x.source, x.status])).toEqual([
      ['docs', 'project', 'not connected'],
      ['hello', 'user', 'not connected'],
    ]);
    r = await s.wave(['mcp', 'get', 'hello']);
    expect(r.stdout).toContain(`file:       ${join(s.home, 'mcp.json')}`);
    r = await s.wave(['mcp', 'get', 'hello', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: 'hello',
      source: 'user',
      transport: 'stdio',
      command: 'node',
      args: [hello],
    });
  });

  it('get shows which lower layer a project server overrides', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'x', '--', 'node', 'a.js']);
    await s.wave(['mcp', 'add', '--scope', 'project', 'x', '--', 'node', 'b.js']);
    const r = await s.wave(['mcp', 'get', 'x', '--json']);
    const v = JSON.parse(r.stdout) as { source: string; overrides: { source: string; file: string }[] };
    expect(v.source).toBe('project');
    expect(v.overrides).toEqual([
      expect.objectContaining({ source: 'user', file: join(s.home, 'mcp.json') }),
    ]);
  });

  it('add refuses an existing name unless --force; add-json; usage errors exit 2', async () => {
    const s = await sandbox();
    expect((await s.wave(['mcp', 'add', 'a', '--', 'node', 'x.js'])).code).toBe(0);
    let r = await s.wave(['mcp', 'add', 'a', '--', 'node', 'y.js']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--force');
    expect((await s.wave(['mcp', 'add', 'a', '--force', '--', 'node', 'y.js'])).code).toBe(0);
    r = await s.wave(['mcp', 'add-json', 'b', '{"command":"node","args":["b.js"],"env":{"A":"1"}}']);
    expect(r.code).toBe(0);
    const file = JSON.parse(await readFile(join(s.home, 'mcp.json'), 'utf8'));
    expect(file.mcpServers.a.args).toEqual(['y.js']);
    expect(file.mcpServers.b).toEqual({ command: 'node', args: ['b.js'], env: { A: '1' } });
    expect((await s.wave(['mcp', 'add-json', 'c', '{nope'])).code).toBe(2);
    expect((await s.wave(['mcp', 'add', 'c', '--transport', 'carrier-pigeon', 'x'])).code).toBe(2);
    expect((await s.wave(['mcp', 'add'])).code).toBe(2);
    expect((await s.wave(['mcp', 'frobnicate'])).code).toBe(2);
    expect((await s.wave(['--help'])).code).toBe(0);
  });

  it('a literal secret is refused for the shared project file, allowed with --allow-secret or as ${VAR}', async () => {
    const s = await sandbox();
    let r = await s.wave([
      'mcp',
      'add',
      '--scope',
      'project',
      'gh',
      '--url',
      'https://gh.example/mcp',
      '-H',
      'Authorization: Bearer ghp_live',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Refusing to write a secret (header Authorization)');
    expect(r.stderr).toContain('${');
    r = await s.wave([
      'mcp',
      'add',
      '--scope',
      'project',
      'db',
      '--env',
      'DB_PASSWORD=hunter2',
      '--',
      'node',
      'db.js',
    ]);
    expect(r.code).toBe(1);
    r = await s.wave([
      'mcp',
      'add',
      '--scope',
      'project',
      'db',
      '--env',
      'DB_PASSWORD=${DB_PASSWORD}',
      '--',
      'node',
      'db.js',
    ]);
    expect(r.code).toBe(0);
    r = await s.wave([
      'mcp',
      'add',
      '--scope',
      'project',
      'gh',
      '--allow-secret',
      '--url',
      'https://gh.example/mcp',
      '-H',
      'Authorization: Bearer ghp_live',
    ]);
    expect(r.code).toBe(0);
    // The user file is private: no refusal there.
    r = await s.wave([
      'mcp',
      'add',
      'gh2',
      '--url',
      'https://gh.example/mcp',
      '-H',
      'Authorization: Bearer ghp_live',
    ]);
    expect(r.code).toBe(0);
    // Display masks it.
    r = await s.wave(['mcp', 'get', 'gh2']);
    expect(r.stdout).not.toContain('ghp_live');
  });

  it('remove asks; without a terminal it refuses unless --yes, and the file is unchanged', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'a', '--', 'node', 'x.js']);
    const before = await readFile(join(s.home, 'mcp.json'), 'utf8');
    let r = await s.wave(['mcp', 'remove', 'a']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--yes');
    expect(await readFile(join(s.home, 'mcp.json'), 'utf8')).toBe(before);
    r = await s.wave(['mcp', 'remove', 'a', '--yes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Removed MCP server "a" from ${join(s.home, 'mcp.json')}`);
    r = await s.wave(['mcp', 'remove', 'a', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No MCP server named "a"');
  });

  it('enable / disable is a local switch: the shared file never changes', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', '--scope', 'project', 'p', '--', 'node', hello]);
    const file = join(s.workdir, '.mcp.json');
    const before = await readFile(file, 'utf8');
    let r = await s.wave(['mcp', 'disable', 'p']);
    expect(r.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(before);
    r = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers[0]).toMatchObject({
      name: 'p',
      status: 'disabled',
      disabledBy: 'local',
    });
    r = await s.wave(['mcp', 'connect', 'p', '--trust']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('wave mcp enable p');
    await s.wave(['mcp', 'enable', 'p']);
    r = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers[0].status).toBe('not connected');
  });

  it('get shows the config issues of that server (text and --json)', async () => {
    const s = await sandbox();
    await writeFile(
      join(s.home, 'mcp.json'),
      JSON.stringify({ mcpServers: { v: { command: 'node', env: { API_KEY: '${WAVE_TEST_UNSET_VAR}' } } } }),
    );
    let r = await s.wave(['mcp', 'get', 'v']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ {2}error: {2}.*WAVE_TEST_UNSET_VAR/);
    r = await s.wave(['mcp', 'get', 'v', '--json']);
    const v = JSON.parse(r.stdout) as { connectable: boolean; issues: { code: string; severity: string }[] };
    expect(v.connectable).toBe(false);
    expect(v.issues).toEqual([expect.objectContaining({ code: 'VARIABLE_UNRESOLVED', severity: 'error' })]);
  });

  it('add validates the definition: nothing is written for an invalid one', async () => {
    const s = await sandbox();
    const file = join(s.home, 'mcp.json');
    await s.wave(['mcp', 'add', 'ok', '--', 'node', 'x.js']);
    const before = await readFile(file, 'utf8');
    for (const args of [
      ['mcp', 'add-json', 'a', '{"args":["x"]}'],
      ['mcp', 'add-json', 'b', '{"command":5}'],
      ['mcp', 'add', 'c', '--url', 'not-a-url'],
    ]) {
      const r = await s.wave(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('is not valid');
      expect(await readFile(file, 'utf8')).toBe(before);
    }
  });

  it('claude mcp add habits: a URL as the positional argument with -t sse / --transport http', async () => {
    const s = await sandbox();
    expect((await s.wave(['mcp', 'add', '-t', 'sse', 'legacy', 'https://legacy.example/sse'])).code).toBe(0);
    expect(
      (
        await s.wave([
          'mcp',
          'add',
          '--transport',
          'http',
          'api',
          'https://api.example/mcp',
          '-H',
          'X-Team: a',
        ])
      ).code,
    ).toBe(0);
    expect((await s.wave(['mcp', 'add', '-s', 'user', '-e', 'A=1', 'loc', '--', 'node', 'l.js'])).code).toBe(
      0,
    );
    const file = JSON.parse(await readFile(join(s.home, 'mcp.json'), 'utf8'));
    expect(file.mcpServers).toEqual({
      legacy: { type: 'sse', url: 'https://legacy.example/sse' },
      api: { type: 'http', url: 'https://api.example/mcp', headers: { 'X-Team': 'a' } },
      loc: { command: 'node', args: ['l.js'], env: { A: '1' } },
    });
  });

  it('--cwd picks the project folder from anywhere', async () => {
    const s = await sandbox();
    await writeFile(join(s.workdir, '.mcp.json'), JSON.stringify({ mcpServers: { p: { command: 'node' } } }));
    const r = await s.wave(['--cwd', s.workdir, 'mcp', 'list', '--json'], { cwd: s.root });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { workdir: string; servers: { name: string; source: string }[] };
    expect(out.workdir).toBe(s.workdir);
    expect(out.servers.map((x) => [x.name, x.source])).toEqual([['p', 'project']]);
    expect((await s.wave(['mcp', 'list', '--json'], { cwd: s.root })).stdout).not.toContain('"p"');
  });

  it('a broken user file is reported; project servers still list', async () => {
    const s = await sandbox();
    await writeFile(join(s.home, 'mcp.json'), '{ "mcpServers": { "a": ');
    await mkdir(s.workdir, { recursive: true });
    await writeFile(join(s.workdir, '.mcp.json'), JSON.stringify({ mcpServers: { p: { command: 'node' } } }));
    const r = await s.wave(['mcp', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Project (.mcp.json)');
    expect(r.stdout).toContain('Config issues');
    expect(r.stdout).toContain(join(s.home, 'mcp.json'));
  });
});

describe('wave plugin', () => {
  it('add / list / remove; a plugin server is listed under the plugin source and cannot be removed with mcp remove', async () => {
    const s = await sandbox();
    const src = join(s.root, 'my-plugin');
    await mkdir(join(src, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(src, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'tools', version: '1.0.0', description: 'Handy' }),
    );
    await writeFile(
      join(src, '.mcp.json'),
      JSON.stringify({
        mcpServers: { ptool: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.js'] } },
      }),
    );
    let r = await s.wave(['plugin', 'add', src]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Installed plugin "tools"');
    r = await s.wave(['plugin', 'list', '--json']);
    expect(JSON.parse(r.stdout).plugins).toEqual([
      expect.objectContaining({
        name: 'tools',
        version: '1.0.0',
        servers: ['ptool'],
        root: join(s.home, 'plugins', 'tools'),
      }),
    ]);
    r = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers).toEqual([
      expect.objectContaining({
        name: 'ptool',
        source: 'plugin',
        plugin: 'tools',
        // The plugin root is substituted, and given to the server as WAVE_PLUGIN_ROOT.
        args: [join(s.home, 'plugins', 'tools', 'server.js')],
        env: { WAVE_PLUGIN_ROOT: join(s.home, 'plugins', 'tools') },
      }),
    ]);
    r = await s.wave(['mcp', 'list']);
    expect(r.stdout).toContain('Plugins (read-only)');
    r = await s.wave(['mcp', 'remove', 'ptool', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('wave plugin remove tools');
    expect((await s.wave(['plugin', 'add', src])).code).toBe(1);
    r = await s.wave(['plugin', 'remove', 'tools']);
    expect(r.code).toBe(1);
    r = await s.wave(['plugin', 'remove', 'tools', '--yes']);
    expect(r.code).toBe(0);
    r = await s.wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers).toEqual([]);
  });

  it('a broken installed plugin is reported as a config issue and skipped; the others still load', async () => {
    const s = await sandbox();
    const plugins = join(s.home, 'plugins');
    await mkdir(join(plugins, 'broken'), { recursive: true });
    await writeFile(join(plugins, 'broken', 'plugin.json'), '{ "name": ');
    await mkdir(join(plugins, 'good'), { recursive: true });
    await writeFile(join(plugins, 'good', 'plugin.json'), JSON.stringify({ name: 'good', version: '1.0.0' }));
    await writeFile(
      join(plugins, 'good', '.mcp.json'),
      JSON.stringify({ mcpServers: { g: { command: 'node' } } }),
    );
    let r = await s.wave(['plugin', 'list', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      plugins: { name: string }[];
      issues: { code: string; message: string }[];
    };
    expect(out.plugins.map((p) => p.name)).toEqual(['good']);
    expect(out.issues).toEqual([
      expect.objectContaining({ code: 'PLUGIN_INVALID', message: expect.stringContaining('broken') }),
    ]);
    r = await s.wave(['plugin', 'list']);
    expect(r.stderr).toMatch(/^error: .*broken/m);
    r = await s.wave(['mcp', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Plugins (read-only)');
    expect(r.stdout).toMatch(/Config issues\n.*broken/);
  });

  it('a folder that is not a plugin is refused', async () => {
    const s = await sandbox();
    const r = await s.wave(['plugin', 'add', s.workdir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not a valid plugin');
  });
});

describe('wave mcp import', () => {
  it('imports Claude Desktop servers; names that clash are reported, never overwritten', async () => {
    const s = await sandbox();
    const desktop = join(s.root, 'user-home', '.config', 'Claude');
    await mkdir(desktop, { recursive: true });
    await writeFile(
      join(desktop, 'claude_desktop_config.json'),
      JSON.stringify({
        mcpServers: { memory: { command: 'npx', args: ['-y', 'x'] }, keep: { command: 'new' } },
      }),
    );
    await s.wave(['mcp', 'add', 'keep', '--', 'old']);
    const r = await s.wave(['mcp', 'import', '--from', 'claude-desktop', '--yes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('added   memory');
    expect(r.stdout).toContain('skipped keep');
    const file = JSON.parse(await readFile(join(s.home, 'mcp.json'), 'utf8'));
    expect(file.mcpServers.keep.command).toBe('old');
    expect(file.mcpServers.memory.command).toBe('npx');
  });

  it("imports Claude Code's ~/.claude.json (global and this project's servers) and Cursor's two files", async () => {
    const s = await sandbox();
    const userHome = join(s.root, 'user-home');
    await writeFile(
      join(userHome, '.claude.json'),
      JSON.stringify({
        numStartups: 3,
        mcpServers: { cc_global: { command: 'node', args: ['g.js'] } },
        projects: {
          [s.workdir]: { mcpServers: { cc_project: { type: 'http', url: 'https://cc.example/mcp' } } },
          '/some/other/project': { mcpServers: { cc_other: { command: 'nope' } } },
        },
      }),
    );
    let r = await s.wave(['mcp', 'import', '--from', 'claude-code', '--yes']);
    expect(r.code).toBe(0);
    const file = join(s.home, 'mcp.json');
    expect(r.stdout).toContain(`Will add to ${file}:`);
    expect(r.stdout).toContain(`cc_project  (from claude-code: ${join(userHome, '.claude.json')})`);
    let servers = JSON.parse(await readFile(file, 'utf8')).mcpServers;
    expect(Object.keys(servers).sort()).toEqual(['cc_global', 'cc_project']);

    await mkdir(join(s.workdir, '.cursor'), { recursive: true });
    await mkdir(join(userHome, '.cursor'), { recursive: true });
    await writeFile(
      join(s.workdir, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { cur_project: { command: 'node', args: ['p.js'] } } }),
    );
    await writeFile(
      join(userHome, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { cur_user: { url: 'https://cur.example/mcp' } } }),
    );
    r = await s.wave(['mcp', 'import', '--from', 'cursor', '--yes', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).results).toEqual([
      { name: 'cur_project', result: 'added' },
      { name: 'cur_user', result: 'added' },
    ]);
    servers = JSON.parse(await readFile(file, 'utf8')).mcpServers;
    expect(servers.cur_project).toEqual({ command: 'node', args: ['p.js'] });
    expect(servers.cur_user).toEqual({ url: 'https://cur.example/mcp' });
  });

  it('imports a VS Code file (servers key) given by path', async () => {
    const s = await sandbox();
    const f = join(s.root, 'vs.json');
    await writeFile(f, '{ "servers": { "v": { "type": "stdio", "command": "node" } }, }');
    const r = await s.wave([
      'mcp',
      'import',
      '--from',
      'vscode',
      '--path',
      f,
      '--yes',
      '--scope',
      'project',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).results).toEqual([{ name: 'v', result: 'added' }]);
  });
});
