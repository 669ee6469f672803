import { existsSync, readFileSync } from 'node:fs';
import { McpPool } from '@wave/mcp-pool';
import { describe, expect, test } from 'vitest';
import { isAgentError } from '../src/errors';
import type { ToolResultMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const toolMessages = (ms: { role: string }[]) => ms.filter((m): m is ToolResultMessage => m.role === 'tool');

describe('turns', () => {
  test('an aborted turn rejects with TURN_ABORTED and the agent keeps working', async () => {
    const w = await world();
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        controller.abort();
        return { text: 'too late' };
      },
      { text: 'second' },
    ]);
    const agent = await w.agent({ model });
    await expect(agent.sendMessage('one', { signal: controller.signal })).rejects.toSatisfy((e: unknown) =>
      isAgentError(e, 'TURN_ABORTED'),
    );
    const r = await agent.sendMessage('two');
    expect(r.text).toBe('second');
    await expect(Promise.all([agent.sendMessage('a'), agent.sendMessage('b')])).rejects.toSatisfy(
      (e: unknown) => isAgentError(e, 'TURN_IN_PROGRESS'),
    );
  });

  test('a turn cancelled during a tool call still answers every call, so the next request is valid', async () => {
    const w = await world();
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        // Whether the abort lands before or during the 10-minute sleep, the outcome is the same.
        setTimeout(() => controller.abort(), 200);
        return {
          toolCalls: [
            { name: 'mcp__hello__sleep', arguments: { ms: 600_000 } },
            { name: 'mcp__hello__echo', arguments: { text: 'never run' } },
          ],
        };
      },
      { text: 'after' },
    ]);
    const agent = await w.agent({
      model,
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
      toolMode: 'flat',
    });
    await expect(agent.sendMessage('go', { signal: controller.signal })).rejects.toSatisfy((e: unknown) =>
      isAgentError(e, 'TURN_ABORTED'),
    );
    const messages = agent.getMessages();
    const assistant = messages.find((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
    const ids = (assistant as { toolCalls: { id: string }[] }).toolCalls.map((c) => c.id);
    expect(toolMessages(messages).map((m) => m.toolCallId)).toEqual(ids);
    expect(toolMessages(messages).every((m) => m.isError)).toBe(true);
    expect(textOf(toolMessages(messages)[1]?.content)).toContain('Cancelled');
    // The session goes on.
    expect((await agent.sendMessage('again')).text).toBe('after');
  });

  test('a long tool output is cut and spilled to a file of the session; the result says where', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ toolCalls: [{ name: 'mcp__hello__big', arguments: { bytes: 30_000 } }] }, { text: 'ok' }],
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
      toolMode: 'flat',
    });
    await agent.sendMessage('go');
    const text = textOf(toolMessages(agent.getMessages())[0]?.content);
    expect(text.length).toBeLessThan(12_000);
    const path = /(\/\S+)/.exec(text.slice(text.indexOf(w.tmp.home)))?.[1]?.replace(/[).,;:'"`]+$/, '');
    expect(path?.startsWith(w.tmp.home)).toBe(true);
    expect(existsSync(path as string)).toBe(true);
    expect(readFileSync(path as string, 'utf8').length).toBe(30_000);
  });

  test('events: message, toolCall, turnEnd; tools of one response run through the funnel in order', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [
        {
          toolCalls: [
            { name: 'mcp__hello__echo', arguments: { text: 'a' } },
            { name: 'mcp__hello__add', arguments: { a: 2, b: 3 } },
          ],
        },
        { text: 'done' },
      ],
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
    });
    const seen: string[] = [];
    agent.on('message', (m) => seen.push(`message:${m.role}`));
    agent.on('toolCall', (e) => seen.push(`tool:${e.fullName}:${e.isError}`));
    agent.on('turnEnd', (r) => seen.push(`end:${r.text}`));
    await agent.sendMessage('go');
    expect(seen).toEqual([
      'message:user',
      'message:user', // instructions delta
      'message:assistant',
      'tool:mcp__hello__echo:false',
      'tool:mcp__hello__add:false',
      'message:tool',
      'message:tool',
      'message:assistant',
      'end:done',
    ]);
  });

  test('events: approvalRequest before canUseTool, blocked on refused calls, mcpServersChanged versions grow by one', async () => {
    const w = await world();
    const order: string[] = [];
    const calls: { fullName: string; isError: boolean; blocked: boolean; server?: string }[] = [];
    const versions: number[] = [];
    const agent = await w.agent({
      steps: [
        {
          toolCalls: [
            { name: 'mcp__hello__echo', arguments: { text: 'asked' } },
            { name: 'mcp__hello__add', arguments: { a: 1, b: 2 } },
            { name: 'mcp__hello__fail', arguments: {} },
          ],
        },
        { text: 'done' },
      ],
      toolMode: 'flat',
      mcpServers: { hello: w.server() },
      permissions: { deny: ['mcp__hello__add'], allow: ['mcp__hello__fail'] },
      canUseTool: async (r) => {
        order.push(`canUseTool:${r.fullName}`);
        return 'allow';
      },
    });
    agent.on('approvalRequest', (r) => order.push(`approvalRequest:${r.fullName}:${r.reason}:${r.server}`));
    agent.on('toolCall', (e) => {
      const c: (typeof calls)[number] = { fullName: e.fullName, isError: e.isError, blocked: e.blocked };
      if (e.server !== undefined) c.server = e.server;
      calls.push(c);
    });
    agent.on('mcpServersChanged', (e) => versions.push(e.version));
    await agent.sendMessage('go');
    expect(order).toEqual(['approvalRequest:mcp__hello__echo:no-rule:hello', 'canUseTool:mcp__hello__echo']);
    expect(calls).toEqual([
      { fullName: 'mcp__hello__echo', isError: false, blocked: false, server: 'hello' },
      // Refused by a rule: blocked. Failed by the tool itself: an error, not blocked.
      { fullName: 'mcp__hello__add', isError: true, blocked: true, server: 'hello' },
      { fullName: 'mcp__hello__fail', isError: true, blocked: false, server: 'hello' },
    ]);
    expect(versions.length).toBeGreaterThan(0);
    const before = versions.length;
    await agent.disconnectMcpServer('hello');
    expect(versions.length).toBeGreaterThan(before);
    expect(versions).toEqual(versions.map((_, i) => (versions[0] ?? 0) + i));
  });

  test('the model streams through modelEvent events of the agent', async () => {
    const w = await world();
    const agent = await w.agent({ steps: [{ text: 'streamed answer' }] });
    const events: string[] = [];
    agent.on('modelEvent', (e) => events.push(e.type === 'text-delta' ? `text:${e.text}` : e.type));
    await agent.sendMessage('go');
    expect(events).toContain('text:streamed answer');
  });

  test('an agent given a shared pool leases it: destroy releases the lease, the pool lives on', async () => {
    const w = await world();
    const pool = McpPool.create({ shared: true, markerNamespace: w.ns });
    try {
      const agent = await w.agent({
        steps: [{ toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'shared' } }] }, { text: 'ok' }],
        mcpServers: { hello: w.server() },
        permissions: { allow: ['*'] },
        pool,
      });
      await agent.sendMessage('go');
      expect(textOf(toolMessages(agent.getMessages())[0]?.content)).toBe('shared');
      await agent.destroy();
      expect(pool.destroyed).toBe(false);
    } finally {
      await pool.destroy();
    }
    expect(w.procs()).toEqual([]);
  });

  test('Agent.create rejects bad options with INVALID_OPTIONS', async () => {
    const w = await world();
    const bad = (e: unknown) => isAgentError(e, 'INVALID_OPTIONS');
    await expect(w.agent({ workdir: '' })).rejects.toSatisfy(bad);
    await expect(w.agent({ model: {} as never })).rejects.toSatisfy(bad);
    await expect(w.agent({ pool: McpPool.create() })).rejects.toSatisfy(bad);
  });
});
