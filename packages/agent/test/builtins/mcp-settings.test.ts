import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMcpConfig, type PluginServers } from '@wave/mcp-config';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it, test } from 'vitest';
import { MCP_SETTINGS_TOOL, maskServerConfig, mcpSettingsTool } from '../../src/builtins/mcp-settings';
import type { BuiltinContext } from '../../src/builtins/types';

interface Env {
  ctx: BuiltinContext;
  home: string;
  workdir: string;
  userFile: string;
  projectFile: string;
  reloads: () => number;
}

function setup(
  options: {
    user?: string;
    project?: string;
    constructorServers?: Record<string, unknown>;
    plugins?: PluginServers[];
    reload?: () => Promise<void>;
  } = {},
): Env {
  const base = tempDir('wave-settings-');
  const home = join(base, 'home');
  const workdir = join(base, 'work');
  mkdirSync(workdir, { recursive: true });
  const userFile = join(home, 'mcp.json');
  const projectFile = join(workdir, '.mcp.json');
  if (options.user !== undefined) {
    mkdirSync(home, { recursive: true });
    writeFileSync(userFile, options.user);
  }
  if (options.project !== undefined) writeFileSync(projectFile, options.project);
  let reloads = 0;
  const ctx: BuiltinContext = {
    workdir,
    home,
    sessionDir: join(base, 'session'),
    reloadConfig:
      options.reload ??
      (async () => {
        reloads += 1;
      }),
  };
  if (options.constructorServers !== undefined || options.plugins !== undefined) {
    ctx.servers = async () =>
      (
        await loadMcpConfig({
          workdir,
          home,
          env: {},
          ...(options.constructorServers ? { constructorServers: options.constructorServers } : {}),
          ...(options.plugins ? { plugins: options.plugins } : {}),
        })
      ).servers;
  }
  return { ctx, home, workdir, userFile, projectFile, reloads: () => reloads };
}

const PROJECT_WITH_COMMENTS = `{
  // servers for this repository
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }, // keep me
    /* the docs server */
    "docs": { "url": "https://docs.example.com/mcp" }
  }
}
`;

