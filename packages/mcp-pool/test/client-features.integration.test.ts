import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import { findProcessesByMarker, fixturePath, isPidAlive, killPids, waitFor } from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ElicitationHandler, ServerLogEntry } from '../src/client-features';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import { countingClock } from './helpers';

const FEATURES = join(dirname(fixturePath('hello')), 'client-features.mjs');

let ns: string;
const pools: McpPool[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];

beforeEach(() => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:features-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

function resolve(names: string[]): ResolvedServer[] {
  const entries: Record<string, unknown> = {};
  for (const n of names) entries[n] = { command: process.execPath, args: [FEATURES] };
  return mergeSources([{ source: 'constructor', servers: entries }], { workdir: '/tmp/wave-pool-features' })
    .servers;
}

async function make(opts: Partial<McpPoolOptions> = {}, names = ['f']): Promise<McpPool> {
  const clock = countingClock();
  clocks.push(clock);
  const pool = McpPool.create({ servers: resolve(names), markerNamespace: ns, clock, ...opts });
  pools.push(pool);
  await pool.ensureConnected();
  for (const n of names) expect(pool.get(n)?.status).toBe('connected');
  return pool;
}

function parse(result: CallToolResult): unknown {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error('expected text');
  return JSON.parse(block.text);
}

describe('server-to-client requests', () => {
  it('declares only the features the host gives handlers for (roots by default)', async () => {
    const bare = await make({ roots: false });
    expect(parse(await bare.callTool('f', 'capabilities'))).toEqual({});
    const onElicitation: ElicitationHandler = () => ({ action: 'decline' });
    const full = await make({
      onElicitation,
      onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }),
    });
    expect(parse(await full.callTool('f', 'capabilities'))).toEqual({
      roots: { listChanged: true },
      sampling: {},
      // The SDK spells an empty elicitation capability as form mode.
      elicitation: { form: {} },
    });
  });

  it('elicitation: the handler gets server name, request and a signal; accept fills schema defaults (SEP-1034)', async () => {
    const seen: { server: string; message: string; signal: boolean }[] = [];
    const pool = await make({
      onElicitation: (server, request, { signal }) => {
        seen.push({ server, message: request.message, signal: signal instanceof AbortSignal });
        return { action: 'accept', content: { name: 'Ada' } };
      },
    });
    const result = parse(await pool.callTool('f', 'ask'));
    expect(seen).toEqual([{ server: 'f', message: 'Who are you?', signal: true }]);
    expect(result).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 30, score: 95.5, status: 'active', verified: true },
    });
  });

  it('elicitation: decline and cancel carry no content; a per-server override wins', async () => {
    const pool = await make(
      {
        onElicitation: () => ({ action: 'decline' }),
        perServer: { g: { onElicitation: () => ({ action: 'cancel' }) } },
      },
      ['f', 'g'],
    );
    expect(parse(await pool.callTool('f', 'ask'))).toEqual({ action: 'decline' });
    expect(parse(await pool.callTool('g', 'ask'))).toEqual({ action: 'cancel' });
  });

  it('roots: the default is the workdir as a file:// root; a provider replaces it; list_changed reaches servers', async () => {
    const workdir = '/tmp/wave-features-workdir';
    const byDefault = await make({ workdir });
    expect(parse(await byDefault.callTool('f', 'roots'))).toEqual({
      roots: [{ uri: pathToFileURL(workdir).href, name: 'wave-features-workdir' }],
    });
    const custom = await make({ roots: () => [{ uri: 'file:///srv/a', name: 'a' }] });
    expect(parse(await custom.callTool('f', 'roots'))).toEqual({
      roots: [{ uri: 'file:///srv/a', name: 'a' }],
    });
    const logs: ServerLogEntry[] = [];
    custom.onLog((e) => logs.push(e));
    await custom.sendRootsListChanged();
    await waitFor(() => logs.some((l) => l.data === 'roots changed'), { timeoutMs: 10_000 });
  });

  it('sampling: the handler answers createMessage', async () => {
    const pool = await make({
      onSampling: (server, request) => ({
        role: 'assistant',
        model: 'test-model',
        content: { type: 'text', text: `${server}: ${request.messages.length} message(s)` },
      }),
    });
    expect(parse(await pool.callTool('f', 'sample'))).toMatchObject({
      model: 'test-model',
      content: { type: 'text', text: 'f: 1 message(s)' },
    });
  });
});

describe('notifications', () => {
  it('log messages: an event with server name and level, and the last N kept per server', async () => {
    const pool = await make({ limits: { logsPerServer: 2 } });
    const got: ServerLogEntry[] = [];
    pool.onLog((e) => got.push(e));
    await pool.callTool('f', 'log', { levels: ['debug', 'warning', 'error'] });
    await waitFor(() => got.length === 3, { timeoutMs: 10_000 });
    expect(got.map((e) => [e.server, e.level, e.logger, e.data])).toEqual([
      ['f', 'debug', 'fixture', 'message 0'],
      ['f', 'warning', 'fixture', 'message 1'],
      ['f', 'error', 'fixture', 'message 2'],
    ]);
    expect(pool.logs('f').map((e) => e.data)).toEqual(['message 1', 'message 2']);
  });

  it('prompts and resources list_changed: what a host listed is refreshed (like tools), then the host is told', async () => {
    const pool = await make();
    // The host shows them: the pool keeps these lists while the server promises list_changed.
    expect((await pool.listPrompts('f')).map((p) => p.name)).toEqual(['greet']);
    expect((await pool.listResources('f')).map((r) => r.uri)).toEqual(['static://hello']);
    const lists: string[] = [];
    pool.onListChanged((e) => lists.push(`${e.server}:${e.list}`));
    await pool.callTool('f', 'change_lists');
    await waitFor(() => lists.includes('f:prompts') && lists.includes('f:resources'), { timeoutMs: 10_000 });
    expect((await pool.listPrompts('f')).map((p) => p.name)).toEqual(['greet', 'added']);
    expect((await pool.listResources('f')).map((r) => r.uri)).toEqual(['static://hello', 'static://added']);
  });
});

