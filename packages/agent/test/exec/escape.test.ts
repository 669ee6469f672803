import { afterAll, expect, test } from 'vitest';
import { createExecSandbox } from '../../src/exposure/exec/sandbox';
import { memoryHost, textOf, tool } from './host';

const sandbox = createExecSandbox({ timeoutMs: 20_000 });
afterAll(() => sandbox.close());

const pool = [tool('srv', 'echo'), tool('srv', 'fail')];
function host() {
  return memoryHost(pool, {
    mcp__srv__echo: (args) => ({ content: JSON.stringify(args) }),
    mcp__srv__fail: () => Promise.reject(new Error('host failure')),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: test data of any shape
async function value(code: string): Promise<any> {
  const r = await sandbox.run(code, host().host);
  expect(r.isError, textOf(r.content)).toBe(false);
  return JSON.parse(textOf(r.content).slice('Result:\n'.length));
}

/** Script helper: what happens when `v.constructor.constructor` is used to generate code. */
const PROBE = `function probe(v) {
  if (v === null || v === undefined) return 'none';
  try { const F = v.constructor.constructor; const out = F('return typeof process')(); return 'ESCAPED:' + out }
  catch (e) { return e && e.name }
}`;

test('only tools and console exist', async () => {
  const names = [
    'require',
    'process',
    'Buffer',
    'module',
    'exports',
    'fetch',
    'XMLHttpRequest',
    'setTimeout',
    'setInterval',
    'setImmediate',
    'queueMicrotask',
    'global',
    '__dirname',
    '__filename',
    'structuredClone',
    'WebSocket',
  ];
  const out = await value(
    `return { types: [${names.map((n) => `typeof ${n}`).join(', ')}], tools: typeof tools, console: typeof console }`,
  );
  expect(out.types).toEqual(names.map(() => 'undefined'));
  expect(out).toMatchObject({ tools: 'object', console: 'object' });
});

test('import() fails with a plain-language message and an error of the sandbox realm', async () => {
  const out = await value(`${PROBE}
    try { await import("node:fs"); return "imported" } catch (e) { return [e.message, probe(e)] }`);
  expect(out).toEqual([
    'import() is not available in Exec scripts: only tools and console exist',
    'EvalError',
  ]);
});

test('import cannot be spelled with escapes, and the word elsewhere is harmless', async () => {
  const escaped = await sandbox.run('return await \\u0069mport("node:fs")', host().host);
  expect(escaped.failure?.message).toMatch(/^SyntaxError/);
  const r = await sandbox.run('const important = "import this"; return important', host().host);
  expect(r.content).toBe('Result:\nimport this');
});

test('an uncaught import() fails the script with the same message', async () => {
  const r = await sandbox.run(
    'const fs = await import("fs"); return fs.readFileSync("/etc/passwd", "utf8")',
    host().host,
  );
  expect(r.failure?.message).toBe(
    'Error: import() is not available in Exec scripts: only tools and console exist',
  );
});

test.each([
  ['eval', 'return eval("1 + 1")'],
  ['new Function', 'return new Function("return 1")()'],
  ['Function()', 'return Function("return 1")()'],
  ['async function constructor', 'return (async function () {}).constructor("return 1")()'],
  ['generator function constructor', 'return (function* () {}).constructor("yield 1")().next()'],
  ['indirect eval', 'return (0, eval)("1")'],
])('%s throws EvalError', async (_name, code) => {
  const r = await sandbox.run(code, host().host);
  expect(r.isError).toBe(true);
  expect(r.failure?.message).toMatch(/^EvalError: Code generation from strings disallowed/);
});

test('WebAssembly cannot compile', async () => {
  const out = await value(`${PROBE}
    try { await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); return "compiled" }
    catch (e) { return [e.name, probe(e)] }`);
  expect(out[0]).not.toBe('compiled');
  expect(out[1]).toBe('EvalError');
});

test('every reachable function belongs to the sandbox realm', async () => {
  const out = await value(`${PROBE}
    return {
      wrapper: probe(tools.mcp__srv__echo),
      missing: probe(tools.mcp__srv__missing),
      misuse: probe(tools.search),
      search: probe(tools["$codemode"].search),
      codemode: probe(tools["$codemode"]),
      log: probe(console.log),
      consoleObject: probe(console),
      toolsObject: probe(tools),
      self: probe(this),
      global: probe(globalThis),
      promise: probe(tools.mcp__srv__echo({})),
    }`);
  for (const [k, v] of Object.entries(out))
    expect([k, v]).toEqual([k, expect.stringMatching(/^(EvalError|TypeError|none)$/)]);
  expect(out.wrapper).toBe('EvalError');
  expect(out.log).toBe('EvalError');
  expect(out.promise).toBe('EvalError');
});

test('tools.x.constructor("return process")() does not reach the host', async () => {
  const a = await sandbox.run('return tools.mcp__srv__echo.constructor("return process")()', host().host);
  expect(a.failure?.message).toMatch(/^EvalError/);
  const b = await sandbox.run('return tools.x.constructor("return process")()', host().host);
  expect(b.failure?.message).toMatch(/^TypeError/);
  const c = await sandbox.run('return tools.constructor.constructor("return process")()', host().host);
  expect(c.failure?.message).toMatch(/^TypeError/);
});

test('errors handed to the script by the host belong to the sandbox realm', async () => {
  const out = await value(`${PROBE}
    const got = [];
    try { await tools.mcp__srv__fail({}) } catch (e) { got.push(e.message, probe(e)) }
    try { await tools.mcp__nope__x({}) } catch (e) { got.push(probe(e)) }
    try { await tools.mcp__srv__echo(() => 1) } catch (e) { got.push(e.name, probe(e)) }
    try { await tools["$codemode"].search(42) } catch (e) { got.push(probe(e)) }
    return got`);
  expect(out).toEqual(['host failure', 'EvalError', 'EvalError', 'TypeError', 'EvalError', 'EvalError']);
});

test('arguments.callee.caller does not reach the host', async () => {
  // Either the read throws (strict caller) or it yields nothing: never a host function.
  const out = await value(`${PROBE}
    const read = (f) => { try { const v = f(); return v === null || v === undefined ? 'none' : probe(v) } catch (e) { return e.name } };
    const top = read(() => arguments.callee.caller);
    let inner;
    await tools.mcp__srv__echo({}).then(function cb() { inner = read(() => cb.caller) });
    return [top, inner]`);
  for (const v of out) expect(['none', 'TypeError', 'EvalError']).toContain(v);
});

test('Error.prepareStackTrace sees no host function or receiver', async () => {
  const out = await value(`${PROBE}
    const seen = [];
    Error.prepareStackTrace = (err, frames) => {
      for (const f of frames) { seen.push(f.getFunction(), f.getThis()) }
      return 'trace';
    };
    await tools.mcp__srv__echo({}).then(() => new Error('inside a host-driven continuation').stack);
    try { await tools.mcp__srv__fail({}) } catch (e) { e.stack }
    try { null.x } catch (e) { e.stack }
    function dive(n) { if (n > 0) return dive(n - 1); return new Error('deep').stack }
    dive(5);
    return seen.filter((v) => v !== undefined && v !== null).map(probe)`);
  for (const v of out) expect(v).toBe('EvalError');
});

test('a stack overflow next to the bridge surfaces only sandbox errors', async () => {
  const out = await value(`${PROBE}
    const caught = [];
    function dive() {
      try { dive() } catch (e) {
        try { tools.mcp__srv__echo({ a: 1 }).catch((err) => caught.push(err)); console.log('x') } catch (e2) { caught.push(e2) }
      }
    }
    dive();
    await tools.mcp__srv__echo({});
    return caught.map(probe)`);
  for (const v of out) expect(v).toBe('EvalError');
});

test('prototype pollution payloads reach the host as plain data only', async () => {
  const m = host();
  const r = await sandbox.run(
    `await tools.mcp__srv__echo(JSON.parse('{"__proto__": {"polluted": "yes"}, "a": 1, "nested": {"__proto__": {"polluted": "yes"}}}'));
     await tools.mcp__srv__echo({ constructor: { prototype: { polluted: "yes" } } });
     Object.prototype.polluted = "yes"; Array.prototype.polluted = "yes";
     await tools.mcp__srv__echo({ b: [1] });
     return "sent"`,
    m.host,
  );
  expect(r.content).toBe('Result:\nsent');
  expect(m.calls.map((c) => c.args)).toEqual<unknown[]>([
    { a: 1, nested: {} },
    { constructor: { prototype: { polluted: 'yes' } } },
    { b: [1] },
  ]);
  for (const c of m.calls) {
    expect(Object.getPrototypeOf(c.args)).toBe(Object.prototype);
    expect(Object.hasOwn(c.args as object, '__proto__')).toBe(false);
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
});

test('arguments that are not plain objects are rejected back to the script', async () => {
  const m = host();
  const r = await sandbox.run(
    `const results = [];
     for (const bad of [() => 1, [1, 2], "text", 3, new Map(), new (class A {})(), { m: new Map() }, { big: 1n }]) {
       try { await tools.mcp__srv__echo(bad); results.push("accepted") } catch (e) { results.push(e.name) }
     }
     return results`,
    m.host,
  );
  expect(JSON.parse(textOf(r.content).slice('Result:\n'.length))).toEqual(Array(8).fill('TypeError'));
  expect(m.calls).toHaveLength(0);
});

test('function and undefined fields are dropped, dates become strings, getters are read once', async () => {
  const m = host();
  await sandbox.run(
    `let reads = 0;
     await tools.mcp__srv__echo({ f() {}, u: undefined, a: [1, undefined, () => 2], d: new Date(0), get g() { reads++; return reads } });
     return reads`,
    m.host,
  );
  expect(m.calls[0]?.args).toEqual({ a: [1, null, null], d: '1970-01-01T00:00:00.000Z', g: 1 });
});

test('returning host-side objects gives plain data', async () => {
  const out = await value(`return {
    tools, console, wrapper: tools.mcp__srv__echo, codemode: tools["$codemode"], global: typeof globalThis,
    promise: tools.mcp__srv__echo({}),
  }`);
  expect(out).toEqual({ tools: {}, console: {}, codemode: {}, global: 'object', promise: {} });
  const r = await sandbox.run('return tools', host().host);
  expect(r.content).toBe('Result:\n{}');
});

test('tools cannot be replaced or extended by the script', async () => {
  const out = await value(`
    const r = [];
    const attempt = (f) => { try { f() } catch (e) { return e.name } return 'no error' };
    r.push(attempt(() => { 'use strict'; tools.mcp__srv__echo = () => "fake" }));
    r.push(attempt(() => { 'use strict'; tools.extra = 1 }));
    r.push(attempt(() => { 'use strict'; delete tools.mcp__srv__echo }));
    tools.mcp__srv__echo = () => "fake"; tools.extra = 1; delete tools.mcp__srv__echo; // sloppy: silently ignored
    r.push(typeof tools.extra);
    r.push(await tools.mcp__srv__echo({ still: "real" }));
    return r`);
  expect(out).toEqual(['TypeError', 'TypeError', 'TypeError', 'undefined', '{"still":"real"}']);
});
