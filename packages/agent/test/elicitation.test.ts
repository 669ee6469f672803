import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixturePath } from '@wave/testkit';
import { describe, expect, test } from 'vitest';
import type { ToolResultMessage } from '../src/model';
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
});
