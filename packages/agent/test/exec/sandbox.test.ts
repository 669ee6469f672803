import { afterAll, describe, expect, test } from 'vitest';
import { renderSignature } from '../../src/exposure/catalog';
import { createExecSandbox } from '../../src/exposure/exec/sandbox';
import { deferred, memoryHost, textOf, tool } from './host';

// Generous: the machine may be heavily loaded. Budget tests use their own sandbox.
const sandbox = createExecSandbox({ timeoutMs: 20_000, maxCalls: 5, maxImages: 2 });
const tight = createExecSandbox({ timeoutMs: 20_000, maxConsoleChars: 200, maxResultChars: 100 });
afterAll(() => Promise.all([sandbox.close(), tight.close()]));

/** The returned value of a successful run, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: test data of any shape
function returned(r: { content: unknown }): any {
  const text = textOf(r.content);
  expect(text.startsWith('Result:\n')).toBe(true);
  return JSON.parse(text.slice('Result:\n'.length).split('\n\n')[0] ?? '');
}

const echo = tool('srv', 'echo', 'Echo the arguments back as JSON');
const fail = tool('srv', 'fail', 'Always fails');
const pool = [echo, fail, tool('my-server', 'tool-name', 'A dashed tool')];
const impls = {
  mcp__srv__echo: (args: unknown) => ({ content: JSON.stringify(args) }),
  mcp__srv__fail: () => ({ content: [{ type: 'text' as const, text: 'boom from the tool' }], isError: true }),
};

describe('results', () => {
  test('the returned value is serialized, with console output', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await sandbox.run(
      'console.log("step", 1, { a: [1, 2] }); console.warn("careful"); return { ok: true, n: 2 }',
      host,
    );
    expect(r.isError).toBe(false);
    expect(r.content).toBe(
      'Result:\n{\n  "ok": true,\n  "n": 2\n}\n\nConsole output:\nstep 1 {"a":[1,2]}\n[warn] careful',
    );
  });

  test('a string is returned as is', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await sandbox.run('return "plain text"', host);
    expect(r.content).toBe('Result:\nplain text');
  });

  test('neither a value nor console output is said explicitly', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await sandbox.run('const x = 1;', host);
    expect(r).toMatchObject({
      isError: false,
      content: 'The script finished without returning a value and printed nothing.',
    });
  });

  test('the result is cut with its total length stated', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await tight.run('return "x".repeat(250)', host);
    expect(r.content).toBe(
      `Result:\n${'x'.repeat(100)}\n[result cut: showing the first 100 of 250 characters]`,
    );
  });

  test('a huge result is cut in the worker; the total length still stated', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await tight.run('return "y".repeat(5_000_000)', host);
    expect(r.content).toBe(
      `Result:\n${'y'.repeat(100)}\n[result cut: showing the first 100 of 5000000 characters]`,
    );
  });

  test('a long error message is cut too', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await tight.run('throw new Error("e".repeat(1000))', host);
    expect(r.failure?.message).toBe(
      `Error: ${'e'.repeat(93)}\n[error message cut: showing the first 100 of 1007 characters]`,
    );
  });

  test('console output is capped', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await tight.run('for (let i = 0; i < 100; i++) console.log("line " + i); return 1', host);
    expect(r.isError).toBe(false);
    expect(r.console.length).toBeLessThanOrEqual(200);
    expect(textOf(r.content)).toContain('[console output cut after 200 characters]');
    expect(textOf(r.content)).toContain('Result:\n1');
  });

  test('a thrown error is a failed result carrying the console output', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await sandbox.run('console.log("before"); throw new TypeError("bad input")', host);
    expect(r).toMatchObject({
      isError: true,
      failure: { code: 'EXEC_SCRIPT_ERROR', message: 'TypeError: bad input' },
    });
    expect(r.content).toBe('Exec failed: TypeError: bad input\n\nConsole output before the failure:\nbefore');
  });

  test('a syntax error is a failed result', async () => {
    const { host } = memoryHost(pool, impls);
    const r = await sandbox.run('return {', host);
    expect(r.isError).toBe(true);
    expect(r.failure?.code).toBe('EXEC_SCRIPT_ERROR');
    expect(r.failure?.message).toMatch(/^SyntaxError/);
  });

  test.each([[''], ['   \n'], [undefined], [42]])(
    'code %j is an argument error and starts nothing',
    async (code) => {
      const m = memoryHost(pool, impls);
      const r = await sandbox.run(code, m.host);
      expect(r).toMatchObject({ isError: true, failure: { code: 'EXEC_BAD_ARGUMENT' } });
      expect(m.listed).toBe(0);
    },
  );
});

describe('nested calls', () => {
  test('arguments pass through unchanged and the call resolves to the content', async () => {
    const m = memoryHost(pool, impls);
    const args = {
      path: '/tmp/a b',
      n: 1.5,
      flag: false,
      nil: null,
      list: [1, 'two', { three: 3 }],
      nested: { deep: { x: 'y' } },
    };
    const r = await sandbox.run(
      `return JSON.parse(await tools.mcp__srv__echo(${JSON.stringify(args)}))`,
      m.host,
    );
    expect(r.isError).toBe(false);
    expect(m.calls).toHaveLength(1);
    expect(m.calls[0]?.fullName).toBe('mcp__srv__echo');
    expect(m.calls[0]?.args).toEqual(args);
    expect(returned(r)).toEqual(args);
  });

  test('bracket access reaches a dashed name; no arguments means {}', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run('return await tools["mcp__my-server__tool-name"]()', m.host);
    expect(r.content).toBe('Result:\ncalled mcp__my-server__tool-name');
    expect(m.calls[0]?.args).toEqual({});
  });

  test('a failing call rejects that await only; try/catch carries on', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run(
      `let msg; try { await tools.mcp__srv__fail({}) } catch (e) { msg = e.message }
       const after = await tools.mcp__srv__echo({ after: true });
       return { msg, after }`,
      m.host,
    );
    expect(r.isError).toBe(false);
    expect(textOf(r.content)).toContain('"msg": "boom from the tool"');
    expect(textOf(r.content)).toContain('"after": "{\\"after\\":true}"');
  });

  test('a host rejection (a denied approval) the script does not catch fails the whole Exec with that reason', async () => {
    const m = memoryHost(pool, {
      mcp__srv__echo: () => Promise.reject(new Error('denied by the user: mcp__srv__echo')),
    });
    const r = await sandbox.run(
      'console.log("asking"); await tools.mcp__srv__echo({}); return "not reached"',
      m.host,
    );
    expect(r).toMatchObject({
      isError: true,
      failure: { code: 'EXEC_SCRIPT_ERROR', message: 'Error: denied by the user: mcp__srv__echo' },
    });
    expect(r.console).toBe('asking');
  });

  test('a host that throws synchronously or returns something malformed fails that call only', async () => {
    const m = memoryHost(pool, {
      mcp__srv__echo: () => {
        throw new Error('sync throw');
      },
      mcp__srv__fail: () => ({ content: undefined as unknown as string }),
    });
    const r = await sandbox.run(
      `const out = [];
       for (const f of [tools.mcp__srv__echo, tools.mcp__srv__fail]) { try { await f({}) } catch (e) { out.push(e.message) } }
       return out`,
      m.host,
    );
    const out = returned(r);
    expect(out[0]).toBe('sync throw');
    expect(out[1]).toMatch(/^mcp__srv__fail failed: /);
  });

  test('the call over the limit is rejected alone and the script goes on', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run(
      `const out = [];
       for (let i = 0; i < 7; i++) {
         try { await tools.mcp__srv__echo({ i }); out.push('ok') } catch (e) { out.push(e.message) }
       }
       return out`,
      m.host,
    );
    expect(r.isError).toBe(false);
    expect(m.calls).toHaveLength(5);
    expect(r.calls).toBe(5);
    const out = returned(r);
    expect(out.slice(0, 5)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(out[5]).toMatch(/^call limit reached/);
    expect(out[6]).toMatch(/^call limit reached/);
  });

  test('images: placeholders for the script, pixels attached up to the limit', async () => {
    const img = (n: number) => ({ type: 'image' as const, mimeType: 'image/png', data: `AAA${n}` });
    const m = memoryHost(pool, {
      mcp__srv__echo: () => ({ content: [{ type: 'text', text: 'two images' }, img(1), img(2)] }),
    });
    const r = await sandbox.run(
      `const a = await tools.mcp__srv__echo({}); const b = await tools.mcp__srv__echo({});
       return { count: a.filter((x) => x.type === 'image').length, a, b }`,
      m.host,
    );
    expect(r.isError).toBe(false);
    expect(Array.isArray(r.content)).toBe(true);
    const blocks = r.content as { type: string }[];
    expect(blocks.filter((b) => b.type === 'image')).toEqual([img(1), img(2)]);
    const text = textOf(r.content);
    expect(text).toContain('"count": 2');
    expect(text).toContain('"omitted": true');
    expect(text).not.toContain('AAA');
    expect(text).toContain('2 image(s) were not attached');
  });

  test('an unknown mcp__ name rejects with the search hint; then and ordinary reads are unaffected', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run(
      `let err; try { await tools.mcp__nope__missing({}) } catch (e) { err = e.message }
       const same = (await tools) === tools;
       return { err, thenType: typeof tools.then, other: typeof tools.somethingElse, same, keys: Object.keys(tools) }`,
      m.host,
    );
    const out = returned(r);
    expect(out.err).toBe(
      'unknown tool "mcp__nope__missing": only MCP tools are reachable; find them with tools["$codemode"].search(...)',
    );
    expect(out).toMatchObject({ thenType: 'undefined', other: 'undefined', same: true });
    expect(out.keys).toEqual(['mcp__srv__echo', 'mcp__srv__fail', 'mcp__my-server__tool-name']);
    expect(m.calls).toHaveLength(0);
  });

  test('tools.search is not the search, and says where it is', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run('await tools.search("echo")', m.host);
    expect(r.failure?.message).toBe(
      'Error: tools.search is not a tool; to search the MCP tools use await tools["$codemode"].search("what you need")',
    );
  });

  test('$codemode.search returns name, description and the catalog signature, and counts as a call', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run('const hits = await tools["$codemode"].search("echo"); return hits', m.host);
    expect(r.isError).toBe(false);
    expect(r.calls).toBe(1);
    expect(m.searches).toEqual([{ query: 'echo', limit: 12 }]);
    const hits = returned(r);
    expect(hits).toEqual([
      {
        name: 'mcp__srv__echo',
        description: 'Echo the arguments back as JSON',
        signature: renderSignature(echo),
      },
    ]);
  });

  test('$codemode.search with an empty query covers the whole pool', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run('return (await tools["$codemode"].search("")).map((h) => h.name)', m.host);
    expect(returned(r)).toHaveLength(3);
    expect(m.searches[0]?.limit).toBe(3);
  });

  test('the callable set is computed when the script runs', async () => {
    const m = memoryHost([echo], impls);
    const late = tool('late', 'hello', 'Connected after the declaration');
    m.host.pool = [echo, late];
    const r1 = await sandbox.run('return await tools.mcp__late__hello({})', m.host);
    expect(r1.content).toBe('Result:\ncalled mcp__late__hello');
    m.host.pool = [late];
    const r2 = await sandbox.run('return await tools.mcp__srv__echo({})', m.host);
    expect(r2.isError).toBe(true);
    expect(r2.failure?.message).toMatch(/only MCP tools are reachable/);
  });

  test('scripts never run concurrently', async () => {
    const gate = deferred<void>();
    const reachedFirst = deferred<void>();
    const order: string[] = [];
    const m = memoryHost(pool, {
      mcp__srv__echo: async (args) => {
        order.push(`start ${JSON.stringify(args)}`);
        reachedFirst.resolve();
        if ((args as { n: number }).n === 1) await gate.promise;
        order.push(`end ${JSON.stringify(args)}`);
        return { content: 'ok' };
      },
    });
    const first = sandbox.run('return await tools.mcp__srv__echo({ n: 1 })', m.host);
    const second = sandbox.run('return await tools.mcp__srv__echo({ n: 2 })', m.host);
    await reachedFirst.promise;
    expect(order).toEqual(['start {"n":1}']);
    gate.resolve();
    await Promise.all([first, second]);
    expect(order).toEqual(['start {"n":1}', 'end {"n":1}', 'start {"n":2}', 'end {"n":2}']);
  });

  test('a call still in flight when the script returns is aborted and never delivered', async () => {
    const started = deferred<AbortSignal>();
    const m = memoryHost(pool, {
      mcp__srv__echo: (_args, signal) => {
        started.resolve(signal);
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ content: 'late' })));
      },
    });
    const r = await sandbox.run(
      'tools.mcp__srv__echo({}).then(() => { while (true) {} }); await tools.mcp__srv__fail({}).catch(() => 0); return "done"',
      m.host,
    );
    expect(r.content).toBe('Result:\ndone');
    expect((await started.promise).aborted).toBe(true);
    const next = await sandbox.run('return "next"', m.host);
    expect(next.content).toBe('Result:\nnext');
  });

  test('each run gets a fresh context', async () => {
    const m = memoryHost(pool, impls);
    await sandbox.run(
      'globalThis.leftover = 1; Object.prototype.polluted = "yes"; Array.prototype.push = null; return 1',
      m.host,
    );
    const r = await sandbox.run(
      'return [typeof leftover, ({}).polluted === undefined, typeof [].push]',
      m.host,
    );
    expect(returned(r)).toEqual(['undefined', true, 'function']);
  });

  test('a reused worker shows one script nothing of another (other agent, other turn)', async () => {
    const own = createExecSandbox({ timeoutMs: 20_000 });
    try {
      const first = memoryHost([echo], impls);
      const other = memoryHost([fail], impls);
      const dirty =
        'globalThis.secret = "agent-1"; var hoisted = 1; console.log = () => {}; ' +
        'Object.prototype.polluted = "yes"; Promise.prototype.then = null; JSON.stringify = () => "x"; ' +
        'return await tools.mcp__srv__echo({ from: "first" })';
      expect(returned(await own.run(dirty, first.host))).toEqual({ from: 'first' });
      const probe =
        'console.log("visible"); ' +
        'const echo = await tools.mcp__srv__echo({}).then(() => "callable", (e) => e.message); ' +
        'return [typeof secret, typeof hoisted, ({}).polluted === undefined, JSON.stringify([1]), echo]';
      // Right after the first (the context is made on demand), and after the worker had time to prepare one.
      for (const attempt of [0, 1]) {
        if (attempt === 1) await new Promise((resolve) => setTimeout(resolve, 50));
        const r = await own.run(probe, other.host);
        expect(r.console).toBe('visible');
        const [secret, hoisted, clean, json, echoResult] = returned(r);
        expect([secret, hoisted, clean, json]).toEqual(['undefined', 'undefined', true, '[1]']);
        // The other agent's pool has no echo: the first pool's names are gone too.
        expect(echoResult).toContain('only MCP tools are reachable');
      }
      expect(returned(await own.run('return await tools.mcp__srv__echo({ back: 1 })', first.host))).toEqual({
        back: 1,
      });
    } finally {
      await own.close();
    }
  });
});

describe('abort', () => {
  test('an already aborted signal fails at once and starts nothing', async () => {
    const m = memoryHost(pool, impls);
    const r = await sandbox.run('return 1', m.host, { signal: AbortSignal.abort() });
    expect(r).toMatchObject({ isError: true, failure: { code: 'EXEC_ABORTED' } });
    expect(m.listed).toBe(0);
  });

  test('aborting a running script stops it and keeps its console output', async () => {
    const reached = deferred<void>();
    const m = memoryHost(pool, {
      mcp__srv__echo: () => {
        reached.resolve();
        return { content: 'ok' };
      },
    });
    const controller = new AbortController();
    const running = sandbox.run(
      'console.log("started"); await tools.mcp__srv__echo({}); while (true) {}',
      m.host,
      {
        signal: controller.signal,
      },
    );
    await reached.promise;
    controller.abort();
    const r = await running;
    expect(r).toMatchObject({ isError: true, failure: { code: 'EXEC_ABORTED' }, console: 'started' });
    expect(r.content).toContain('Console output before the failure:\nstarted');
    const next = await sandbox.run('return "alive"', m.host);
    expect(next.content).toBe('Result:\nalive');
  });
});
