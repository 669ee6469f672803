import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../src/fixtures';
import { type HttpFixture, startHttpFixture } from '../src/http-fixture';
import { markerEnv } from '../src/markers';
import { waitFor } from '../src/wait';
import { textOf, useCleanup } from './support';

const cleanup = useCleanup();
const fixtures: HttpFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

function clientTransport(kind: 'http' | 'sse', url: string): Transport {
  return kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(url))
    : new SSEClientTransport(new URL(url));
}

async function connect(kind: 'http' | 'sse', url: string) {
  const client = new Client({ name: 'testkit-test', version: '0.0.0' });
  const events: string[] = [];
  client.onerror = (e) => events.push(`error: ${e.message}`);
  client.onclose = () => events.push('close');
  cleanup.defer(() => client.close());
  await client.connect(clientTransport(kind, url), { timeout: 30_000 });
  return { client, events };
}

async function start(kind: 'http' | 'sse', env?: Record<string, string>) {
  const fixture = await startHttpFixture({ transport: kind, ...(env ? { env } : {}) });
  fixtures.push(fixture);
  return fixture;
}

describe.each([['http' as const], ['sse' as const]])('startHttpFixture (%s)', (kind) => {
  it('serves the hello tools and instructions on 127.0.0.1', async () => {
    const fixture = await start(kind, { HELLO_EXTRA_TOOLS: '2', HELLO_NAME: 'web' });
    expect(fixture.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${fixture.port}/(mcp|sse)$`));
    const { client } = await connect(kind, fixture.url);
    expect(client.getServerVersion()?.name).toBe('web');
    expect(client.getInstructions()).toContain('HELLO-INSTRUCTIONS-END');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['echo', 'add', 'sleep', 'fail', 'big', 'image', 'extra_1']),
    );
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } }))).toBe('42');
    expect(textOf(await client.callTool({ name: 'big', arguments: { bytes: 300_000 } }))).toHaveLength(
      300_000,
    );
    expect(fixture.sessionCount).toBe(1);
  });

  it('drop() cuts the connection: in-flight call fails, client sees an error, old session is gone', async () => {
    const fixture = await start(kind);
    const { client, events } = await connect(kind, fixture.url);
    // SDK 1.32.2 (http and sse): a request whose connection is cut is NOT rejected by
    // the client transport (it calls onerror, never onclose); the request waits for
    // its own timeout. Callers must enforce one.
    // The drop must come once the server has the call: the sleep tool reports progress 0 when it starts.
    let arrived = false;
    const inFlight = client.callTool({ name: 'sleep', arguments: { ms: 60_000 } }, undefined, {
      timeout: 8000,
      onprogress: () => {
        arrived = true;
      },
    });
    inFlight.catch(() => {});
    await waitFor(() => arrived, { message: 'the sleep call to reach the server' });
    await fixture.drop();
    expect(fixture.sessionCount).toBe(0);
    await waitFor(() => events.length > 0, { message: 'client onerror/onclose after drop' });
    await expect(inFlight).rejects.toThrow(/timed out/i);
    expect(events.some((e) => e.startsWith('error'))).toBe(true);
    if (kind === 'http') {
      // The old session id now gets 404. (An SSE client's EventSource reconnects on its own after
      // a delay of its choosing and gets a new session, so a later call there may or may not work.)
      await expect(
        client.callTool({ name: 'echo', arguments: { text: 'x' } }, undefined, { timeout: 30_000 }),
      ).rejects.toThrow(/404|not found/i);
    }
    // The server still listens: a new client connects.
    const again = await connect(kind, fixture.url);
    expect(textOf(await again.client.callTool({ name: 'echo', arguments: { text: 'back' } }))).toBe('back');
  });

  it('stop() refuses connections; restart() listens on the same port again', async () => {
    const fixture = await start(kind);
    const { events } = await connect(kind, fixture.url);
    const port = fixture.port;
    await fixture.stop();
    expect(fixture.listening).toBe(false);
    await waitFor(() => events.length > 0, { message: 'client onerror/onclose after stop' });
    const refused = new Client({ name: 'refused', version: '0.0.0' });
    await expect(refused.connect(clientTransport(kind, fixture.url), { timeout: 2000 })).rejects.toThrow();
    await fixture.stop(); // idempotent

    await fixture.restart();
    expect(fixture.listening).toBe(true);
    expect(fixture.port).toBe(port);
    const { client } = await connect(kind, fixture.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('again');

    await fixture.close();
    await fixture.close();
    await expect(fixture.restart()).rejects.toThrow(/after close/);
  });
});

describe('startHttpFixture (http) drop({ keepSessions: true })', () => {
  it('keeps the session: the client resumes with the same session id', async () => {
    const fixture = await start('http');
    const { client, events } = await connect('http', fixture.url);
    await fixture.drop({ keepSessions: true });
    expect(fixture.sessionCount).toBe(1);
    await waitFor(() => events.length > 0, { message: 'client onerror after drop' });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'same' } }))).toBe('same');
  });
});

describe('fixtures/http.mjs (standalone process)', () => {
  it.each([['http'], ['sse']])('HTTP_TRANSPORT=%s prints its URL, serves, drops on SIGUSR2', async (kind) => {
    const spec = fixtureServer('http', { HTTP_TRANSPORT: kind });
    const child = spawn(spec.command, spec.args, {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...spec.env, ...markerEnv(cleanup.marker()) },
    });
    const lines = createInterface({ input: child.stdout });
    const url = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        const m = /^HTTP_FIXTURE_URL (\S+)$/.exec(line);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`http fixture exited early (${code})`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/(mcp|sse)$/);
    const { client, events } = await connect(kind as 'http' | 'sse', url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'proc' } }))).toBe('proc');
    child.kill('SIGUSR2');
    await waitFor(() => events.length > 0, { message: 'client error after SIGUSR2 drop' });
    expect(child.exitCode).toBeNull();
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it('POST /__control/drop drops connections', async () => {
    const spec = fixtureServer('http');
    const child = spawn(spec.command, spec.args, {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...markerEnv(cleanup.marker()) },
    });
    const lines = createInterface({ input: child.stdout });
    const url = await new Promise<string>((resolve) =>
      lines.on('line', (line) => {
        const m = /^HTTP_FIXTURE_URL (\S+)$/.exec(line);
        if (m?.[1]) resolve(m[1]);
      }),
    );
    const { events } = await connect('http', url);
    const res = await fetch(new URL('/__control/drop', url), { method: 'POST' });
    expect(res.status).toBe(204);
    await waitFor(() => events.length > 0, { message: 'client error after control drop' });
  });
});
