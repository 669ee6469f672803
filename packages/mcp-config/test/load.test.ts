import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { type ConfigFs, nodeConfigFs } from '../src/fs';
import { loadMcpConfig } from '../src/load';

function setup() {
  const home = tempDir('mcp-home-');
  const workdir = tempDir('mcp-work-');
  const writeUser = (text: string) => writeFileSync(join(home, 'mcp.json'), text);
  const writeProject = (text: string) => writeFileSync(join(workdir, '.mcp.json'), text);
  return { home, workdir, writeUser, writeProject };
}

/** A `.mcp.json` as Claude Code writes it (`claude mcp add --scope project`), plus the other shapes hosts write. */
const REALISTIC = `{
  "mcpServers": {
    "filesystem": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/home/me/projects"
      ],
      "env": {}
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {
        "Authorization": "Bearer \${GITHUB_PERSONAL_ACCESS_TOKEN}"
      }
    },
    "asana": {
      "type": "sse",
      "url": "https://mcp.asana.com/sse"
    },
    "sentry": {
      "command": "uvx",
      "args": ["mcp-server-sentry", "--auth-token", "\${SENTRY_TOKEN:-none}"],
      "env": { "SENTRY_HOST": "https://sentry.io" }
    },
    "linear": {
      "url": "https://mcp.linear.app/mcp"
    }
  }
}
`;

