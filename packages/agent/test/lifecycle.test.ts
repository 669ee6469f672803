import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolCache } from '@wave/mcp-cache';
import { McpPool } from '@wave/mcp-pool';
import { deferred } from '@wave/testkit';
import { describe, expect, test, vi } from 'vitest';
import { isAgentError } from '../src/errors';
import { scriptedModel } from '../src/models/scripted';
import type { SessionStore } from '../src/sessions/types';
import { textOf, world } from './helpers';

const allowHello = { allow: ['mcp__hello__*'] };

describe('Agent lifecycle', () => {
  test('create starts no process; the first sendMessage dials and the same turn calls the tool', async () => {
    const w = await world();
    const model = scriptedModel([
      { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'hi there' } }] },
      { text: 'done' },
    ]);
    const agent = await w.agent({
      model,
      mcpServers: { hello: w.server() },
      permissions: allowHello,
      toolMode: 'flat',
    });
    expect(w.procs()).toEqual([]);
    expect(agent.getMcpServers().map((s) => [s.name, s.status])).toEqual([['hello', 'disconnected']]);

    const result = await agent.sendMessage('say hi');
    expect(result.text).toBe('done');
    expect(result.toolRounds).toBe(1);
    // The first model call already saw the tool: the dial finished before tools were declared.
    expect(model.requests[0]?.tools.map((t) => t.name)).toContain('mcp__hello__echo');
    const tool = agent.getMessages().find((m) => m.role === 'tool');
    expect(tool && textOf(tool.content)).toBe('hi there');
    expect(agent.getMcpServers()[0]?.status).toBe('connected');
    expect(w.procs().length).toBeGreaterThan(0);

    await agent.destroy();
    expect(w.procs()).toEqual([]);
  });

  test('a session with no MCP servers awaits nothing for MCP: ensureConnected is never called', async () => {
    const w = await world();
    const ensure = vi.spyOn(McpPool.prototype, 'ensureConnected');
    const pending = vi.spyOn(McpPool.prototype, 'hasPendingDials');
    try {
      const agent = await w.agent({ steps: [{ text: 'a' }, { text: 'b' }] });
      await agent.sendMessage('one');
      await agent.sendMessage('two');
      expect(pending).toHaveBeenCalledTimes(2);
      expect(pending.mock.results.every((r) => r.value === false)).toBe(true);
      expect(ensure).not.toHaveBeenCalled();
    } finally {
      ensure.mockRestore();
      pending.mockRestore();
    }
  });

  test('control: with a configured server the same turn does call ensureConnected', async () => {
    const w = await world();
    const ensure = vi.spyOn(McpPool.prototype, 'ensureConnected');
    try {
      const agent = await w.agent({ steps: [{ text: 'a' }], mcpServers: { hello: w.server() } });
      await agent.sendMessage('one');
      expect(ensure).toHaveBeenCalledTimes(1);
    } finally {
      ensure.mockRestore();
    }
  });

  test('a manual disconnect is not undone by the next turn', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [
        { text: 'a' },
        { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'x' } }] },
        { text: 'c' },
      ],
      mcpServers: { hello: w.server() },
      permissions: allowHello,
    });
    await agent.sendMessage('one');
    expect(agent.getMcpServers()[0]?.status).toBe('connected');
    const view = await agent.disconnectMcpServer('hello');
    expect(view.status).toBe('disconnected');
    expect(view.manuallyDisconnected).toBe(true);
    expect(w.procs()).toEqual([]);

    await agent.sendMessage('two');
    expect(agent.getMcpServers()[0]?.status).toBe('disconnected');
    expect(w.procs()).toEqual([]);
    const tool = agent.getMessages().find((m) => m.role === 'tool');
    // Never "unknown tool": the model learns why and what the user can do.
    expect(textOf(tool?.content)).toContain('unavailable because');
    expect(textOf(tool?.content)).toContain('disconnected by the user');

    const again = await agent.connectMcpServer('hello');
    expect(again.status).toBe('connected');
  });

  test('a failed dial is not retried by later turns', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ text: 'a' }, { text: 'b' }],
      mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(7)'] } },
    });
    const changes: number[] = [];
    agent.on('mcpServersChanged', (e) => changes.push(e.version));
    await agent.sendMessage('one');
    const first = agent.getMcpServers()[0];
    expect(first?.status).toBe('error');
    expect(first?.error?.message).toBeTruthy();
    const seen = changes.length;
    await agent.sendMessage('two');
    expect(agent.getMcpServers()[0]?.status).toBe('error');
    expect(changes.length).toBe(seen); // nothing dialed, nothing changed
  });

  test('connectMcpServer on a failed server dials it again and settles with the error view', async () => {
    const w = await world();
    const marker = join(w.tmp.root, 'attempts.txt');
    const agent = await w.agent({
      steps: [{ text: 'a' }],
      mcpServers: {
        broken: {
          command: process.execPath,
          args: ['-e', `require('fs').appendFileSync(${JSON.stringify(marker)}, 'x'); process.exit(7)`],
        },
      },
    });
    await agent.sendMessage('one');
    expect(agent.getMcpServers()[0]?.status).toBe('error');
    expect(readFileSync(marker, 'utf8')).toBe('x');
    const view = await agent.connectMcpServer('broken');
    expect(view.status).toBe('error');
    expect(view.error?.message).toBeTruthy();
    expect(readFileSync(marker, 'utf8')).toBe('xx'); // an explicit connect really dials again
  });

  test('a connected server is reused by later turns, never dialed again', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ text: 'a' }, { text: 'b' }, { text: 'c' }],
      mcpServers: { hello: w.server() },
    });
    await agent.sendMessage('one');
    const pids = w.procs();
    expect(pids.length).toBeGreaterThan(0);
    let changes = 0;
    agent.on('mcpServersChanged', () => {
      changes += 1;
    });
    await agent.sendMessage('two');
    await agent.sendMessage('three');
    expect(w.procs()).toEqual(pids);
    expect(changes).toBe(0);
    expect(agent.getMcpServers()[0]?.status).toBe('connected');
  });

  test('destroy during the first turn’s dial leaves no process, and the turn rejects', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ text: 'never' }],
      mcpServers: { slow: w.server('slow-init', { SLOW_INIT_MS: '20000' }) },
    });
    const turn = agent.sendMessage('hi');
    await vi.waitFor(() => expect(w.procs().length).toBeGreaterThan(0), { timeout: 30_000, interval: 25 });
    await agent.destroy();
    await expect(turn).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    expect(w.procs()).toEqual([]);
  });

  test('a transcript save that throws does not stop pool teardown', async () => {
    const w = await world();
    const failing: SessionStore = {
      load: async () => undefined,
      append: async () => {
        throw new Error('disk full');
      },
      rewrite: async () => {
        throw new Error('disk full');
      },
      list: async () => [],
      filesDir: () => w.tmp.root,
    };
    const agent = await w.agent({
      steps: [{ text: 'a' }],
      mcpServers: { hello: w.server() },
      sessionStore: failing,
    });
    const warnings: string[] = [];
    agent.on('warning', (x) => warnings.push(`${x.code}: ${x.message}`));
    await agent.sendMessage('one');
    expect(warnings.some((m) => m.includes('SESSION_SAVE_FAILED') && m.includes('disk full'))).toBe(true);
    expect(w.procs().length).toBeGreaterThan(0);
    warnings.length = 0;
    await agent.destroy();
    expect(warnings.some((m) => m.includes('disk full'))).toBe(true);
    expect(w.procs()).toEqual([]);
  });

  test('a tool cache write that hangs does not hold up pool teardown; destroy resolves once it ends', async () => {
    const w = await world();
    const write = deferred();
    const started = deferred();
    const cache: ToolCache = {
      file: join(w.tmp.root, 'never-written.json'),
      get: async () => undefined,
      list: async () => [],
      write: () => {
        started.resolve();
        return write.promise;
      },
    };
    const agent = await w.agent({ steps: [], mcpServers: { hello: w.server() }, toolCache: cache });
    // The write starts on the pool's change event; connect itself settles either way (view or AGENT_DESTROYED).
    const connecting = agent.connectMcpServer('hello').then(
      () => 'view',
      (e: unknown) => (isAgentError(e, 'AGENT_DESTROYED') ? 'destroyed' : e),
    );
    await started.promise;
    expect(w.procs().length).toBeGreaterThan(0);
    let done = false;
    const destroyed = agent.destroy().then(() => {
      done = true;
    });
    await expect.poll(() => w.procs(), { timeout: 30_000, interval: 25 }).toEqual([]);
    expect(done).toBe(false); // still waiting for the write, so none lands after destroy() resolves
    write.resolve();
    await destroyed;
    expect(['view', 'destroyed']).toContain(await connecting);
  });

  test('after destroy every method rejects with AGENT_DESTROYED and nothing starts a process', async () => {
    const w = await world();
    const agent = await w.agent({ steps: [{ text: 'a' }], mcpServers: { hello: w.server() } });
    await agent.destroy();
    await agent.destroy(); // idempotent
    const destroyed = (e: unknown) => isAgentError(e, 'AGENT_DESTROYED');
    await expect(agent.sendMessage('x')).rejects.toSatisfy(destroyed);
    await expect(agent.connectMcpServer('hello')).rejects.toSatisfy(destroyed);
    await expect(agent.disconnectMcpServer('hello')).rejects.toSatisfy(destroyed);
    await expect(agent.reloadMcpConfig()).rejects.toSatisfy(destroyed);
    expect(() => agent.getMcpServers()).toThrow(/destroyed/);
    expect(() => agent.getMessages()).toThrow(/destroyed/);
    expect(() => agent.replaceHistory([])).toThrow(/destroyed/);
    expect(() => agent.getConfigIssues()).toThrow(/destroyed/);
    await expect(agent.authorizeMcpServer('hello', { openUrl: () => undefined })).rejects.toSatisfy(
      destroyed,
    );
    expect(w.procs()).toEqual([]);
  });
});