describe('calls', () => {
  it('onProgress: a progress token is sent and progress keeps a call alive past its idle limit', async () => {
    const pool = await make();
    const progress: number[] = [];
    // 12 steps 250 ms apart: ~3 s in all, twice the 1.5 s idle limit (gaps far below it).
    const result = await pool.callTool(
      'f',
      'progress',
      { steps: 12, intervalMs: 250 },
      { timeoutMs: 1_500, onProgress: (p) => progress.push(p.progress) },
    );
    expect(parse(result)).toEqual({ steps: 12, token: true });
    // The last report may race the result (the SDK drops progress that arrives after it).
    expect(progress.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it('onProgress: the absolute limit ends a call however much progress it reports', async () => {
    const pool = await make();
    const err = await pool
      .callTool(
        'f',
        'progress',
        { steps: 100, intervalMs: 50 },
        { timeoutMs: 2_000, maxTotalMs: 700, onProgress: () => {} },
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CALL_TIMEOUT', message: expect.stringMatching(/700 ms in all/) });
  });

  it('onProgress: no progress within the idle limit times the call out', async () => {
    const pool = await make();
    const err = await pool
      .callTool('f', 'wait_cancel', {}, { timeoutMs: 300, onProgress: () => {} })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CALL_TIMEOUT', message: expect.stringMatching(/no progress/) });
  });

  it('cancellation sends notifications/cancelled and the call settles at once', async () => {
    const pool = await make();
    const logs: ServerLogEntry[] = [];
    pool.onLog((e) => logs.push(e));
    const ac = new AbortController();
    const call = pool.callTool('f', 'wait_cancel', {}, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    ac.abort('user stop');
    const err = await call.catch((e: unknown) => e);
    // At once: the server never answers this tool by itself.
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(err).toMatchObject({ code: 'CALL_ABORTED' });
    await waitFor(() => logs.some((l) => String(l.data).startsWith('cancelled')), { timeoutMs: 10_000 });
    expect(pool.get('f')?.status).toBe('connected');
  });
});

describe('resources and prompts', () => {
  it('list, read, templates, prompts and getPrompt on a connected server', async () => {
    const pool = await make();
    expect((await pool.listResources('f')).map((r) => r.uri)).toEqual(['static://hello']);
    expect((await pool.listResourceTemplates('f')).map((t) => t.uriTemplate)).toEqual(['note://{id}']);
    expect((await pool.readResource('f', 'static://hello')).contents).toEqual([
      { uri: 'static://hello', mimeType: 'text/plain', text: 'hello resource' },
    ]);
    expect((await pool.readResource('f', 'note://7')).contents[0]).toMatchObject({ text: 'note 7' });
    expect((await pool.listPrompts('f')).map((p) => p.name)).toEqual(['greet']);
    const prompt = await pool.getPrompt('f', 'greet', { name: 'Ada' });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Ada' });
  });

  it("on a lease of a shared pool: the same requests, and events under the lease's own names", async () => {
    const clock = countingClock();
    clocks.push(clock);
    const shared = McpPool.create({ shared: true, markerNamespace: ns, clock });
    pools.push(shared);
    const [server] = resolve(['f']);
    const lease = shared.lease('agent-1', [{ ...server!, name: 'mine' }]);
    await lease.ensureConnected();
    expect(lease.get('mine')?.status).toBe('connected');
    const logs: ServerLogEntry[] = [];
    lease.onLog((e) => logs.push(e));
    expect((await lease.listResources('mine')).map((r) => r.uri)).toEqual(['static://hello']);
    expect((await lease.getPrompt('mine', 'greet', { name: 'Bo' })).messages).toHaveLength(1);
    await lease.callTool('mine', 'log', { levels: ['info'] });
    await waitFor(() => logs.length === 1, { timeoutMs: 10_000 });
    expect(logs[0]).toMatchObject({ server: 'mine', level: 'info', data: 'message 0' });
    expect(lease.logs('mine').map((e) => e.server)).toEqual(['mine']);
    await lease.destroy();
  });

  it('never dial: a server not connected rejects with SERVER_NOT_CONNECTED and spawns nothing', async () => {
    const clock = countingClock();
    clocks.push(clock);
    const pool = McpPool.create({ servers: resolve(['f']), markerNamespace: ns, clock });
    pools.push(pool);
    for (const p of [
      pool.listResources('f'),
      pool.readResource('f', 'static://hello'),
      pool.listResourceTemplates('f'),
      pool.listPrompts('f'),
      pool.getPrompt('f', 'greet', { name: 'x' }),
    ]) {
      await expect(p).rejects.toMatchObject({ code: 'SERVER_NOT_CONNECTED' });
    }
    expect(pool.get('f')?.status).toBe('disconnected');
    expect(findProcessesByMarker(ns)).toEqual([]);
  });
});
