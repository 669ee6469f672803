import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childProcessTransport } from '../src/child-transport';
import { TestkitError } from '../src/errors';
import { FIXTURE_NAMES, fixturePath, fixtureServer } from '../src/fixtures';
import { killMarked, makeMarker, markerEnv } from '../src/markers';
import {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  listDescendants,
  readCmdline,
  readMarker,
  supportsProcScan,
} from '../src/procfs';
import { makeTempDir, makeTempHome } from '../src/temp';
import { deferred, gate, waitFor } from '../src/wait';
import { textOf, useCleanup } from './support';

const cleanup = useCleanup();

describe('fixturePath / fixtureServer', () => {
  it.each(FIXTURE_NAMES.map((n) => [n]))('%s exists', (name) => {
    const path = fixturePath(name);
    expect(path).toMatch(new RegExp(`fixtures[\\\\/]${name}\\.mjs$`));
    expect(existsSync(path)).toBe(true);
  });

  it('fixtureServer runs the fixture with this node and copies env', () => {
    const env = { HELLO_NAME: 'x' };
    const spec = fixtureServer('hello', env);
    expect(spec).toEqual({
      command: process.execPath,
      args: [fixturePath('hello')],
      env: { HELLO_NAME: 'x' },
    });
    expect(spec.env).not.toBe(env);
    expect(fixtureServer('hang').env).toEqual({});
  });

  it('an unknown name throws UNKNOWN_FIXTURE naming the valid ones', () => {
    expect(() => fixturePath('nope' as 'hello')).toThrow(/hello, spawner/);
    expect(() => fixturePath('nope' as 'hello')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_FIXTURE' }),
    );
  });
});

