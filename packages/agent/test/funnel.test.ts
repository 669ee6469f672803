import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deferred } from '@wave/testkit';
import { describe, expect, test } from 'vitest';
import type { ApprovalRequest } from '../src/funnel';
import type { ToolResultMessage } from '../src/model';
import { scriptedModel } from '../src/models/scripted';
import { textOf, world } from './helpers';

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });
const toolMessages = (ms: { role: string }[]) => ms.filter((m): m is ToolResultMessage => m.role === 'tool');

/**
 * Approvals held open: `arrived` resolves once `expected` approvals wait at
 * once (2 when the calls run in parallel, 1 when they run in order).
 */
function heldApprovals(expected: number) {
  const approvals: { name: string; answer: ReturnType<typeof deferred<'allow'>> }[] = [];
  const arrived = deferred();
  const canUseTool = (r: ApprovalRequest) => {
    const answer = deferred<'allow'>();
    approvals.push({ name: r.fullName, answer });
    if (approvals.length === expected) arrived.resolve();
    return answer.promise;
  };
  return { approvals, arrived, canUseTool };
}

describe('the tool funnel through an agent', () => {
  test('no canUseTool: a call no rule allows is denied with a reason the model can read (not an exception)', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ toolCalls: [call('mcp__hello__echo', { text: 'x' })] }, { text: 'ok' }],
      mcpServers: { hello: w.server() },
    });
    const r = await agent.sendMessage('go');
    expect(r.text).toBe('ok');
    const [t] = toolMessages(agent.getMessages());
    expect(t?.isError).toBe(true);
    expect(textOf(t?.content)).toMatch(/Permission denied: mcp__hello__echo needs approval/);
  });

  test('deny wins over allow', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [{ toolCalls: [call('mcp__hello__echo', { text: 'x' })] }, { text: 'ok' }],
      mcpServers: { hello: w.server() },
      permissions: { allow: ['mcp__hello__*'], deny: ['mcp__hello__echo'] },
      canUseTool: async () => 'allow',
    });
    await agent.sendMessage('go');
    expect(textOf(toolMessages(agent.getMessages())[0]?.content)).toContain('deny rule "mcp__hello__echo"');
  });

  test('allow-always is remembered for the exact name, surfaced as an event, and re-asked when the definition changes', async () => {
    const w = await world();
    const asked: ApprovalRequest[] = [];
    const remembered: { fullName: string; definitionHash: string }[] = [];
    const agent = await w.agent({
      steps: [
        { toolCalls: [call('mcp__hello__echo', { text: '1' })] },
        { toolCalls: [call('mcp__hello__echo', { text: '2' })] },
        { toolCalls: [call('mcp__hello__add', { a: 1, b: 2 })] },
        { text: 'ok' },
      ],
      mcpServers: { hello: w.server() },
      canUseTool: async (r) => {
        asked.push(r);
        return 'allow-always';
      },
    });
    agent.on('allowAlways', (e) => remembered.push(e));
    await agent.sendMessage('go');
    expect(asked.map((a) => a.fullName)).toEqual(['mcp__hello__echo', 'mcp__hello__add']);
    expect(remembered.map((e) => e.fullName)).toEqual(['mcp__hello__echo', 'mcp__hello__add']);
    expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(['1', '2', '3']);

    // A host restores it; a hash that no longer matches the definition asks again.
    const w2 = await world();
    const asked2: ApprovalRequest[] = [];
    const agent2 = await w2.agent({
      steps: [
        { toolCalls: [call('mcp__hello__echo', { text: 'a' }), call('mcp__hello__add', { a: 2, b: 2 })] },
        { text: 'ok' },
      ],
      mcpServers: { hello: w2.server() },
      rememberedApprovals: {
        mcp__hello__echo: remembered[0]?.definitionHash ?? '',
        mcp__hello__add: 'stale-hash',
      },
      canUseTool: async (r) => {
        asked2.push(r);
        return 'allow';
      },
    });
    await agent2.sendMessage('go');
    expect(asked2.map((a) => [a.fullName, a.reason])).toEqual([['mcp__hello__add', 'definition-changed']]);
  });

  test('read-only calls of one response run in parallel; others one at a time', async () => {
    for (const readOnly of [true, false]) {
      const w = await world();
      const { approvals, arrived, canUseTool } = heldApprovals(readOnly ? 2 : 1);
      const agent = await w.agent({
        steps: [
          { toolCalls: [call('mcp__hello__echo', { text: 'a' }), call('mcp__hello__add', { a: 1, b: 1 })] },
          { text: 'ok' },
        ],
        mcpServers: { hello: w.server() },
        readOnlyTools: { 'mcp__hello__*': readOnly },
        canUseTool,
      });
      const turn = agent.sendMessage('go');
      await arrived.promise;
      // Parallel: both calls are waiting for approval at once. Sequential: only the first.
      expect(approvals.map((a) => a.name)).toEqual(
        readOnly ? ['mcp__hello__echo', 'mcp__hello__add'] : ['mcp__hello__echo'],
      );
      approvals[0]?.answer.resolve('allow');
      if (!readOnly) {
        await expect.poll(() => approvals.length, { timeout: 30_000 }).toBe(2);
      }
      approvals[1]?.answer.resolve('allow');
      await turn;
      expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(['a', '2']);
    }
  });

  test("a tool's own readOnlyHint decides parallel runs; readOnlyTools overrides a wrong hint", async () => {
    const annotated = {
      command: process.execPath,
      args: [fileURLToPath(new URL('./fixtures/annotated-server.mjs', import.meta.url))],
    };
    const cases: { tools: string[]; overrides?: Record<string, boolean>; parallel: boolean }[] = [
      { tools: ['look', 'peek'], parallel: true },
      { tools: ['look', 'touch'], parallel: false },
      { tools: ['look', 'peek'], overrides: { mcp__ann__peek: false }, parallel: false },
    ];
    for (const c of cases) {
      const w = await world();
      const { approvals, arrived, canUseTool } = heldApprovals(c.parallel ? 2 : 1);
      const agent = await w.agent({
        steps: [{ toolCalls: c.tools.map((t) => call(`mcp__ann__${t}`)) }, { text: 'ok' }],
        toolMode: 'flat',
        mcpServers: { ann: annotated },
        ...(c.overrides ? { readOnlyTools: c.overrides } : {}),
        canUseTool,
      });
      const turn = agent.sendMessage('go');
      await arrived.promise;
      expect(approvals.length).toBe(c.parallel ? 2 : 1);
      approvals[0]?.answer.resolve('allow');
      await expect.poll(() => approvals.length, { timeout: 30_000 }).toBe(2);
      approvals[1]?.answer.resolve('allow');
      await turn;
      expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(c.tools);
    }
  });

  test("a server's readOnlyTools in its config decides parallel runs, from any source; the agent option wins over it", async () => {
    const annotated = {
      command: process.execPath,
      args: [fileURLToPath(new URL('./fixtures/annotated-server.mjs', import.meta.url))],
    };
    // hello's tools carry no readOnlyHint; ann's look/peek say true, touch says false.
    const cases: {
      label: string;
      server: 'hello' | 'ann';
      config?: Record<string, boolean>;
      /** Write the server to the project's .mcp.json instead of the constructor option. */
      project?: boolean;
      option?: Record<string, boolean>;
      tools: string[];
      parallel: boolean;
    }[] = [
      { label: 'no hint, no override (control)', server: 'hello', tools: ['echo', 'echo'], parallel: false },
      {
        label: 'config true',
        server: 'hello',
        config: { echo: true },
        tools: ['echo', 'echo'],
        parallel: true,
      },
      {
        label: 'config true from a project file',
        server: 'hello',
        config: { 'e*': true },
        project: true,
        tools: ['echo', 'echo'],
        parallel: true,
      },
      {
        label: 'the option (false) beats the config (true)',
        server: 'hello',
        config: { echo: true },
        option: { mcp__hello__echo: false },
        tools: ['echo', 'echo'],
        parallel: false,
      },
      {
        label: 'the option (true) beats the config (false)',
        server: 'hello',
        config: { echo: false },
        option: { 'mcp__hello__*': true },
        tools: ['echo', 'echo'],
        parallel: true,
      },
      {
        label: 'config false beats readOnlyHint true',
        server: 'ann',
        config: { peek: false },
        tools: ['look', 'peek'],
        parallel: false,
      },
      {
        label: 'config true beats readOnlyHint false, first match wins',
        server: 'ann',
        config: { touch: true, '*': false },
        tools: ['touch', 'touch'],
        parallel: true,
      },
      {
        label: 'a later catch-all false beats readOnlyHint true',
        server: 'ann',
        config: { touch: true, '*': false },
        tools: ['look', 'peek'],
        parallel: false,
      },
    ];
    for (const c of cases) {
      const w = await world();
      const spec = {
        ...(c.server === 'hello' ? w.server() : annotated),
        ...(c.config ? { readOnlyTools: c.config } : {}),
      };
      if (c.project) {
        await writeFile(
          join(w.tmp.workdir, '.mcp.json'),
          JSON.stringify({ mcpServers: { [c.server]: spec } }),
        );
      }
      const { approvals, arrived, canUseTool } = heldApprovals(c.parallel ? 2 : 1);
      const agent = await w.agent({
        steps: [
          {
            toolCalls: c.tools.map((t, i) =>
              call(`mcp__${c.server}__${t}`, t === 'echo' ? { text: `${i}` } : {}),
            ),
          },
          { text: 'ok' },
        ],
        toolMode: 'flat',
        ...(c.project ? {} : { mcpServers: { [c.server]: spec } }),
        ...(c.option ? { readOnlyTools: c.option } : {}),
        canUseTool,
      });
      const turn = agent.sendMessage('go');
      await arrived.promise;
      // Parallel: both calls are waiting for approval at once. In order: only the first.
      expect({ case: c.label, waiting: approvals.length }).toEqual({
        case: c.label,
        waiting: c.parallel ? 2 : 1,
      });
      approvals[0]?.answer.resolve('allow');
      await expect.poll(() => approvals.length, { timeout: 30_000 }).toBe(2);
      approvals[1]?.answer.resolve('allow');
      await turn;
      expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(
        c.tools.map((t, i) => (t === 'echo' ? `${i}` : t)),
      );
    }
  });

  test('a changed readOnlyTools applies on reload without restarting the server (it is not part of the fingerprint)', async () => {
    const w = await world();
    const file = join(w.tmp.workdir, '.mcp.json');
    const write = (echo: boolean) =>
      writeFile(file, JSON.stringify({ mcpServers: { hello: { ...w.server(), readOnlyTools: { echo } } } }));
    await write(false);
    const pair = {
      toolCalls: [call('mcp__hello__echo', { text: 'a' }), call('mcp__hello__echo', { text: 'b' })],
    };
    let approvals: ReturnType<typeof deferred<'allow'>>[] = [];
    let arrived = deferred();
    let expected = 1;
    const agent = await w.agent({
      steps: [pair, { text: 'ok' }, pair, { text: 'ok' }],
      toolMode: 'flat',
      canUseTool: () => {
        const answer = deferred<'allow'>();
        approvals.push(answer);
        if (approvals.length === expected) arrived.resolve();
        return answer.promise;
      },
    });
    let pids: number[] = [];
    for (const parallel of [false, true]) {
      if (parallel) {
        pids = w.procs();
        expect(pids).toHaveLength(1);
        await write(true);
        await agent.reloadMcpConfig();
      }
      approvals = [];
      arrived = deferred();
      expected = parallel ? 2 : 1;
      const turn = agent.sendMessage('go');
      await arrived.promise;
      expect({ parallel, waiting: approvals.length }).toEqual({ parallel, waiting: expected });
      approvals[0]?.resolve('allow');
      await expect.poll(() => approvals.length, { timeout: 30_000 }).toBe(2);
      approvals[1]?.resolve('allow');
      await turn;
    }
    // The same server process answered both turns.
    expect(w.procs()).toEqual(pids);
    expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(['a', 'b', 'a', 'b']);
  });

  test('the same tool on two servers: two full names, each call reaches its own server', async () => {
    const w = await world();
    const model = scriptedModel([
      { toolCalls: [call('mcp__one__echo', { text: '1' }), call('mcp__two__echo', { text: '2' })] },
      { text: 'ok' },
    ]);
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { one: w.server(), two: w.server() },
      permissions: { allow: ['*'] },
    });
    const servers: string[] = [];
    agent.on('toolCall', (e) => servers.push(`${e.fullName}@${e.server}`));
    await agent.sendMessage('go');
    const declared = model.requests[0]?.tools.map((t) => t.name) ?? [];
    expect(declared).toContain('mcp__one__echo');
    expect(declared).toContain('mcp__two__echo');
    expect(servers).toEqual(['mcp__one__echo@one', 'mcp__two__echo@two']);
    expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(['1', '2']);
  });

  test('a full name over 64 characters is declared in a short form that the funnel maps back', async () => {
    const w = await world();
    const server = `s${'x'.repeat(70)}`;
    const full = `mcp__${server}__echo`;
    const model = scriptedModel([
      // Every other hello tool is denied, so the one MCP declaration is echo's.
      (request) => ({
        toolCalls: [
          call(request.tools.find((t) => t.name.startsWith('mcp__'))?.name ?? 'missing', {
            text: 'long way',
          }),
        ],
      }),
      { text: 'ok' },
    ]);
    const asked: string[] = [];
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { [server]: w.server() },
      permissions: {
        deny: ['mcp__*__add', 'mcp__*__sleep', 'mcp__*__fail', 'mcp__*__big', 'mcp__*__image', 'mcp__*_tool'],
      },
      canUseTool: async (r) => {
        asked.push(r.fullName);
        return 'allow';
      },
    });
    await agent.sendMessage('go');
    const names = model.requests[0]?.tools.map((t) => t.name) ?? [];
    expect(names.every((n) => n.length <= 64)).toBe(true);
    expect(names).not.toContain(full);
    // Rules and approvals see the real full name; the call reached the tool.
    expect(asked).toEqual([full]);
    expect(toolMessages(agent.getMessages()).map((t) => textOf(t.content))).toEqual(['long way']);
  });

  test('a call to a failed server says "unavailable because" with the reason, never "unknown tool"', async () => {
    const w = await world();
    const agent = await w.agent({
      steps: [
        { toolCalls: [call('mcp__broken__anything'), call('mcp__nowhere__x'), call('Bogus')] },
        { text: 'ok' },
      ],
      mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(9)'] } },
      permissions: { allow: ['*'] },
    });
    await agent.sendMessage('go');
    const [a, b, c] = toolMessages(agent.getMessages()).map((t) => textOf(t.content));
    expect(a).toMatch(/^Tool mcp__broken__anything is unavailable because MCP server "broken" failed: /);
    expect(a).toContain('reconnect');
    expect(b).toContain('unavailable because no MCP server "nowhere" is configured');
    expect(c).toContain('Unknown tool "Bogus"');
  });

  test('images go to a vision model as image blocks; otherwise they are saved and the result names the file', async () => {
    for (const vision of [true, false]) {
      const w = await world();
      const model = scriptedModel([{ toolCalls: [call('mcp__hello__image')] }, { text: 'ok' }], {
        supportsVision: vision,
      });
      const agent = await w.agent({
        model,
        mcpServers: { hello: w.server() },
        permissions: { allow: ['*'] },
      });
      await agent.sendMessage('go');
      const [t] = toolMessages(agent.getMessages());
      if (vision) expect(Array.isArray(t?.content) && t.content[0]?.type).toBe('image');
      else {
        expect(typeof t?.content).toBe('string');
        expect(textOf(t?.content)).toMatch(/saved to .*\.png/);
      }
    }
  });

  test('images count against a per-turn limit that every turn starts again', async () => {
    const w = await world();
    const images = { toolCalls: [call('mcp__hello__image', { count: 3 })] };
    const model = scriptedModel([images, { text: 'one' }, images, { text: 'two' }], { supportsVision: true });
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
      outputLimits: { maxImagesPerTurn: 2 },
    });
    const imageBlocks = () =>
      toolMessages(agent.getMessages()).map((t) =>
        Array.isArray(t.content) ? t.content.filter((b) => b.type === 'image').length : 0,
      );
    await agent.sendMessage('first');
    expect(imageBlocks()).toEqual([2]);
    expect(textOf(toolMessages(agent.getMessages())[0]?.content)).toContain('the limit of 2 images per turn');
    await agent.sendMessage('second');
    expect(imageBlocks()).toEqual([2, 2]);
  });

  test('tool names that collide after identity mapping: each declared name reaches its own tool', async () => {
    const w = await world();
    const model = scriptedModel([
      {
        toolCalls: [
          call('mcp__hello__add_tool', { name: 'dot.x' }),
          call('mcp__hello__add_tool', { name: 'dot_x' }),
        ],
      },
      { text: 'added' },
      (request) => {
        const dots = request.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__hello__dot'));
        return { toolCalls: dots.map((name) => call(name, { value: 'v' })) };
      },
      { text: 'ok' },
    ]);
    const agent = await w.agent({
      model,
      toolMode: 'flat',
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
    });
    await agent.sendMessage('add two tools');
    await expect
      .poll(() => agent.getMcpServers()[0]?.tools.filter((t) => t.name.startsWith('dot')).length, {
        timeout: 30_000,
      })
      .toBe(2);
    await agent.sendMessage('call them');
    const declared =
      model.requests[2]?.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__hello__dot')) ?? [];
    expect(declared).toHaveLength(2);
    const results = toolMessages(agent.getMessages())
      .slice(2)
      .map((t) => textOf(t.content))
      .sort();
    expect(results).toEqual(['dot.x: v', 'dot_x: v']);
  });

  test('the tool-round limit ends a turn that keeps calling tools', async () => {
    const w = await world();
    const model = scriptedModel(
      Array.from({ length: 10 }, () => ({ toolCalls: [call('mcp__hello__echo', { text: 'again' })] })),
    );
    const agent = await w.agent({
      model,
      mcpServers: { hello: w.server() },
      permissions: { allow: ['*'] },
      maxToolRounds: 3,
    });
    const r = await agent.sendMessage('loop');
    expect(r.stopReason).toBe('tool_rounds_limit');
    expect(r.toolRounds).toBe(3);
    expect(model.requests).toHaveLength(3);
  });
});
