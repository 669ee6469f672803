import { afterAll, describe, expect, test } from 'vitest';
import { createExecSandbox } from '../../src/exposure/exec/sandbox';
import { deferred, memoryHost, tool } from './host';

// The budget is short; the bound on how long a stopped run may take is generous,
// because the machine may be heavily loaded.
const BUDGET_MS = 1500;
const BOUND_MS = 20_000;

const sandbox = createExecSandbox({ timeoutMs: BUDGET_MS });
afterAll(() => sandbox.close());

const pool = [tool('srv', 'echo')];

describe('the wall-clock budget stops every way a script can hang', () => {
  test.each([
    ['a synchronous loop', 'console.log("tick"); while (true) {}'],
    ['a loop after an await', 'console.log("tick"); await tools.mcp__srv__echo({}); for (;;) {}'],
    ['an await that never settles', 'console.log("tick"); await new Promise(() => {})'],
    [
      'a blocking Atomics.wait',
      'console.log("tick"); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)',
    ],
    [
      'an endless microtask chain',
      'console.log("tick"); const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})',
    ],
  ])('%s', async (_name, code) => {
    const { host } = memoryHost(pool);
    // Warm the worker so the budget is spent on the script, not on a thread start.
    expect((await sandbox.run('return 1', host)).isError).toBe(false);
    const t0 = performance.now();
    const r = await sandbox.run(code, host);
    const elapsed = performance.now() - t0;
    // The promise chain also allocates without bound: where Node lets the host
    // watch the worker's heap, the memory guard may stop it before the budget.
    const allocates = _name === 'an endless microtask chain';
    if (allocates) expect(['EXEC_TIMEOUT', 'EXEC_CRASHED']).toContain(r.failure?.code);
    else expect(r.failure?.code).toBe('EXEC_TIMEOUT');
    expect(r.isError).toBe(true);
    expect(r.console).toBe('tick');
    expect(r.content).toContain('Console output before the failure:\ntick');
    if (!allocates) expect(elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(elapsed).toBeLessThan(BOUND_MS);
    // The sandbox carries on with a new worker.
    expect((await sandbox.run('return "after"', host)).content).toBe('Result:\nafter');
  });
});

test('work a script leaves queued behind its return is charged to that run, not the next', async () => {
  const { host } = memoryHost(pool);
  for (const code of [
    // Queued to run after the script's own return has been handled.
    'console.log("tick"); Promise.resolve().then(() => 0).then(() => 0).then(() => { for (;;) {} }); return "early"',
    'console.log("tick"); const f = () => Promise.resolve().then(f); f(); return "early"',
  ]) {
    const t0 = performance.now();
    const r = await sandbox.run(code, host);
    expect(['EXEC_TIMEOUT', 'EXEC_CRASHED']).toContain(r.failure?.code);
    expect(r.console).toBe('tick');
    expect(performance.now() - t0).toBeLessThan(BOUND_MS);
    expect((await sandbox.run('return "next"', host)).content).toBe('Result:\nnext');
  }
});

test('a crashed worker (out of memory) is a failed result, and the next script runs', async () => {
  const small = createExecSandbox({ timeoutMs: 60_000, memoryLimitMb: 16 });
  try {
    const { host } = memoryHost(pool);
    const r = await small.run(
      'console.log("allocating"); const keep = []; for (;;) keep.push(new Array(100000).fill(Math.random()))',
      host,
    );
    expect(r.failure?.code).toBe('EXEC_CRASHED');
    expect(r.isError).toBe(true);
    expect(r.console).toBe('allocating');
    expect((await small.run('return "recovered"', host)).content).toBe('Result:\nrecovered');
  } finally {
    await small.close();
  }
});

describe('close', () => {
  test('settles the running and the queued scripts, is idempotent, and refuses new runs', async () => {
    const s = createExecSandbox({ timeoutMs: 60_000 });
    const reached = deferred<void>();
    const { host } = memoryHost(pool, {
      mcp__srv__echo: () => {
        reached.resolve();
        return { content: 'ok' };
      },
    });
    const running = s.run('await tools.mcp__srv__echo({}); await new Promise(() => {})', host);
    const queued = s.run('return 1', host);
    await reached.promise;
    const first = s.close();
    const second = s.close();
    expect(second).toBe(first);
    await first;
    expect((await running).failure?.code).toBe('EXEC_CLOSED');
    expect((await queued).failure?.code).toBe('EXEC_CLOSED');
    expect((await s.run('return 1', host)).failure?.code).toBe('EXEC_CLOSED');
  });

  test('leaves no worker and no timer behind', async () => {
    const count = () => {
      const counts = new Map<string, number>();
      for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
      return counts;
    };
    const before = count();
    const s = createExecSandbox({ timeoutMs: 60_000 });
    const { host } = memoryHost(pool);
    expect((await s.run('return await tools.mcp__srv__echo({})', host)).isError).toBe(false);
    const running = s.run('await new Promise(() => {})', host);
    expect(count().get('MessagePort') ?? 0).toBeGreaterThan(before.get('MessagePort') ?? 0);
    await s.close();
    expect((await running).failure?.code).toBe('EXEC_CLOSED');
    const after = count();
    for (const kind of ['MessagePort', 'Timeout', 'Immediate']) {
      expect(after.get(kind) ?? 0, kind).toBeLessThanOrEqual(before.get(kind) ?? 0);
    }
  });

  test('a sandbox that never ran closes at once', async () => {
    const s = createExecSandbox();
    await s.close();
    await s.close();
  });

  test('aborting a queued script settles it without waiting for the running one', async () => {
    const s = createExecSandbox({ timeoutMs: 60_000 });
    try {
      const reached = deferred<void>();
      const { host } = memoryHost(pool, {
        mcp__srv__echo: () => {
          reached.resolve();
          return { content: 'ok' };
        },
      });
      const running = s.run('await tools.mcp__srv__echo({}); await new Promise(() => {})', host);
      await reached.promise;
      const controller = new AbortController();
      const queued = s.run('return 1', host, { signal: controller.signal });
      controller.abort();
      expect((await queued).failure?.code).toBe('EXEC_ABORTED');
      await s.close();
      expect((await running).failure?.code).toBe('EXEC_CLOSED');
    } finally {
      await s.close();
    }
  });
});

describe('a script that allocates without bound never takes the host down', () => {
  test.each([
    ['a growing array', 'const a = []; for (;;) a.push(new Array(100000).fill(1));'],
    [
      'an endless promise chain',
      'const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})',
    ],
  ])('%s: the run fails, this process lives, the next script runs', async (_name, code) => {
    const big = createExecSandbox({ timeoutMs: 60_000 });
    try {
      const { host } = memoryHost(pool);
      const r = await big.run(code, host);
      expect(r.isError).toBe(true);
      expect(r.failure?.code).toBe('EXEC_CRASHED');
      expect((await big.run('return "after"', host)).content).toBe('Result:\nafter');
    } finally {
      await big.close();
    }
  });
});
