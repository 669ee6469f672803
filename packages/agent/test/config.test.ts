import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { ApprovalRequest } from '../src/funnel';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const echo = (text: string) => ({ toolCalls: [{ name: 'mcp__hello__echo', arguments: { text } }] });

describe('configuration sources', () => {
  test('constructor servers beat .mcp.json on the same name', async () => {
    const w = await world();
    await writeFile(
      join(w.tmp.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { hello: w.server('hello', { HELLO_NAME: 'from-project' }) } }),
    );
    const agent = await w.agent({
      steps: [{ text: 'a' }],
      mcpServers: {
        hello: w.server('hello', {
          HELLO_NAME: 'from-constructor',
          HELLO_INSTRUCTIONS: 'I am the constructor one.',
        }),
      },
    });
    const [view] = agent.getMcpServers();
    expect(view?.source).toBe('constructor');
    expect(agent.getMcpServers()).toHaveLength(1);
    await agent.sendMessage('hi');
    expect(agent.getMcpServers()[0]?.instructions).toBe('I am the constructor one.');
  });

  test('a bad <home>/mcp.json is reported and project servers still work', async () => {
    const w = await world();
    await writeFile(join(w.tmp.home, 'mcp.json'), '{ "mcpServers": { oops');
    await writeFile(join(w.tmp.workdir, '.mcp.json'), JSON.stringify({ mcpServers: { hello: w.server() } }));
    const agent = await w.agent({
      steps: [echo('from project'), { text: 'ok' }],
      permissions: { allow: ['mcp__hello__echo'] },
    });
    const issues = agent.getConfigIssues();
    expect(issues.some((i) => i.severity === 'error' && i.file === join(w.tmp.home, 'mcp.json'))).toBe(true);
    const [view] = agent.getMcpServers();
    expect(view?.source).toBe('project');
    expect(view?.file).toBe(join(w.tmp.workdir, '.mcp.json'));
    await agent.sendMessage('go');
    expect(textOf(agent.getMessages().find((m) => m.role === 'tool')?.content)).toBe('from project');
  });

  test("a project file's approveTools does not skip approval (it is only a hint); the user file's does", async () => {
    const w = await world();
    await writeFile(
      join(w.tmp.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { hello: { ...w.server(), approveTools: ['*'] } } }),
    );
    const asked: ApprovalRequest[] = [];
    const agent = await w.agent({
      steps: [echo('x'), { text: 'ok' }],
      canUseTool: async (r) => {
        asked.push(r);
        return 'deny';
      },
    });
    await agent.sendMessage('go');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.fullName).toBe('mcp__hello__echo');
    expect(asked[0]?.requestedApprovals).toEqual(['*']);
    const tool = agent.getMessages().find((m) => m.role === 'tool');
    expect(tool?.role === 'tool' && tool.isError).toBe(true);
    expect(textOf(tool?.content)).toContain('Permission denied');

    // Control: the same glob from the user file is consent.
    const w2 = await world();
    await writeFile(
      join(w2.tmp.home, 'mcp.json'),
      JSON.stringify({ mcpServers: { hello: { ...w2.server(), approveTools: ['echo'] } } }),
    );
    const asked2: ApprovalRequest[] = [];
    const agent2 = await w2.agent({
      steps: [echo('y'), { text: 'ok' }],
      canUseTool: async (r) => {
        asked2.push(r);
        return 'deny';
      },
    });
    await agent2.sendMessage('go');
    expect(asked2).toHaveLength(0);
    expect(textOf(agent2.getMessages().find((m) => m.role === 'tool')?.content)).toBe('y');
  });

  test('isServerAllowed gates project servers before any dial; a refused server is disabled and never started', async () => {
    const w = await world();
    await writeFile(join(w.tmp.workdir, '.mcp.json'), JSON.stringify({ mcpServers: { hello: w.server() } }));
    const consulted: string[] = [];
    const agent = await w.agent({
      steps: [echo('x'), { text: 'ok' }],
      permissions: { allow: ['mcp__*'] },
      mcpServers: { mine: w.server('hello', { HELLO_NAME: 'mine' }) },
      isServerAllowed: (s) => {
        consulted.push(`${s.source}:${s.name}`);
        return false;
      },
    });
    expect(consulted).toEqual(['project:hello']); // constructor and user servers are the host's own
    const views = Object.fromEntries(agent.getMcpServers().map((v) => [v.name, v]));
    expect(views.hello?.status).toBe('disabled');
    await agent.sendMessage('go');
    expect(agent.getMcpServers().find((v) => v.name === 'hello')?.status).toBe('disabled');
    expect(agent.getMcpServers().find((v) => v.name === 'mine')?.status).toBe('connected');
    const tool = agent.getMessages().find((m) => m.role === 'tool');
    expect(textOf(tool?.content)).toContain('unavailable because');
    expect(textOf(tool?.content)).toContain('not allowed by the host');
  });

  test('plugin servers are gated by isServerAllowed too, and their approveTools is only a hint', async () => {
    const w = await world();
    const plugin = (name: string) => ({
      name,
      root: w.tmp.root,
      mcpServers: { [name]: { ...w.server(), approveTools: ['*'] } },
    });
    const consulted: string[] = [];
    const asked: ApprovalRequest[] = [];
    const agent = await w.agent({
      steps: [
        { toolCalls: [{ name: 'mcp__refused__echo', arguments: { text: 'r' } }] },
        { toolCalls: [{ name: 'mcp__trusted__echo', arguments: { text: 't' } }] },
        { text: 'ok' },
      ],
      toolMode: 'flat',
      plugins: [plugin('refused'), plugin('trusted')],
      isServerAllowed: (s) => {
        consulted.push(`${s.source}:${s.name}`);
        return s.name === 'trusted';
      },
      canUseTool: async (r) => {
        asked.push(r);
        return 'allow';
      },
    });
    expect(consulted.sort()).toEqual(['plugin:refused', 'plugin:trusted']);
    const status = () => Object.fromEntries(agent.getMcpServers().map((v) => [v.name, v.status]));
    expect(status()).toEqual({ refused: 'disabled', trusted: 'disconnected' });
    await agent.sendMessage('go');
    expect(status()).toEqual({ refused: 'disabled', trusted: 'connected' });
    const [refused, trusted] = agent
      .getMessages()
      .filter((m) => m.role === 'tool')
      .map((m) => textOf(m.content));
    expect(refused).toContain('not allowed by the host');
    expect(trusted).toBe('t');
    // The plugin's approveTools did not skip the question; it came along as a hint.
    expect(asked.map((a) => [a.fullName, a.requestedApprovals])).toEqual([['mcp__trusted__echo', ['*']]]);
  });

  test('a project server beats a user server of the same name', async () => {
    const w = await world();
    await writeFile(
      join(w.tmp.home, 'mcp.json'),
      JSON.stringify({
        mcpServers: { hello: w.server('hello', { HELLO_INSTRUCTIONS: 'from the user file' }) },
      }),
    );
    await writeFile(
      join(w.tmp.workdir, '.mcp.json'),
      JSON.stringify({
        mcpServers: { hello: w.server('hello', { HELLO_INSTRUCTIONS: 'from the project' }) },
      }),
    );
    const agent = await w.agent({ steps: [{ text: 'a' }] });
    expect(agent.getMcpServers().map((v) => [v.name, v.source, v.file])).toEqual([
      ['hello', 'project', join(w.tmp.workdir, '.mcp.json')],
    ]);
    await agent.sendMessage('hi');
    expect(agent.getMcpServers()[0]?.instructions).toBe('from the project');
  });

  test('getMcpServers shows the cached tools of a disconnected server, never as connected; secrets masked', async () => {
    const w = await world();
    const server = { ...w.server(), env: { ...w.server().env, API_TOKEN: 'very-secret-value' } };
    const first = await w.agent({ steps: [{ text: 'a' }], mcpServers: { hello: server } });
    await first.sendMessage('hi');
    expect(first.getMcpServers()[0]?.fromCache).toBe(false);
    await first.destroy();

    const second = await w.agent({ steps: [], mcpServers: { hello: server } });
    const [view] = second.getMcpServers();
    expect(view?.status).toBe('disconnected');
    expect(view?.fromCache).toBe(true);
    expect(view?.tools.map((t) => t.name)).toContain('echo');
    expect(view?.toolCount).toBe(view?.tools.length);
    expect(typeof view?.lastConnectedAt).toBe('number');
    expect(JSON.stringify(view?.config)).not.toContain('very-secret-value');

    // A changed definition (fingerprint) hides the snapshot.
    const third = await w.agent({
      steps: [],
      mcpServers: { hello: { ...server, args: [...server.args, '--x'] } },
    });
    expect(third.getMcpServers()[0]?.fromCache).toBe(false);
    expect(third.getMcpServers()[0]?.tools).toEqual([]);
  });

  test('a tool list that changed during the session reaches the cache at the next turn end; cached tools are never declared', async () => {
    const w = await world();
    const first = await w.agent({
      steps: [
        { toolCalls: [{ name: 'mcp__hello__add_tool', arguments: { name: 'late' } }] },
        { text: 'a' },
        { text: 'b' },
      ],
      toolMode: 'flat',
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
    });
    await first.sendMessage('add a tool');
    await expect
      .poll(() => first.getMcpServers()[0]?.tools.some((t) => t.name === 'late'), { timeout: 30_000 })
      .toBe(true);
    await first.sendMessage('next turn');
    await first.destroy();

    const model = scriptedModel([{ text: 'c' }]);
    const second = await w.agent({ model, toolMode: 'flat', mcpServers: { hello: w.server() } });
    expect(second.getMcpServers()[0]?.fromCache).toBe(true);
    expect(second.getMcpServers()[0]?.tools.map((t) => t.name)).toContain('late');
    // Cached tools are for the settings page only: a turn with the server off declares none of them.
    await second.disconnectMcpServer('hello');
    await second.sendMessage('hi');
    expect(model.requests[0]?.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__'))).toEqual([]);
    expect(w.procs()).toEqual([]);
  });

  test('tools that change between turns reach the cache at once: a later disconnect shows the new list', async () => {
    const w = await world();
    const trigger = join(w.tmp.root, 'add-tool');
    const annotated = {
      command: process.execPath,
      args: [fileURLToPath(new URL('./fixtures/annotated-server.mjs', import.meta.url))],
      env: { ADD_TOOL_WHEN_FILE: trigger },
    };
    const agent = await w.agent({ steps: [], mcpServers: { ann: annotated } });
    expect((await agent.connectMcpServer('ann')).tools.map((t) => t.name)).toEqual(['look', 'peek', 'touch']);
    await writeFile(trigger, 'between_turns');
    await expect
      .poll(() => agent.getMcpServers()[0]?.tools.some((t) => t.name === 'between_turns'), {
        timeout: 30_000,
      })
      .toBe(true);
    const view = await agent.disconnectMcpServer('ann');
    expect(view.status).toBe('disconnected');
    expect(view.fromCache).toBe(true);
    expect(view.tools.map((t) => t.name)).toContain('between_turns');
    await agent.destroy();
    const next = await w.agent({ steps: [], mcpServers: { ann: annotated } });
    expect(next.getMcpServers()[0]?.tools.map((t) => t.name)).toContain('between_turns');
  });

  test('a corrupt tool cache file counts as no cache: create works, nothing is shown from it', async () => {
    const w = await world();
    await writeFile(join(w.tmp.home, 'mcp-tools-cache.json'), '{ "version": 1, "entries": [ oops');
    const agent = await w.agent({ steps: [{ text: 'a' }], mcpServers: { hello: w.server() } });
    expect(agent.getMcpServers()[0]).toMatchObject({ status: 'disconnected', fromCache: false, tools: [] });
    await agent.sendMessage('hi');
    expect(agent.getMcpServers()[0]?.status).toBe('connected');
  });

  test('an explicit connect dials at once and writes the tool snapshot cache', async () => {
    const w = await world();
    const first = await w.agent({ steps: [], mcpServers: { hello: w.server() } });
    const view = await first.connectMcpServer('hello');
    expect(view.status).toBe('connected');
    expect(view.fromCache).toBe(false);
    await first.destroy();
    const second = await w.agent({ steps: [], mcpServers: { hello: w.server() } });
    expect(second.getMcpServers()[0]?.fromCache).toBe(true);
    await expect(second.connectMcpServer('nope')).rejects.toThrow(/No MCP server named "nope"/);
  });

  test('reloadMcpConfig picks up a new server from the project file', async () => {
    const w = await world();
    const agent = await w.agent({ steps: [] });
    expect(agent.getMcpServers()).toEqual([]);
    await mkdir(w.tmp.workdir, { recursive: true });
    await writeFile(join(w.tmp.workdir, '.mcp.json'), JSON.stringify({ mcpServers: { hello: w.server() } }));
    let changed = 0;
    agent.on('mcpServersChanged', () => {
      changed += 1;
    });
    await agent.reloadMcpConfig();
    expect(agent.getMcpServers().map((s) => s.name)).toEqual(['hello']);
    expect(changed).toBeGreaterThan(0);
    expect(w.procs()).toEqual([]);
  });
});
