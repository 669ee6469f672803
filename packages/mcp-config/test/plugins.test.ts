import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../src/load';
import { discoverPlugins } from '../src/plugins';

async function home(): Promise<string> {
  return tempDir('wave-plugins-');
}

async function put(file: string, text: string): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, text);
}

describe('discoverPlugins', () => {
  it('no plugins folder: nothing, no issue', async () => {
    expect(await discoverPlugins({ home: await home() })).toEqual({ plugins: [], issues: [] });
  });

  it('reads the Claude Code layout: .claude-plugin/plugin.json + .mcp.json at the root', async () => {
    const h = await home();
    const root = join(h, 'plugins', 'gh');
    await put(
      join(root, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'github-tools', version: '1.2.0', description: 'GitHub' }),
    );
    await put(
      join(root, '.mcp.json'),
      '{ // comment\n "mcpServers": { "gh": { "command": "${CLAUDE_PLUGIN_ROOT}/bin/server", "args": [] } } }',
    );
    const { plugins, issues } = await discoverPlugins({ home: h });
    expect(issues).toEqual([]);
    expect(plugins).toHaveLength(1);
    expect(plugins[0]).toMatchObject({
      name: 'github-tools',
      dir: 'gh',
      root,
      version: '1.2.0',
      description: 'GitHub',
    });
    // The servers load as the plugin source, with the plugin root substituted.
    const loaded = await loadMcpConfig({ workdir: h, home: h, env: {}, plugins });
    const gh = loaded.servers.find((s) => s.name === 'gh');
    expect(gh?.source).toBe('plugin');
    expect(gh?.plugin).toBe('github-tools');
    expect(gh?.config.command).toBe(`${root}/bin/server`);
  });

  it('plugin.json at the root with inline mcpServers; name defaults to the folder', async () => {
    const h = await home();
    await put(
      join(h, 'plugins', 'mem', 'plugin.json'),
      JSON.stringify({ mcpServers: { m: { command: 'node' } } }),
    );
    const { plugins } = await discoverPlugins({ home: h });
    expect(plugins.map((p) => [p.name, Object.keys(p.mcpServers)])).toEqual([['mem', ['m']]]);
  });

  it('bad plugins are reported and skipped; the good one loads', async () => {
    const h = await home();
    await put(join(h, 'plugins', 'a-bad', 'plugin.json'), '{ not json');
    await put(join(h, 'plugins', 'b-badname', 'plugin.json'), JSON.stringify({ name: '../evil' }));
    await put(
      join(h, 'plugins', 'c-good', '.mcp.json'),
      JSON.stringify({ mcpServers: { s: { command: 'x' } } }),
    );
    await put(join(h, 'plugins', 'd-dup', 'plugin.json'), JSON.stringify({ name: 'c-good' }));
    await put(join(h, 'plugins', 'e-notaplugin', 'README.md'), 'hi');
    await put(join(h, 'plugins', 'f-fifo-like', '.mcp.json', 'x'), 'a directory where a file should be');
    const { plugins, issues } = await discoverPlugins({ home: h });
    expect(plugins.map((p) => p.name)).toEqual(['c-good']);
    expect(issues.map((i) => [i.code, i.plugin])).toEqual([
      ['PLUGIN_INVALID', 'a-bad'],
      ['PLUGIN_INVALID', 'b-badname'],
      ['PLUGIN_INVALID', 'c-good'],
      ['PLUGIN_INVALID', 'f-fifo-like'],
    ]);
    for (const i of issues) expect(i.message).toMatch(/skipped/);
  });
});
