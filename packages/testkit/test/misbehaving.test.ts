import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { childProcessTransport } from '../src/child-transport';
import { fixtureServer } from '../src/fixtures';
import { markerEnv } from '../src/markers';
import { isPidAlive } from '../src/procfs';
import { waitFor } from '../src/wait';
import { connectStdio, textOf, useCleanup } from './support';

const cleanup = useCleanup();

/** Spawns a fixture ourselves (so exit code and stderr are ours) and connects over it. */
function spawnFixture(name: Parameters<typeof fixtureServer>[0], env: Record<string, string>) {
  const spec = fixtureServer(name, env);
  const child = spawn(spec.command, spec.args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...getDefaultEnvironment(), ...spec.env, ...markerEnv(cleanup.marker()) },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const client = new Client({ name: 'testkit-test', version: '0.0.0' });
  cleanup.defer(() => client.close());
  return { child, client, exited, transport: childProcessTransport(child), stderr: () => stderr };
}

describe('crashy fixture', () => {
  it('exits with CRASHY_EXIT_CODE after CRASHY_AFTER_MS, with recognizable stderr lines', async () => {
    const f = spawnFixture('crashy', { CRASHY_EXIT_CODE: '7', CRASHY_AFTER_MS: '150' });
    let closed = false;
    f.client.onclose = () => {
      closed = true;
    };
    await f.client.connect(f.transport);
    expect(textOf(await f.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    expect(await f.exited).toEqual({ code: 7, signal: null });
    await waitFor(() => closed, { message: 'client onclose' });
    expect(f.stderr()).toMatch(/^crashy: started \(pid \d+\)$/m);
    expect(f.stderr()).toContain('crashy: reason: 150 ms after initialized');
    expect(f.stderr()).toContain('crashy: about to exit with code 7');
  });

  it('crash() exits at once with the default code 3; the call rejects', async () => {
    const f = spawnFixture('crashy', {});
    await f.client.connect(f.transport);
    await expect(f.client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow();
    expect(await f.exited).toEqual({ code: 3, signal: null });
    expect(f.stderr()).toContain('crashy: reason: crash() called');
    expect(f.stderr()).toContain('crashy: about to exit with code 3');
  });

  it('CRASHY_SIGNAL makes it die by a signal', async () => {
    const f = spawnFixture('crashy', { CRASHY_SIGNAL: 'SIGKILL' });
    await f.client.connect(f.transport);
    await expect(f.client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow();
    expect(await f.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(f.stderr()).toContain('crashy: about to die by SIGKILL');
  });

  it('does not crash on its own without CRASHY_AFTER_MS', async () => {
    const f = spawnFixture('crashy', {});
    await f.client.connect(f.transport);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(f.child.exitCode).toBeNull();
    expect(textOf(await f.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
  });
});

describe('slow-init fixture', () => {
  it('delays its initialize answer by SLOW_INIT_MS, then serves', async () => {
    const t0 = performance.now();
    const { client } = await connectStdio(cleanup, fixtureServer('slow-init', { SLOW_INIT_MS: '600' }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
    expect(client.getServerVersion()?.name).toBe('slow-init');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'late' } }))).toBe('late');
  });

  it('a connect timeout shorter than the delay rejects (default delay 1000 ms)', async () => {
    await expect(connectStdio(cleanup, fixtureServer('slow-init'), { timeoutMs: 200 })).rejects.toThrow(
      /timed out/i,
    );
  });
});

describe('hang fixture', () => {
  it('never answers initialize: connect with a short timeout rejects; it outlives stdin closing', async () => {
    const h = spawnFixture('hang', {});
    await expect(h.client.connect(h.transport, { timeout: 300 })).rejects.toThrow(/timed out/i);
    // The failed connect closed the transport, which ended the child's stdin.
    expect(h.child.stdin.writableEnded).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(h.child.exitCode).toBeNull();
    expect(isPidAlive(h.child.pid as number)).toBe(true);
  });

  it('HANG_IGNORE_TERM=1 ignores SIGTERM', async () => {
    const h = spawnFixture('hang', { HANG_IGNORE_TERM: '1' });
    await waitFor(() => h.stderr().includes('hang: ready'), { message: 'hang ready line' });
    h.child.kill('SIGTERM');
    await waitFor(() => h.stderr().includes('hang: ignoring SIGTERM'), {
      message: 'hang to log the SIGTERM',
    });
    expect(h.child.exitCode).toBeNull();
    expect(isPidAlive(h.child.pid as number)).toBe(true);
  });

  it('without HANG_IGNORE_TERM, SIGTERM ends it', async () => {
    const h = spawnFixture('hang', {});
    await waitFor(() => h.stderr().includes('hang: ready'), { message: 'hang ready line' });
    h.child.kill('SIGTERM');
    expect(await h.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });
});

describe('noisy-stdout fixture', () => {
  function collectErrors(client: Client): Error[] {
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    return errors;
  }

  it('NOISY_MODE=before: garbage lines first (client reports parse errors), then serves', async () => {
    const client = new Client({ name: 'testkit-test', version: '0.0.0' });
    const errors = collectErrors(client);
    await connectStdio(cleanup, fixtureServer('noisy-stdout'), { client });
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ok' } }))).toBe('ok');
  });

  it('NOISY_MODE=garbage-only: garbage and never an answer', async () => {
    const f = spawnFixture('noisy-stdout', { NOISY_MODE: 'garbage-only' });
    let stdout = '';
    f.child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    const errors = collectErrors(f.client);
    // The SDK's own timeout only bounds the test; the check starts once the fixture is known to be up.
    const abort = new AbortController();
    const outcome = f.client.connect(f.transport, { timeout: 60_000, signal: abort.signal }).then(
      () => 'answered',
      (e: unknown) => e,
    );
    await waitFor(() => stdout.includes('{broken json') && errors.length >= 3, {
      message: 'the fixture to print its garbage and the client to reject it',
    });
    expect(stdout).toContain('noisy-stdout: starting up...');
    // Up, and done printing: it must still not answer initialize.
    const early = await Promise.race([
      outcome,
      new Promise((resolve) => setTimeout(() => resolve('no answer'), 400)),
    ]);
    expect(early).toBe('no answer');
    abort.abort(new Error('no answer, as expected'));
    expect(await outcome).toBeInstanceOf(Error);
    expect(f.child.exitCode).toBeNull();
  });

  it('NOISY_MODE=interleave: a garbage line before every message, calls still work', async () => {
    const client = new Client({ name: 'testkit-test', version: '0.0.0' });
    const errors = collectErrors(client);
    await connectStdio(cleanup, fixtureServer('noisy-stdout', { NOISY_MODE: 'interleave' }), { client });
    const before = errors.length;
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).toBe('2');
    expect(errors.length).toBeGreaterThan(before);
  });
});
