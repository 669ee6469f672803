import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setServerDisabled } from '@wave/mcp-config';
import { describe, expect, test } from 'vitest';
import { textOf, world } from './helpers';

const echo = (text: string) => ({ toolCalls: [{ name: 'mcp__hello__echo', arguments: { text } }] });

describe('servers switched off, and installed plugins', () => {
  test('a server turned off on this machine (wave mcp disable) is listed as disabled, quietly, and never started', async () => {
    const w = await world();
    await writeFile(join(w.tmp.home, 'mcp.json'), JSON.stringify({ mcpServers: { hello: w.server() } }));
    await setServerDisabled(w.tmp.home, { name: 'hello', source: 'user' }, true);
    const agent = await w.agent({
      steps: [echo('x'), { text: 'done' }],
      permissions: { allow: ['mcp__hello__*'] },
    });
    const [view] = agent.getMcpServers();
    expect(view).toMatchObject({ name: 'hello', status: 'disabled', disabledReason: 'local' });
    expect(view?.error).toBeUndefined();
    await agent.sendMessage('go');
    // The model's call gets an "unavailable" answer saying what to do; no process was started.
    const result = textOf(agent.getMessages().find((m) => m.role === 'tool')?.content);
    expect(result).toContain('turned off on this machine');
    expect(result).toContain('wave mcp enable hello');
    expect(w.procs()).toEqual([]);
    await expect(agent.connectMcpServer('hello')).resolves.toMatchObject({ status: 'disabled' });
    expect(w.procs()).toEqual([]);
  });

  test('"disabled": true in a file is listed as disabled and never started', async () => {
    const w = await world();
    await writeFile(
      join(w.tmp.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { hello: { ...w.server(), disabled: true } } }),
    );
    const agent = await w.agent({ steps: [{ text: 'hi' }] });
    expect(agent.getMcpServers()[0]).toMatchObject({ status: 'disabled', disabledReason: 'config' });
    expect(agent.getConfigIssues()).toEqual([]);
    await agent.sendMessage('go');
    expect(w.procs()).toEqual([]);
  });

  test('plugins installed under <home>/plugins are found by default; discoverPlugins: false turns that off', async () => {
    const w = await world();
    const root = join(w.tmp.home, 'plugins', 'greeter');
    await mkdir(join(root, '.claude-plugin'), { recursive: true });
    await writeFile(join(root, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'greeter' }));
    await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { hello: w.server() } }));
    await mkdir(join(w.tmp.home, 'plugins', 'broken'), { recursive: true });
    await writeFile(join(w.tmp.home, 'plugins', 'broken', 'plugin.json'), '{ nope');
    const agent = await w.agent({
      steps: [echo('from a plugin'), { text: 'ok' }],
      permissions: { allow: ['mcp__hello__echo'] },
    });
    expect(agent.getMcpServers()).toEqual([expect.objectContaining({ name: 'hello', source: 'plugin' })]);
    expect(agent.getConfigIssues().map((i) => [i.code, i.plugin])).toEqual([['PLUGIN_INVALID', 'broken']]);
    await agent.sendMessage('go');
    expect(textOf(agent.getMessages().find((m) => m.role === 'tool')?.content)).toBe('from a plugin');
    const without = await w.agent({ steps: [], discoverPlugins: false });
    expect(without.getMcpServers()).toEqual([]);
  });
});