describe('McpSettings', () => {
  it('always asks for approval', () => {
    expect(mcpSettingsTool.alwaysAsk).toBe(true);
    expect(mcpSettingsTool.declaration.name).toBe(MCP_SETTINGS_TOOL);
  });

  describe('list', () => {
    it('says when nothing is configured, and names both files', async () => {
      const env = setup();
      const r = await mcpSettingsTool.run({ action: 'list' }, env.ctx);
      expect(r.isError).toBeUndefined();
      expect(r.content).toContain('No MCP servers are configured.');
      expect(r.content).toContain(env.userFile);
      expect(r.content).toContain(env.projectFile);
    });

    it('lists servers with source and file, secrets masked', async () => {
      const env = setup({
        user: JSON.stringify({
          mcpServers: {
            gh: {
              command: 'gh-mcp',
              readOnlyTools: { 'get_*': true },
              // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-config's variable syntax, not a template
              env: { GITHUB_TOKEN: 'ghp_LITERALSECRET', OTHER: '${FROM_ENV}' },
            },
            remote: {
              url: 'https://user:hunter2pass@api.example.com/mcp?token=QUERYSECRET',
              headers: { Authorization: 'Bearer HEADERSECRET' },
            },
          },
        }),
        project: PROJECT_WITH_COMMENTS,
      });
      const r = await mcpSettingsTool.run({ action: 'list' }, env.ctx);
      expect(r.content).toContain('4 MCP servers configured');
      for (const secret of ['ghp_LITERALSECRET', 'hunter2pass', 'QUERYSECRET', 'HEADERSECRET']) {
        expect(r.content).not.toContain(secret);
      }
      const payload = JSON.parse(r.content.slice(r.content.indexOf('\n') + 1));
      const gh = payload.servers.find((s: { name: string }) => s.name === 'gh');
      expect(gh).toMatchObject({
        source: 'user',
        file: env.userFile,
        editable: true,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-config's variable syntax, not a template
        env: { GITHUB_TOKEN: '****', OTHER: '${FROM_ENV}' },
        readOnlyTools: { 'get_*': true },
      });
      const remote = payload.servers.find((s: { name: string }) => s.name === 'remote');
      expect(remote.headers).toEqual({ Authorization: 'Bearer ****' });
      expect(payload.servers.find((s: { name: string }) => s.name === 'memory')).toMatchObject({
        source: 'project',
        file: env.projectFile,
      });
    });

    it('shows plugin and constructor servers as not editable, and file problems', async () => {
      const env = setup({
        user: '{ "mcpServers": { broken',
        constructorServers: { host: { command: 'host-server' } },
        plugins: [
          { name: 'tools-plugin', root: '/opt/plugin', mcpServers: { fromplugin: { command: 'p' } } },
        ],
      });
      const r = await mcpSettingsTool.run({ action: 'list' }, env.ctx);
      const payload = JSON.parse(r.content.slice(r.content.indexOf('\n') + 1));
      expect(
        payload.servers.map((s: { name: string; source: string; editable: boolean }) => [
          s.name,
          s.source,
          s.editable,
        ]),
      ).toEqual([
        ['host', 'constructor', false],
        ['fromplugin', 'plugin', false],
      ]);
      expect(payload.issues.join('\n')).toContain(env.userFile);
    });
  });

  describe('add', () => {
    it('creates the user file by default and reloads', async () => {
      const env = setup();
      const r = await mcpSettingsTool.run(
        {
          action: 'add',
          name: 'memory',
          config: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] },
        },
        env.ctx,
      );
      expect(r.isError).toBeUndefined();
      expect(r.content).toContain(`Added server "memory" to ${env.userFile} (the file was created)`);
      expect(r.content).toContain('The configuration was reloaded.');
      expect(env.reloads()).toBe(1);
      expect(JSON.parse(readFileSync(env.userFile, 'utf8'))).toEqual({
        mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } },
      });
      expect(statSync(env.userFile).mode & 0o777).toBe(0o600);
    });

    it('adds to the project file keeping its comments, and masks secrets in its answer', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const r = await mcpSettingsTool.run(
        {
          action: 'add',
          name: 'search',
          scope: 'project',
          config: { url: 'https://search.example.com/mcp', headers: { 'X-Api-Key': 'LITERALKEY' } },
        },
        env.ctx,
      );
      expect(r.isError).toBeUndefined();
      expect(r.content).not.toContain('LITERALKEY');
      const text = readFileSync(env.projectFile, 'utf8');
      expect(text).toContain('// servers for this repository');
      expect(text).toContain('// keep me');
      expect(text).toContain('/* the docs server */');
      expect(text).toContain('LITERALKEY');
      const loaded = await loadMcpConfig({ workdir: env.workdir, home: env.home, env: {} });
      expect(loaded.servers.map((s) => s.name)).toEqual(['memory', 'docs', 'search']);
    });

    it('warns that approveTools in a project file is not applied', async () => {
      const env = setup();
      const r = await mcpSettingsTool.run(
        { action: 'add', name: 'x', scope: 'project', config: { command: 'x', approveTools: ['*'] } },
        env.ctx,
      );
      expect(r.content).toMatch(/Warnings:\n- warning: .*approveTools/);
    });

    it('refuses a name that exists, and an invalid server, changing nothing', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const exists = await mcpSettingsTool.run(
        { action: 'add', name: 'memory', scope: 'project', config: { command: 'other' } },
        env.ctx,
      );
      expect(exists.isError).toBe(true);
      expect(exists.content).toContain('already exists');
      const invalid = await mcpSettingsTool.run(
        { action: 'add', name: 'bad', scope: 'project', config: { command: 'x', url: 'https://x' } },
        env.ctx,
      );
      expect(invalid.isError).toBe(true);
      expect(invalid.content).toContain('not valid');
      expect(readFileSync(env.projectFile, 'utf8')).toBe(PROJECT_WITH_COMMENTS);
      expect(env.reloads()).toBe(0);
    });

    it('says that it replaces a plugin server of the same name', async () => {
      const env = setup({
        plugins: [{ name: 'pl', root: '/opt/pl', mcpServers: { shared: { command: 'p' } } }],
      });
      const r = await mcpSettingsTool.run(
        { action: 'add', name: 'shared', config: { command: 'mine' } },
        env.ctx,
      );
      expect(r.content).toContain('replaces the server of the same name from plugin "pl"');
    });
  });

  describe('update', () => {
    it('replaces the entry in the file that defines it, keeping comments', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const r = await mcpSettingsTool.run(
        { action: 'update', name: 'docs', config: { url: 'https://docs.example.com/v2/mcp' } },
        env.ctx,
      );
      expect(r.isError).toBeUndefined();
      expect(r.content).toContain(`Replaced server "docs" in ${env.projectFile}`);
      const text = readFileSync(env.projectFile, 'utf8');
      expect(text).toContain('https://docs.example.com/v2/mcp');
      expect(text).not.toContain('"https://docs.example.com/mcp"');
      expect(text).toContain('// keep me');
      expect(env.reloads()).toBe(1);
    });

    it('refuses a server that is in neither file', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const r = await mcpSettingsTool.run(
        { action: 'update', name: 'nope', config: { command: 'x' } },
        env.ctx,
      );
      expect(r.isError).toBe(true);
      expect(r.content).toContain('There is no server "nope"');
      expect(r.content).toContain('Use action "add"');
    });

    it('refuses plugin and constructor servers (read-only)', async () => {
      const env = setup({
        constructorServers: { host: { command: 'h' } },
        plugins: [{ name: 'pl', root: '/opt/pl', mcpServers: { plug: { command: 'p' } } }],
      });
      const plug = await mcpSettingsTool.run(
        { action: 'update', name: 'plug', config: { command: 'x' } },
        env.ctx,
      );
      expect(plug).toEqual({
        isError: true,
        content: expect.stringContaining('plugin servers are read-only'),
      });
      const host = await mcpSettingsTool.run(
        { action: 'update', name: 'host', config: { command: 'x' } },
        env.ctx,
      );
      expect(host).toEqual({
        isError: true,
        content: expect.stringContaining('set by the host application'),
      });
      expect(existsSync(env.userFile)).toBe(false);
    });

    it('asks for a scope when both files define the server', async () => {
      const both = '{ "mcpServers": { "twin": { "command": "t" } } }';
      const env = setup({ user: both, project: both });
      const r = await mcpSettingsTool.run(
        { action: 'update', name: 'twin', config: { command: 'u' } },
        env.ctx,
      );
      expect(r.isError).toBe(true);
      expect(r.content).toContain('defined in both');
      const ok = await mcpSettingsTool.run(
        { action: 'update', name: 'twin', scope: 'user', config: { command: 'u' } },
        env.ctx,
      );
      expect(ok.isError).toBeUndefined();
      expect(readFileSync(env.projectFile, 'utf8')).toBe(both);
    });
  });

  describe('remove', () => {
    it('removes from the file that defines it, keeping the rest', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const r = await mcpSettingsTool.run({ action: 'remove', name: 'memory' }, env.ctx);
      expect(r.isError).toBeUndefined();
      expect(r.content).toContain(`Removed server "memory" from ${env.projectFile}.`);
      const text = readFileSync(env.projectFile, 'utf8');
      expect(text).not.toContain('server-memory');
      expect(text).toContain('/* the docs server */');
      expect(env.reloads()).toBe(1);
    });

    it('refuses a plugin server', async () => {
      const env = setup({
        plugins: [{ name: 'pl', root: '/opt/pl', mcpServers: { plug: { command: 'p' } } }],
      });
      const r = await mcpSettingsTool.run({ action: 'remove', name: 'plug' }, env.ctx);
      expect(r.isError).toBe(true);
      expect(r.content).toContain('plugin servers are read-only');
    });

    it('refuses a name not in the chosen file', async () => {
      const env = setup({ project: PROJECT_WITH_COMMENTS });
      const r = await mcpSettingsTool.run({ action: 'remove', name: 'memory', scope: 'user' }, env.ctx);
      expect(r.isError).toBe(true);
      expect(r.content).toContain(`There is no server "memory" in ${env.userFile}`);
    });
  });

  it('reports a failed reload without hiding the saved change', async () => {
    const env = setup({
      reload: async () => {
        throw new Error('pool is closing');
      },
    });
    const r = await mcpSettingsTool.run({ action: 'add', name: 'a', config: { command: 'a' } }, env.ctx);
    expect(r.content).toContain(
      'The file was saved, but reloading the configuration failed (pool is closing)',
    );
    expect(existsSync(env.userFile)).toBe(true);
  });

  it('changes nothing when the turn is already cancelled', async () => {
    const env = setup();
    const controller = new AbortController();
    controller.abort();
    const r = await mcpSettingsTool.run(
      { action: 'add', name: 'a', config: { command: 'a' } },
      { ...env.ctx, signal: controller.signal },
    );
    expect(r).toEqual({ isError: true, content: 'Cancelled; nothing was changed.' });
    expect(existsSync(env.userFile)).toBe(false);
  });

  it('reports a malformed file with its path', async () => {
    const env = setup({ project: '{ "mcpServers": { "a": ' });
    const r = await mcpSettingsTool.run(
      { action: 'add', name: 'b', scope: 'project', config: { command: 'b' } },
      env.ctx,
    );
    expect(r.isError).toBe(true);
    expect(r.content).toContain(`${env.projectFile} is not valid JSON`);
  });

  test.each([
    { args: {}, message: '"action" must be one of "list", "add", "update", "remove"' },
    { args: { action: 'delete' }, message: '"action" must be one of' },
    { args: { action: 'add', config: { command: 'x' } }, message: 'needs "name"' },
    { args: { action: 'remove', name: '' }, message: 'needs "name"' },
    { args: { action: 'add', name: 'x' }, message: 'needs "config"' },
    { args: { action: 'update', name: 'x', config: ['command'] }, message: 'needs "config"' },
    { args: { action: 'list', scope: 'global' }, message: '"scope" must be "user"' },
    // Any name without control characters is valid (dots and spaces too); a tab is not.
    { args: { action: 'add', name: 'bad\tname', config: { command: 'x' } }, message: 'control character' },
  ])('bad input $args', async ({ args, message }) => {
    const env = setup();
    const r = await mcpSettingsTool.run(args, env.ctx);
    expect(r.isError).toBe(true);
    expect(r.content).toContain(message);
    expect(env.reloads()).toBe(0);
  });
});

describe('maskServerConfig', () => {
  test.each([
    { config: { command: 'x', env: { T: 'abc' } }, expected: { command: 'x', env: { T: '****' } } },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-config's variable syntax, not a template
    { config: { env: { T: '${T}' } }, expected: { env: { T: '${T}' } } },
    { config: { url: 'https://h/mcp?api_key=k1' }, expected: { url: 'https://h/mcp?api_key=****' } },
    { config: { headers: { A: 'Bearer x' } }, expected: { headers: { A: 'Bearer ****' } } },
    { config: { args: ['--token', 'visible'] }, expected: { args: ['--token', 'visible'] } },
  ])('$config', ({ config, expected }) => {
    expect(maskServerConfig(config)).toEqual(expected);
  });
});
