/**
 * Real processes that misbehave at the stdio level: answers over the size
 * limit, a server that closes its stdout or stdin and keeps running, many
 * sends waiting on a full pipe.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import { findProcessesByMarker, isPidAlive, killPids, makeTempDir, realServer, waitFor } from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpPoolError } from '../src/errors';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import { TrackedStdioTransport } from '../src/stdio-transport';
import type { PoolWarning } from '../src/warnings';
import { heldClock } from './held-clock';
import { countingClock } from './helpers';

const FIXTURE = fileURLToPath(new URL('./fixtures/misbehaving-stdio.mjs', import.meta.url));
let ns: string;
const pools: McpPool[] = [];
const clocks: ReturnType<typeof countingClock>[] = [];

beforeEach(() => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:misbehave-${randomUUID().slice(0, 8)}`;
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const c of clocks.splice(0)) expect(c.pending()).toBe(0);
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

function resolve(env: Record<string, string> = {}, extra: Record<string, unknown> = {}): ResolvedServer[] {
  const { servers, issues } = mergeSources(
    [
      {
        source: 'constructor',
        servers: { bad: { command: process.execPath, args: [FIXTURE], env, ...extra } },
      },
    ],
    { workdir: '/tmp/wave-pool-test' },
  );
  expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
  return servers;
}

function make(env: Record<string, string> = {}, opts: Partial<McpPoolOptions> = {}): McpPool {
  const clock = countingClock();
  clocks.push(clock);
  const pool = McpPool.create({ servers: resolve(env), markerNamespace: ns, clock, ...opts });
  pools.push(pool);
  return pool;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof McpPoolError ? err.code : String(err);
  }
}

describe('responses over the message size limit', () => {
  it.each([
    ['id last (TypeScript SDK order)', {}],
    ['id first (Python SDK order)', { MISBEHAVE_ID_FIRST: '1' }],
  ])(
    '%s: a 16 MB answer fails its call at once with RESPONSE_TOO_LARGE; the connection stays up; 4 MB works',
    async (_n, env) => {
      const pool = make(env);
      await pool.ensureConnected();
      expect(pool.get('bad')?.status).toBe('connected');
      const started = Date.now();
      const err = await pool.callTool('bad', 'big', { bytes: 16 * 1024 * 1024 }, { timeoutMs: 120_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpPoolError);
      expect((err as McpPoolError).code).toBe('RESPONSE_TOO_LARGE');
      expect((err as McpPoolError).message).toMatch(/"bad" answered "big".*16\.0 MiB.*10\.0 MiB/);
      // Far below the call timeout: the answer was seen and refused, not waited for.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(pool.get('bad')?.status).toBe('connected');
      const four = await pool.callTool('bad', 'big', { bytes: 4 * 1024 * 1024 });
      expect((four.content as { text: string }[])[0]?.text.length).toBeGreaterThan(4 * 1024 * 1024 - 200);
      const echo = await pool.callTool('bad', 'echo', { text: 'still here' });
      expect(echo.content).toEqual([{ type: 'text', text: 'still here' }]);
    },
  );

  it('the limit is a pool option (limits.maxMessageBytes)', async () => {
    const pool = make({}, { limits: { maxMessageBytes: 64 * 1024 } });
    await pool.ensureConnected();
    expect(await codeOf(pool.callTool('bad', 'big', { bytes: 100_000 }))).toBe('RESPONSE_TOO_LARGE');
    expect((await pool.callTool('bad', 'big', { bytes: 60_000 })).isError).toBeUndefined();
  });
});

describe('responses over the limit from a real server', () => {
  it('server-filesystem read_text_file of an 8 MB file (a ~16 MB line): RESPONSE_TOO_LARGE at once; a 2 MB file works', async () => {
    const tmp = await makeTempDir();
    try {
      writeFileSync(join(tmp.path, 'big.txt'), 'a'.repeat(8 * 1024 * 1024));
      writeFileSync(join(tmp.path, 'medium.txt'), 'b'.repeat(2 * 1024 * 1024));
      const spec = realServer('filesystem', { allowedDirs: [tmp.path] });
      const { servers } = mergeSources([{ source: 'constructor', servers: { fs: spec } }], {
        workdir: tmp.path,
      });
      const clock = countingClock();
      clocks.push(clock);
      // server-filesystem works in the roots a client offers; a pool that declares roots offers
      // its `workdir` (an option of pools with client features), so that is the temp dir too.
      const pool = McpPool.create({
        servers,
        markerNamespace: ns,
        clock,
        workdir: tmp.path,
      } as McpPoolOptions);
      pools.push(pool);
      await pool.ensureConnected();
      expect(pool.get('fs')?.status).toBe('connected');
      const err = await pool
        .callTool('fs', 'read_text_file', { path: join(tmp.path, 'big.txt') }, { timeoutMs: 120_000 })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(McpPoolError);
      expect((err as McpPoolError).code).toBe('RESPONSE_TOO_LARGE');
      expect(pool.get('fs')?.status).toBe('connected');
      const ok = await pool.callTool('fs', 'read_text_file', { path: join(tmp.path, 'medium.txt') });
      expect(JSON.stringify(ok.content).length).toBeGreaterThan(2 * 1024 * 1024);
    } finally {
      await tmp.cleanup();
    }
  });
});

describe('half-closed stdio', () => {
  it('a server that closes its stdout and keeps running: the call fails, status error, tree killed', async () => {
    const pool = make();
    await pool.ensureConnected();
    const pid = pool.get('bad')?.pid;
    expect(pid).toBeGreaterThan(0);
    expect(await codeOf(pool.callTool('bad', 'close_stdout', {}, { timeoutMs: 120_000 }))).toBe(
      'CONNECTION_CLOSED',
    );
    await waitFor(() => pool.get('bad')?.status === 'error', { timeoutMs: 30_000, message: 'status error' });
    expect(pool.get('bad')?.error?.message).toMatch(/closed its stdout/);
    await waitFor(() => !isPidAlive(pid!), { timeoutMs: 30_000, message: 'server process gone' });
  });

  it('a server that closes its stdin and keeps running: the next call fails (EPIPE), status error, tree killed', async () => {
    const pool = make();
    await pool.ensureConnected();
    const pid = pool.get('bad')?.pid;
    await pool.callTool('bad', 'close_stdin', {});
    // Writing to the closed pipe fails (EPIPE).
    expect(await codeOf(pool.callTool('bad', 'echo', { text: 'x' }, { timeoutMs: 120_000 }))).toBe(
      'CONNECTION_CLOSED',
    );
    await waitFor(() => pool.get('bad')?.status === 'error', { timeoutMs: 30_000, message: 'status error' });
    expect(pool.get('bad')?.error?.message).toMatch(/closed its stdin/);
    await waitFor(() => !isPidAlive(pid!), { timeoutMs: 30_000, message: 'server process gone' });
  });
});

describe.runIf(process.platform !== 'win32')('sends under backpressure', () => {
  it('more than 10 sends waiting for the pipe print no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    // A "server" that never reads its stdin, so the pipe fills up.
    const t = new TrackedStdioTransport({
      command: 'sleep',
      args: ['1000'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      markerNamespace: ns,
      killGraceMs: 200,
    });
    t.onerror = () => {};
    try {
      await t.start();
      const big = {
        jsonrpc: '2.0' as const,
        method: 'notifications/message',
        params: { data: 'x'.repeat(256 * 1024) },
      };
      const sends = Array.from({ length: 30 }, () => t.send(big).catch(() => {}));
      await t.close();
      await Promise.all(sends);
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
      await t.close();
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

describe('malformed tools', () => {
  it('one malformed tool does not take the server down: repaired or dropped with a warning naming it', async () => {
    const warnings: PoolWarning[] = [];
    const pool = make({ MISBEHAVE_TOOLS: 'malformed' }, { onWarning: (w) => warnings.push(w) });
    await pool.ensureConnected();
    const rec = pool.get('bad');
    expect(rec?.status).toBe('connected');
    const names = rec?.tools.map((t) => t.name) ?? [];
    expect(names).toContain('echo');
    expect(names).toContain('gitlab_like');
    expect(names).not.toContain('string_schema');
    expect(names).not.toContain('array_schema');
    expect(rec?.tools.find((t) => t.name === 'gitlab_like')?.inputSchema.type).toBe('object');
    expect(warnings.map((w) => [w.code, w.server, w.tool])).toEqual([
      ['TOOL_DROPPED', 'bad', '#6'],
      ['TOOL_DROPPED', 'bad', 'string_schema'],
      ['TOOL_DROPPED', 'bad', 'array_schema'],
    ]);
    expect(warnings[2]?.message).toMatch(/"bad".*"array_schema"/);
    expect((await pool.callTool('bad', 'echo', { text: 'ok' })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });

  it('control: the raw SDK client rejects the whole tools/list of that server', async () => {
    const client = new Client({ name: 'raw', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [FIXTURE],
      env: { ...getDefaultEnvironment(), MISBEHAVE_TOOLS: 'malformed', WAVE_REAPER_ID: `${ns}:raw` },
    });
    try {
      await client.connect(transport);
      await expect(client.listTools()).rejects.toThrow();
    } finally {
      await client.close();
    }
  });
});

describe('tool refresh', () => {
  it('an unanswered tools/list refresh ends after its timeout; the next list_changed starts a new refresh', async () => {
    const HOLD = 3_600_000;
    const clock = heldClock(HOLD);
    const pool = McpPool.create({
      servers: resolve({ MISBEHAVE_LIST: 'ignore-second' }),
      markerNamespace: ns,
      clock,
      timeouts: { connectMs: HOLD },
    });
    pools.push(pool);
    await pool.ensureConnected();
    expect(pool.get('bad')?.tools.map((t) => t.name)).toContain('listed_1');
    // list_changed -> the second tools/list, which the server never answers.
    await pool.callTool('bad', 'change', {});
    await waitFor(() => clock.held() === 1, { timeoutMs: 30_000, message: 'the refresh timer' });
    // Another change while that refresh hangs.
    await pool.callTool('bad', 'change', {});
    clock.fireHeld();
    await waitFor(() => pool.get('bad')?.tools.some((t) => t.name === 'listed_3'), {
      timeoutMs: 30_000,
      message: 'a new refresh after the timed-out one',
    });
    // And later notifications keep working.
    await pool.callTool('bad', 'change', {});
    await waitFor(() => pool.get('bad')?.tools.some((t) => t.name === 'listed_4'), {
      timeoutMs: 30_000,
      message: 'the next refresh',
    });
    await pool.destroy();
    expect(clock.pending()).toBe(0);
  });
});
