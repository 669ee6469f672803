import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BuiltinTool } from '../src/builtins/types';
import type { ApprovalRequest } from '../src/funnel';
import type { ToolResultMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const toolMessages = (ms: { role: string }[]) => ms.filter((m): m is ToolResultMessage => m.role === 'tool');

describe('built-in tools through the funnel', () => {
  test('ReadOutput pages through a spilled result without asking', async () => {
    const w = await world();
    const asked: ApprovalRequest[] = [];
    const model = scriptedModel([
      { toolCalls: [{ name: 'mcp__hello__big', arguments: { bytes: 30_000 } }] },
      (request) => {
        const last = request.messages.at(-1);
        const text = textOf(last?.content);
        const path = /"path":\s*"([^"]+)"/.exec(text)?.[1] ?? /(\/\S+\.txt)/.exec(text)?.[1] ?? 'missing';
        return { toolCalls: [{ name: 'ReadOutput', arguments: { path, offset: 250, limit: 2 } }] };
      },
      { text: 'ok' },
    ]);
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { hello: w.server() },
      permissions: { allow: ['mcp__hello__big'] },
      canUseTool: async (r) => {
        asked.push(r);
        return 'deny';
      },
    });
    await agent.sendMessage('go');
    const [, page] = toolMessages(agent.getMessages());
    expect(asked).toEqual([]);
    expect(page?.isError).toBeFalsy();
    expect(textOf(page?.content)).toContain('line 000251');
  });

  test('McpSettings always asks, even when a rule allows everything; denied without canUseTool', async () => {
    const w = await world();
    const asked: ApprovalRequest[] = [];
    const agent = await w.agent({
      steps: [
        {
          toolCalls: [
            {
              name: 'McpSettings',
              arguments: {
                action: 'add',
                name: 'added',
                scope: 'user',
                config: { command: 'node', args: ['x.js'] },
              },
            },
          ],
        },
        { text: 'ok' },
      ],
      permissions: { allow: ['*'] },
      canUseTool: async (r) => {
        asked.push(r);
        return 'allow-always';
      },
    });
    await agent.sendMessage('add a server');
    expect(asked.map((a) => [a.fullName, a.reason])).toEqual([['McpSettings', 'always-ask']]);
    expect(await readFile(join(w.tmp.home, 'mcp.json'), 'utf8')).toContain('"added"');
    // The agent reloaded its configuration: the new server is listed, and nothing was started.
    expect(agent.getMcpServers().map((s) => s.name)).toEqual(['added']);
    expect(w.procs()).toEqual([]);

    const w2 = await world();
    const agent2 = await w2.agent({
      steps: [{ toolCalls: [{ name: 'McpSettings', arguments: { action: 'list' } }] }, { text: 'ok' }],
      permissions: { allow: ['*'] },
    });
    await agent2.sendMessage('list');
    expect(textOf(toolMessages(agent2.getMessages())[0]?.content)).toMatch(/^Permission denied: McpSettings/);
  });

  test('McpSettings: allow-always is never remembered, not even when restored by a host', async () => {
    const w = await world();
    const asked: ApprovalRequest[] = [];
    const remembered: string[] = [];
    const list = { toolCalls: [{ name: 'McpSettings', arguments: { action: 'list' } }] };
    const agent = await w.agent({
      steps: [list, list, { text: 'ok' }],
      rememberedApprovals: { McpSettings: 'any-hash' },
      canUseTool: async (r) => {
        asked.push(r);
        return 'allow-always';
      },
    });
    agent.on('allowAlways', (e) => remembered.push(e.fullName));
    await agent.sendMessage('list twice');
    expect(asked.map((a) => [a.fullName, a.reason])).toEqual([
      ['McpSettings', 'always-ask'],
      ['McpSettings', 'always-ask'],
    ]);
    expect(remembered).toEqual([]);
    expect(toolMessages(agent.getMessages()).every((t) => !t.isError)).toBe(true);
  });

  test("a built-in's long text goes through the output guard: cut, spilled, read back with ReadOutput", async () => {
    const w = await world();
    const line = (n: number) => `row ${String(n).padStart(5, '0')}`;
    const long: BuiltinTool = {
      declaration: { name: 'Long', description: 'Returns 3 000 lines.', inputSchema: { type: 'object' } },
      alwaysAsk: false,
      run: async () => ({ content: Array.from({ length: 3000 }, (_, i) => line(i)).join('\n') }),
    };
    const model = scriptedModel([
      { toolCalls: [{ name: 'Long', arguments: {} }] },
      (request) => {
        const text = textOf(request.messages.at(-1)?.content);
        const path = /(\/\S+\.txt)/.exec(text)?.[1] ?? 'missing';
        return { toolCalls: [{ name: 'ReadOutput', arguments: { path, offset: 2999, limit: 1 } }] };
      },
      { text: 'ok' },
    ]);
    const agent = await w.agent({ model, builtins: [long] });
    await agent.sendMessage('go');
    const [cut, page] = toolMessages(agent.getMessages()).map((t) => textOf(t.content));
    expect(cut).not.toContain(line(2999));
    expect(cut).toContain('ReadOutput');
    expect(page).toContain(line(2999));
  });
});
