import { describe, expect, test } from 'vitest';
import type { ApprovalRequest } from '../src/funnel';
import type { ToolResultMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const toolMessages = (ms: { role: string }[]) => ms.filter((m): m is ToolResultMessage => m.role === 'tool');
// hello lists 8 tools; denying 6 leaves 2 visible.
// ReadOutput and McpSettings are declared first in every mode, never folded away.
const BUILTINS = ['ReadOutput', 'McpSettings'];
const hideSix = ['sleep', 'fail', 'big', 'image', 'add_tool', 'remove_tool'].map((t) => `mcp__hello__${t}`);

describe('tool exposure modes, all through the one funnel', () => {
  test('auto: Exec from 5 visible tools on; its nested calls are approved by the leaf full name', async () => {
    const w = await world();
    const asked: ApprovalRequest[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'Exec', arguments: { code: 'return await tools.mcp__hello__echo({ text: "from exec" })' } },
        ],
      },
      { text: 'ok' },
    ]);
    const agent = await w.agent({
      model,
      mcpServers: { hello: w.server() },
      canUseTool: async (r) => {
        asked.push(r);
        return 'allow';
      },
    });
    await agent.sendMessage('go');
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual([...BUILTINS, 'Exec']);
    expect(model.requests[0]?.tools[2]?.description).toContain('mcp__hello__echo');
    expect(asked.map((a) => a.fullName)).toEqual(['mcp__hello__echo']);
    const [t] = toolMessages(agent.getMessages());
    expect(t?.isError).toBeFalsy();
    expect(textOf(t?.content)).toContain('from exec');
  });

  test('auto: flat below 5 visible tools (deny rules count), and flat when Exec is disabled', async () => {
    const w = await world();
    const few = scriptedModel([{ text: 'a' }]);
    const a = await w.agent({
      model: few,
      mcpServers: { hello: w.server() },
      permissions: { deny: hideSix },
    });
    await a.sendMessage('go');
    expect(few.requests[0]?.tools.map((t) => t.name)).toEqual([
      ...BUILTINS,
      'mcp__hello__add',
      'mcp__hello__echo',
    ]);

    const noExec = scriptedModel([{ text: 'a' }]);
    const b = await w.agent({ model: noExec, mcpServers: { hello: w.server() }, enableExec: false });
    await b.sendMessage('go');
    const names = noExec.requests[0]?.tools.map((t) => t.name) ?? [];
    expect(names.slice(0, 2)).toEqual(BUILTINS);
    expect(names.slice(2)).toHaveLength(8);
    expect(names.slice(2).every((n) => n.startsWith('mcp__hello__'))).toBe(true);
  });

  test('gateway: one constant tool; `call` runs the leaf through the funnel, `status` needs no approval', async () => {
    const w = await world();
    const asked: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'mcp', arguments: { action: 'status' } },
          { name: 'mcp', arguments: { action: 'search', query: 'repeat text' } },
        ],
      },
      {
        toolCalls: [
          {
            name: 'mcp',
            arguments: { action: 'call', name: 'mcp__hello__echo', arguments: '{"text":"via gateway"}' },
          },
        ],
      },
      { text: 'ok' },
    ]);
    const agent = await w.agent({
      model,
      toolMode: 'gateway',
      mcpServers: { hello: w.server() },
      canUseTool: async (r) => {
        asked.push(r.fullName);
        return 'allow';
      },
    });
    await agent.sendMessage('go');
    expect(model.requests.map((r) => r.tools.map((t) => t.name))).toEqual(
      Array(3).fill([...BUILTINS, 'mcp']),
    );
    const texts = toolMessages(agent.getMessages()).map((t) => textOf(t.content));
    expect(texts[0]).toContain('hello');
    expect(texts[1]).toContain('mcp__hello__echo');
    expect(texts[2]).toContain('via gateway');
    expect(asked).toEqual(['mcp__hello__echo']);
    // The declaration is byte-identical across requests.
    expect(new Set(model.requests.map((r) => JSON.stringify(r.tools))).size).toBe(1);
  });
});
