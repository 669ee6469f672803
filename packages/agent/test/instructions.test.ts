import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { Message, UserMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { world } from './helpers';

const END = 'HELLO-INSTRUCTIONS-END';

function metas(messages: Message[]): UserMessage[] {
  return messages.filter((m): m is UserMessage => m.role === 'user' && m.isMeta === true);
}

describe('server instructions', () => {
  test('announced once (labelled, multi-line), retired once when offline, again after reconnect or a history that lost it; system prompt bytes never change', async () => {
    const w = await world();
    const model = scriptedModel([], { whenExhausted: 'end' });
    const agent = await w.agent({ model, mcpServers: { hello: w.server() } });

    await agent.sendMessage('one');
    let m = metas(agent.getMessages());
    expect(m).toHaveLength(1);
    const text = m[0]?.content as string;
    expect(text).toContain('hello');
    expect(text).toContain('Use echo to repeat text and add to sum two numbers.\nHELLO-INSTRUCTIONS-END');
    expect(text.split(END)).toHaveLength(2);
    expect(m[0]?.mcpInstructions?.announced.map((a) => a.server)).toEqual(['hello']);
    // It reached the model, before the model call, once.
    expect(model.requests[0]?.messages.filter((x) => x.role === 'user' && x.isMeta)).toHaveLength(1);

    await agent.sendMessage('two');
    expect(metas(agent.getMessages())).toHaveLength(1);

    await agent.disconnectMcpServer('hello');
    await agent.sendMessage('three');
    m = metas(agent.getMessages());
    expect(m).toHaveLength(2);
    expect(m[1]?.mcpInstructions?.retired).toEqual(['hello']);
    await agent.sendMessage('four');
    expect(metas(agent.getMessages())).toHaveLength(2);

    await agent.connectMcpServer('hello');
    await agent.sendMessage('five');
    m = metas(agent.getMessages());
    expect(m).toHaveLength(3);
    expect(m[2]?.mcpInstructions?.announced.map((a) => a.server)).toEqual(['hello']);
    expect(String(m[2]?.content).includes(END)).toBe(true);

    // A host compacts the history: the announcement is gone, so the next turn says it again.
    agent.replaceHistory([{ role: 'user', content: 'summary of earlier conversation' }]);
    await agent.sendMessage('six');
    m = metas(agent.getMessages());
    expect(m).toHaveLength(1);
    expect(m[0]?.mcpInstructions?.announced.map((a) => a.server)).toEqual(['hello']);

    const systems = new Set(model.requests.map((r) => Buffer.from(r.system, 'utf8').toString('hex')));
    expect(model.requests.length).toBe(6);
    expect(systems.size).toBe(1);
  });

  test('a server whose tools are all denied is not announced', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ text: 'a' }],
      mcpServers: { hello: w.server() },
      permissions: { deny: ['mcp__hello__*'] },
    });
    await agent.sendMessage('one');
    expect(agent.getMcpServers()[0]?.status).toBe('connected');
    expect(metas(agent.getMessages())).toHaveLength(0);
  });

  test('a server with no tools at all is still announced', async () => {
    const w = await world();
    const model = scriptedModel([{ text: 'a' }]);
    const agent = await w.agent({
      model,
      mcpServers: {
        bare: {
          command: process.execPath,
          args: [fileURLToPath(new URL('./fixtures/annotated-server.mjs', import.meta.url))],
          env: { NO_TOOLS: '1', INSTRUCTIONS: 'Bare server.\nNo tools, only these rules.' },
        },
      },
    });
    await agent.sendMessage('one');
    expect(agent.getMcpServers()[0]).toMatchObject({ status: 'connected', toolCount: 0 });
    const m = metas(model.requests[0]?.messages ?? []);
    expect(m).toHaveLength(1);
    expect(String(m[0]?.content)).toContain('Bare server.\nNo tools, only these rules.');
  });

  test('a text over 2048 characters is cut to the limit and says so', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ text: 'a' }],
      mcpServers: { hello: w.server('hello', { HELLO_INSTRUCTIONS: 'long' }) },
    });
    await agent.sendMessage('one');
    const [m] = metas(agent.getMessages());
    const text = String(m?.content);
    expect(text).toContain('Long instructions of fixture server "hello".');
    expect(text).not.toContain('LONG-INSTRUCTIONS-END');
    expect(text).toMatch(/truncated/i);
    const full = agent.getMcpServers()[0]?.instructions ?? '';
    expect(full.length).toBeGreaterThan(3000);
    expect(text.length).toBeLessThan(2048 + 600);
  });

  test('announced in Exec mode too (tools folded away, the instructions are not)', async () => {
    const w = await world();
    const model = scriptedModel([{ text: 'a' }]);
    const agent = await w.agent({ model, toolMode: 'exec', mcpServers: { hello: w.server() } });
    await agent.sendMessage('one');
    expect(model.requests[0]?.tools.map((t) => t.name)).toContain('Exec');
    expect(model.requests[0]?.tools.map((t) => t.name)).not.toContain('mcp__hello__echo');
    const m = metas(model.requests[0]?.messages ?? []);
    expect(m).toHaveLength(1);
    expect(String(m[0]?.content)).toContain(END);
  });

  test('a server that crashes after its announcement is retired once, without a manual disconnect', async () => {
    const w = await world();
    const model = scriptedModel(
      [{ toolCalls: [{ name: 'mcp__crashy__crash', arguments: {} }] }, { text: 'crashed' }],
      { whenExhausted: 'end' },
    );
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { crashy: w.server('crashy') },
      permissions: { allow: ['*'] },
      poolOptions: { reconnect: { maxAttempts: 0 } },
    });
    await agent.sendMessage('one');
    expect(metas(agent.getMessages())).toHaveLength(1);
    await expect.poll(() => agent.getMcpServers()[0]?.status, { timeout: 30_000 }).toBe('error');
    await agent.sendMessage('two');
    let m = metas(agent.getMessages());
    expect(m).toHaveLength(2);
    expect(m[1]?.mcpInstructions?.retired).toEqual(['crashy']);
    await agent.sendMessage('three');
    m = metas(agent.getMessages());
    expect(m).toHaveLength(2);
    expect(new Set(model.requests.map((r) => r.system)).size).toBe(1);
  });

  test('the instructions delta is persisted with its marker and a resumed session does not repeat it', async () => {
    const w = await world();
    const first = await w.agent({ steps: [{ text: 'a' }], mcpServers: { hello: w.server() } });
    await first.sendMessage('one');
    const id = first.sessionId;
    await first.destroy();
    const second = await w.agent({
      steps: [{ text: 'b' }],
      mcpServers: { hello: w.server() },
      sessionId: id,
    });
    expect(metas(second.getMessages())).toHaveLength(1);
    await second.sendMessage('two');
    expect(metas(second.getMessages())).toHaveLength(1);
  });
});