describe('waitFor', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves with the first truthy value', async () => {
    let n = 0;
    await expect(waitFor(() => (++n >= 3 ? `done at ${n}` : false), { intervalMs: 1 })).resolves.toBe(
      'done at 3',
    );
  });

  it('awaits async predicates and treats throws as "not yet"', async () => {
    let n = 0;
    const value = await waitFor(
      async () => {
        n += 1;
        if (n < 3) throw new Error('not ready');
        return n;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
  });

  it('times out with WAIT_TIMEOUT, the message and the last error (fake timers)', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const wait = waitFor(
      () => {
        calls += 1;
        throw new Error('still booting');
      },
      { timeoutMs: 1000, intervalMs: 100, message: 'server up' },
    );
    const settled = wait.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    const error = (await settled) as TestkitError;
    expect(error).toBeInstanceOf(TestkitError);
    expect(error.code).toBe('WAIT_TIMEOUT');
    expect(error.message).toBe('waitFor: server up not met within 1000 ms; last error: still booting');
    expect(calls).toBe(11);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('uses an injected clock', async () => {
    let now = 0;
    const pending: (() => void)[] = [];
    const clock = {
      now: () => now,
      setTimeout: (fn: () => void, ms: number) => {
        now += ms;
        pending.push(fn);
        return pending.length;
      },
      clearTimeout: () => {},
    };
    let result: string | undefined;
    void waitFor(() => false, { timeoutMs: 50, intervalMs: 20, clock }).catch((e: Error) => {
      result = e.message;
    });
    for (let i = 0; i < 20 && result === undefined; i++) {
      await new Promise((r) => setImmediate(r));
      pending.shift()?.();
    }
    expect(result).toMatch(/within 50 ms/);
    expect(now).toBe(50); // 20 + 20 + 10: the last pause is cut to the deadline
  });
});

describe('deferred', () => {
  it('exposes resolve and settled; later calls are ignored', async () => {
    const d = deferred<number>();
    expect(d.settled).toBe(false);
    d.resolve(1);
    d.resolve(2);
    d.reject(new Error('late'));
    expect(d.settled).toBe(true);
    await expect(d.promise).resolves.toBe(1);
  });

  it('rejects', async () => {
    const d = deferred();
    d.reject(new Error('no'));
    await expect(d.promise).rejects.toThrow('no');
  });
});

describe('gate', () => {
  it('parks waiters until open and reports arrivals', async () => {
    const g = gate();
    const order: string[] = [];
    const arrivedTwice = g.whenArrived(2).then(() => order.push('two arrived'));
    const a = g.wait().then(() => order.push('a'));
    await g.whenArrived(1);
    expect(order).toEqual([]);
    const b = g.wait().then(() => order.push('b'));
    await arrivedTwice;
    expect(g.arrived).toBe(2);
    expect(g.isOpen).toBe(false);
    g.open();
    g.open();
    await Promise.all([a, b]);
    expect(order).toEqual(['two arrived', 'a', 'b']);
    expect(g.isOpen).toBe(true);
    await g.wait();
    await g.whenArrived(1);
  });
});

describe('makeTempDir / makeTempHome', () => {
  it('creates directories and removes them (idempotently)', async () => {
    const dir = await makeTempDir('wave-testkit-x-');
    expect(statSync(dir.path).isDirectory()).toBe(true);
    expect(dir.path).toMatch(/wave-testkit-x-/);
    await dir.cleanup();
    await dir.cleanup();
    expect(existsSync(dir.path)).toBe(false);

    const home = await makeTempHome();
    expect(statSync(home.home).isDirectory()).toBe(true);
    expect(statSync(home.workdir).isDirectory()).toBe(true);
    expect(home.env).toEqual({ WAVE_HOME: home.home });
    expect(home.home.startsWith(home.root)).toBe(true);
    await home.cleanup();
    expect(existsSync(home.root)).toBe(false);
  });
});

describe('makeMarker / markerEnv', () => {
  it('uses the run namespace set by the leak check', () => {
    const marker = makeMarker();
    expect(marker.startsWith(`${process.env.WAVE_REAPER_NAMESPACE}:`)).toBe(true);
    expect(makeMarker('other')).toMatch(/^other:[0-9a-f-]{36}$/);
    expect(markerEnv('x:y')).toEqual({ WAVE_REAPER_ID: 'x:y' });
  });
});

describe.runIf(process.platform === 'linux')('process helpers (Linux /proc)', () => {
  /** node -e: spawns a marked child of its own, prints its pid, sleeps. */
  const PARENT = `
    const { spawn } = require('node:child_process');
    const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)', 'testkit-grandchild'], { stdio: 'ignore' });
    console.log(c.pid);
    setInterval(() => {}, 1 << 30);
  `;

  async function startTree() {
    const marker = cleanup.marker();
    const child = spawn(process.execPath, ['-e', PARENT, 'testkit-parent'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...markerEnv(marker) },
    });
    const grandchild = await new Promise<number>((resolve) =>
      child.stdout.once('data', (b: Buffer) => resolve(Number(String(b).trim()))),
    );
    return { marker, parent: child.pid as number, grandchild, child };
  }

  it('supportsProcScan is true here', () => {
    expect(supportsProcScan()).toBe(true);
  });

  it('finds a tree by marker and lists descendants; reads cmdline and marker', async () => {
    const { marker, parent, grandchild } = await startTree();
    expect(findProcessesByMarker(marker).sort()).toEqual([parent, grandchild].sort());
    expect(listDescendants(parent)).toEqual([grandchild]);
    expect(listDescendants(process.pid)).toEqual(expect.arrayContaining([parent, grandchild]));
    expect(readCmdline(grandchild)).toContain('testkit-grandchild');
    expect(readMarker(grandchild)).toBe(marker);
    expect(findProcessesByMarker(makeMarker())).toEqual([]);
  });

  it('isPidAlive / killPids: dead and zombie pids are not alive; killing dead pids is fine', async () => {
    const { parent, grandchild, child } = await startTree();
    expect(isPidAlive(parent)).toBe(true);
    expect(isPidAlive(-1)).toBe(false);
    expect(isPidAlive(0)).toBe(false);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    expect(killPids([parent])).toEqual([parent]);
    await exited;
    expect(isPidAlive(parent)).toBe(false);
    // Orphaned now; killing it may leave a zombie if PID 1 does not reap: still "dead".
    expect(killPids([grandchild, grandchild])).toContain(grandchild);
    await waitFor(() => !isPidAlive(grandchild), { message: 'grandchild dead' });
    expect(killPids([parent, 999_999_999])).toEqual([]);
  });

  it('killMarked kills the whole marked set and reports it', async () => {
    const { marker, parent, grandchild } = await startTree();
    const killed = await killMarked(marker);
    expect(killed.sort()).toEqual([parent, grandchild].sort());
    expect(findProcessesByMarker(marker)).toEqual([]);
    expect(await killMarked(marker)).toEqual([]);
  });
});

describe('childProcessTransport', () => {
  it('connects an SDK client to a child you spawned and fires onclose once when it exits', async () => {
    const spec = fixtureServer('hello');
    const child = spawn(spec.command, spec.args, {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...markerEnv(cleanup.marker()) },
    });
    const transport = childProcessTransport(child);
    const client = new Client({ name: 'testkit-test', version: '0.0.0' });
    let closes = 0;
    client.onclose = () => {
      closes += 1;
    };
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'mine' } }))).toBe('mine');
    expect(transport.child).toBe(child);
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    await client.close(); // ends stdin: hello exits on its own
    expect(await exited).toBe(0);
    expect(closes).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', method: 'ping', id: 1 })).rejects.toThrow('Not connected');
  });
});