describe('loadMcpConfig', () => {
  it('no files, no options: nothing, silently', async () => {
    const { home, workdir } = setup();
    const r = await loadMcpConfig({ workdir, home, env: {} });
    expect(r).toEqual({
      servers: [],
      issues: [],
      files: { user: join(home, 'mcp.json'), project: join(workdir, '.mcp.json') },
    });
  });

  it('a home directory that does not exist is fine', async () => {
    const { workdir } = setup();
    const r = await loadMcpConfig({ workdir, home: join(workdir, 'no', 'such', 'home'), env: {} });
    expect(r.issues).toEqual([]);
  });

  it('loads a realistic .mcp.json as other hosts write it, unchanged', async () => {
    const { home, workdir, writeProject } = setup();
    writeProject(REALISTIC);
    const env = { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x' };
    const r = await loadMcpConfig({ workdir, home, env });
    expect(r.issues).toEqual([]);
    const written = (JSON.parse(REALISTIC) as { mcpServers: Record<string, Record<string, unknown>> })
      .mcpServers;
    expect(r.servers.map((s) => s.name)).toEqual(Object.keys(written));
    for (const s of r.servers) {
      expect(s.source).toBe('project');
      expect(s.file).toBe(join(workdir, '.mcp.json'));
      expect(s.connectable).toBe(true);
      // raw is exactly what the file says
      expect(s.raw).toEqual(written[s.name]);
    }
    const by = Object.fromEntries(r.servers.map((s) => [s.name, s]));
    expect(by.filesystem!.config).toEqual({ ...written.filesystem, type: 'stdio' });
    expect(by.github!.config).toEqual({
      type: 'http',
      url: 'https://api.githubcopilot.com/mcp/',
      headers: { Authorization: 'Bearer ghp_x' },
    });
    expect(by.asana!.transport).toBe('sse');
    expect(by.sentry!.config.args).toEqual(['mcp-server-sentry', '--auth-token', 'none']);
    expect(by.sentry!.transport).toBe('stdio');
    expect(by.linear!.transport).toBe('http');
  });

  it('user file: registered for any workdir; project overrides user; constructor overrides both', async () => {
    const { home, workdir, writeUser, writeProject } = setup();
    writeUser(
      '{"mcpServers": {"db": {"command": "user-db"}, "search": {"command": "rg"}, "ctor": {"command": "u"}}}',
    );
    writeProject('{"mcpServers": {"db": {"command": "project-db"}, "ctor": {"command": "p"}}}');
    const r = await loadMcpConfig({ workdir, home, env: {}, constructorServers: { ctor: { command: 'c' } } });
    expect(r.issues).toEqual([]);
    expect(r.servers.map((s) => [s.name, s.source, s.config.command])).toEqual([
      ['ctor', 'constructor', 'c'],
      ['db', 'project', 'project-db'],
      ['search', 'user', 'rg'],
    ]);
    expect(r.servers[0]!.shadowed!.map((s) => [s.source, s.file])).toEqual([
      ['project', join(workdir, '.mcp.json')],
      ['user', join(home, 'mcp.json')],
    ]);
    const other = tempDir('mcp-other-');
    const elsewhere = await loadMcpConfig({ workdir: other, home, env: {} });
    expect(elsewhere.servers.map((s) => [s.name, s.source])).toEqual([
      ['db', 'user'],
      ['search', 'user'],
      ['ctor', 'user'],
    ]);
    // same user server, different workdir: different fingerprint
    expect(elsewhere.servers[0]!.fingerprint).not.toBe(
      (await loadMcpConfig({ workdir: tempDir(), home, env: {} })).servers[0]!.fingerprint,
    );
  });

  it.each([
    ['user', 'project'],
    ['project', 'user'],
  ] as const)('a malformed %s file is reported and skipped; %s and constructor load', async (bad, good) => {
    const { home, workdir, writeUser, writeProject } = setup();
    const write = { user: writeUser, project: writeProject };
    write[bad]('{"mcpServers": {"x": {"command": "a"},,}');
    write[good]('{"mcpServers": {"ok": {"command": "b"}}}');
    const r = await loadMcpConfig({ workdir, home, env: {}, constructorServers: { c: { command: 'c' } } });
    expect(r.servers.map((s) => [s.name, s.source])).toEqual(
      good === 'project'
        ? [
            ['c', 'constructor'],
            ['ok', 'project'],
          ]
        : [
            ['c', 'constructor'],
            ['ok', 'user'],
          ],
    );
    expect(r.issues).toEqual([
      expect.objectContaining({
        code: 'CONFIG_MALFORMED',
        severity: 'error',
        source: bad,
        file: bad === 'user' ? join(home, 'mcp.json') : join(workdir, '.mcp.json'),
      }),
    ]);
  });

  it('a config file that is a directory is reported', async () => {
    const { home, workdir } = setup();
    mkdirSync(join(home, 'mcp.json'));
    const r = await loadMcpConfig({ workdir, home, env: {} });
    expect(r.issues).toEqual([expect.objectContaining({ code: 'CONFIG_IO', source: 'user' })]);
    expect(r.issues[0]!.message).toContain('directory');
  });

  it('a huge config file is not read', async () => {
    const { home, workdir, writeProject } = setup();
    writeProject(`{"mcpServers": {}, "pad": "${'x'.repeat(4 * 1024 * 1024)}"}`);
    const r = await loadMcpConfig({ workdir, home, env: {} });
    expect(r.issues).toEqual([expect.objectContaining({ code: 'CONFIG_IO', source: 'project' })]);
  });

  it.each(['EACCES', 'EPERM'])(
    'an unreadable file (%s, injected) is CONFIG_PERMISSION; the rest loads',
    async (code) => {
      const { home, workdir, writeUser, writeProject } = setup();
      writeUser('{"mcpServers": {"u": {"command": "x"}}}');
      writeProject('{"mcpServers": {"p": {"command": "x"}}}');
      const fs: ConfigFs = {
        ...nodeConfigFs,
        readFile: async (path) => {
          if (path.endsWith('.mcp.json')) throw Object.assign(new Error(code), { code });
          return nodeConfigFs.readFile(path);
        },
      };
      const r = await loadMcpConfig({ workdir, home, env: {}, fs });
      expect(r.servers.map((s) => s.name)).toEqual(['u']);
      expect(r.issues).toEqual([
        expect.objectContaining({ code: 'CONFIG_PERMISSION', source: 'project', severity: 'error' }),
      ]);
      expect(r.issues[0]!.message).toContain(join(workdir, '.mcp.json'));
    },
  );

  it('uses $WAVE_HOME from the given env when no home is passed', async () => {
    const { home, workdir, writeUser } = setup();
    writeUser('{"mcpServers": {"u": {"command": "x"}}}');
    const r = await loadMcpConfig({ workdir, env: { WAVE_HOME: home } });
    expect(r.servers.map((s) => s.name)).toEqual(['u']);
    expect(r.files.user).toBe(join(home, 'mcp.json'));
  });

  it('expands from the given env only', async () => {
    const { home, workdir, writeProject } = setup();
    writeProject('{"mcpServers": {"s": {"command": "x", "args": ["${ONLY_HERE}"]}}}');
    const r = await loadMcpConfig({ workdir, home, env: { ONLY_HERE: 'yes' } });
    expect(r.servers[0]!.config.args).toEqual(['yes']);
  });

  it('plugins: lowest precedence, root substituted, bad plugin specs reported', async () => {
    const { home, workdir, writeUser } = setup();
    writeUser('{"mcpServers": {"shared": {"command": "user"}}}');
    const r = await loadMcpConfig({
      workdir,
      home,
      env: {},
      plugins: [
        {
          name: 'good',
          root: '/plugins/good',
          mcpServers: { shared: { command: 'p' }, own: { command: '${CLAUDE_PLUGIN_ROOT}/srv' } },
        },
        { name: '', root: '/x', mcpServers: {} },
        { name: 'noroot', root: '', mcpServers: {} },
        { name: 'badservers', root: '/x', mcpServers: [] as unknown as Record<string, unknown> },
        null as unknown as { name: string; root: string; mcpServers: Record<string, unknown> },
      ],
    });
    expect(r.servers.map((s) => [s.name, s.source, s.config.command])).toEqual([
      ['shared', 'user', 'user'],
      ['own', 'plugin', '/plugins/good/srv'],
    ]);
    expect(r.issues.map((i) => [i.code, i.plugin])).toEqual([
      ['PLUGIN_INVALID', '#1'],
      ['PLUGIN_INVALID', 'noroot'],
      ['PLUGIN_INVALID', 'badservers'],
      ['PLUGIN_INVALID', '#4'],
    ]);
  });

  it('a constructor option that is not an object is reported, not thrown', async () => {
    const { home, workdir } = setup();
    const r = await loadMcpConfig({
      workdir,
      home,
      env: {},
      constructorServers: 'x' as unknown as Record<string, unknown>,
    });
    expect(r.issues).toEqual([expect.objectContaining({ code: 'CONFIG_MALFORMED', source: 'constructor' })]);
  });

  it('rejects only on programmer error', async () => {
    await expect(loadMcpConfig({} as { workdir: string })).rejects.toMatchObject({
      name: 'McpConfigError',
      code: 'INVALID_OPTIONS',
    });
    await expect(loadMcpConfig({ workdir: '' })).rejects.toThrow(/workdir/);
    await expect(loadMcpConfig({ workdir: tempDir(), plugins: {} as [] })).rejects.toThrow(/plugins/);
  });

  it('makes a relative workdir absolute (fingerprints and paths)', async () => {
    const { home, workdir } = setup();
    const cwd = process.cwd();
    process.chdir(workdir);
    try {
      const r = await loadMcpConfig({
        workdir: '.',
        home,
        env: {},
        constructorServers: { s: { command: 'x' } },
      });
      expect(r.files.project).toBe(join(process.cwd(), '.mcp.json'));
    } finally {
      process.chdir(cwd);
    }
  });
});
