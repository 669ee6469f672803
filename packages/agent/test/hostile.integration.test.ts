/**
 * Bad input from servers, as far as the agent: a hand-written hostile stdio
 * server (testkit) with thousands of tools, cyclic and 2000-deep schemas, a
 * 50 MB result. The turn ends normally, the model sees a clear error or a cut
 * result, the host never crashes and no process is left.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ModelRequest } from '../src/model';
import { textOf, world } from './helpers';

const HOSTILE = fileURLToPath(new URL('../../testkit/fixtures/hostile.mjs', import.meta.url));
const hostile = (env: Record<string, string>) => ({ command: process.execPath, args: [HOSTILE], env });

const crashes: unknown[] = [];
const onCrash = (err: unknown) => crashes.push(err);
beforeAll(() => {
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
});
afterAll(() => {
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
});
afterEach(() => {
  expect(crashes.splice(0)).toEqual([]);
});

const echoThenDone = (text: string) => [
  { toolCalls: [{ name: 'mcp__h__echo', arguments: { text } }] },
  { text: 'done' },
];

describe('hostile server through the agent', () => {
  test.each(['flat', 'gateway', 'exec', 'auto'] as const)(
    'toolMode %s: 10 000 tools (all kept) with cyclic and deep schemas: the turn calls echo, the model gets a finite tool list',
    async (toolMode) => {
      const w = await world();
      const requests: ModelRequest[] = [];
      const steps = echoThenDone('through').map((s) => (r: ModelRequest) => {
        requests.push(r);
        return s;
      });
      const agent = await w.agent({
        toolMode,
        steps,
        mcpServers: {
          h: hostile({ HOSTILE_MODES: 'many-tools,cyclic-schema,garbage,bad-notify', HOSTILE_SEED: '5' }),
        },
        permissions: { allow: ['*'] },
        poolOptions: { limits: { maxToolsPerServer: 20_000 } },
      });
      const r = await agent.sendMessage('go');
      expect(r.text).toBe('done');
      const tool = agent.getMessages().find((m) => m.role === 'tool');
      expect(textOf(tool?.content)).toBe('through');
      expect(() => JSON.stringify(requests[0]?.tools)).not.toThrow();
      await agent.destroy();
      expect(w.procs()).toEqual([]);
    },
  );

  test('a 50 MB result over the message limit: the model gets a clear RESPONSE_TOO_LARGE error, the next call works', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [
        { toolCalls: [{ name: 'mcp__h__big', arguments: {} }] },
        { toolCalls: [{ name: 'mcp__h__echo', arguments: { text: 'still here' } }] },
        { text: 'done' },
      ],
      mcpServers: { h: hostile({}) },
      permissions: { allow: ['*'] },
    });
    const r = await agent.sendMessage('go');
    expect(r.text).toBe('done');
    const tools = agent.getMessages().filter((m) => m.role === 'tool');
    expect(textOf(tools[0]?.content)).toMatch(/RESPONSE_TOO_LARGE|too large|over the .* limit/i);
    expect(textOf(tools[0]?.content).length).toBeLessThan(4_096);
    expect(textOf(tools[1]?.content)).toBe('still here');
    await agent.destroy();
    expect(w.procs()).toEqual([]);
  });

  test('a 50 MB result under a raised message limit: the output guard cuts what the model sees', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ toolCalls: [{ name: 'mcp__h__big', arguments: {} }] }, { text: 'done' }],
      mcpServers: { h: hostile({}) },
      permissions: { allow: ['*'] },
      poolOptions: { limits: { maxMessageBytes: 64 * 1024 * 1024 } },
    });
    const r = await agent.sendMessage('go');
    expect(r.text).toBe('done');
    const tool = agent.getMessages().find((m) => m.role === 'tool');
    const seen = textOf(tool?.content);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(64 * 1024);
    await agent.destroy();
    expect(w.procs()).toEqual([]);
  });
});
