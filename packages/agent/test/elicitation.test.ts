import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpPool } from '@wave/mcp-pool';
import { fixturePath } from '@wave/testkit';
import { describe, expect, test } from 'vitest';
import { isAgentError } from '../src/errors';
import { AgentHost } from '../src/host';
import type { ToolResultMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const clientFeatures = () => ({
  command: process.execPath,
  args: [join(dirname(fixturePath('hello')), 'client-features.mjs')],
});
const askStep = { toolCalls: [{ name: 'mcp__cf__ask', arguments: {} }] };
const toolText = (ms: { role: string }[]) =>
  textOf(ms.filter((m): m is ToolResultMessage => m.role === 'tool')[0]?.content);

describe('client features', () => {
  test('servers see the agent’s workdir as their root', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ toolCalls: [{ name: 'mcp__cf__roots', arguments: {} }] }, { text: 'ok' }],
      toolMode: 'flat',
      mcpServers: { cf: clientFeatures() },
      permissions: { allow: ['*'] },
    });
    await agent.sendMessage('roots?');
    expect(toolText(agent.getMessages())).toContain(pathToFileURL(w.tmp.workdir).href);
  });
});

describe('elicitation', () => {
  test('a server’s elicitation reaches onElicitation with the server name; the answer goes back', async () => {
    const w = await world();
    const asked: string[] = [];
    const agent = await w.agent({
      steps: [askStep, { text: 'ok' }],
      toolMode: 'flat',
      mcpServers: { cf: clientFeatures() },
      permissions: { allow: ['*'] },
      onElicitation: async (server, request) => {
        asked.push(`${server}: ${request.message}`);
        return { action: 'accept', content: { name: 'Ann' } };
      },
    });
    await agent.sendMessage('ask me');
    expect(asked).toEqual(['cf: Who are you?']);
    const text = toolText(agent.getMessages());
    expect(text).toContain('"action":"accept"');
    expect(text).toContain('Ann');
  });

  test('no handler: the request is declined (the server is told the client cannot elicit)', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [askStep, { text: 'ok' }],
      toolMode: 'flat',
      mcpServers: { cf: clientFeatures() },
      permissions: { allow: ['*'] },
    });
    await agent.sendMessage('ask me');
    const text = toolText(agent.getMessages());
    expect(text).not.toContain('"action":"accept"');
    expect(text).toMatch(/elicit/i);
  });

  test('a shared pool takes the handler: an agent given both is refused, a host passes it through poolOptions', async () => {
    const w = await world();
    const pool = McpPool.create({ shared: true, markerNamespace: w.ns });
    try {
      await expect(
        w.agent({ steps: [], pool, onElicitation: async () => ({ action: 'decline' }) }),
      ).rejects.toSatisfy((e: unknown) => isAgentError(e, 'INVALID_OPTIONS'));
    } finally {
      await pool.destroy();
    }

    const asked: string[] = [];
    const host = AgentHost.create({
      home: w.tmp.home,
      poolOptions: {
        markerNamespace: w.ns,
        onElicitation: async (server, request) => {
          asked.push(`${server}: ${request.message}`);
          return { action: 'accept', content: { name: 'Bo' } };
        },
      },
    });
    try {
      const agent = await host.create('a', {
        workdir: w.tmp.workdir,
        model: scriptedModel([askStep, { text: 'ok' }]),
        toolMode: 'flat',
        mcpServers: { cf: clientFeatures() },
        permissions: { allow: ['*'] },
      });
      await agent.sendMessage('ask me');
      expect(asked).toEqual(['cf: Who are you?']);
      expect(toolText(agent.getMessages())).toContain('Bo');
    } finally {
      await host.close();
    }
    expect(w.procs()).toEqual([]);
  });
});
