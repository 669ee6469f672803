/**
 * The Exec worker, as JavaScript source run with `new Worker(src, { eval: true })`.
 *
 * It is a string (not a module file) so that it runs the same from TypeScript
 * source, from the bundled `dist`, and under any test runner, with no loader.
 *
 * Two realms meet here. The worker realm owns `require`, `process` and the
 * message port; the script runs in a fresh `node:vm` context per run, created
 * with code generation off. The only worker-realm values the context ever
 * holds are three bridge functions, captured in the closure of `bootstrap`
 * (which runs in the context realm, strict mode) and never stored on any
 * object the script can reach. The bridges take and return primitives only,
 * and every call to them is wrapped so that an exception thrown inside one
 * (even a stack overflow) surfaces as a context-realm error.
 *
 * Protocol (worker -> host): log, call, done. (host -> worker): run, settle.
 */
export const WORKER_SOURCE = String.raw`'use strict';
const { parentPort } = require('node:worker_threads');
const vm = require('node:vm');
const PREPARE_DELAY_MS = Number(require('node:worker_threads').workerData.prepareDelayMs);

// A promise rejected by the script and never handled must not end the worker.
process.on('unhandledRejection', () => {});

function bootstrap(hostCall, hostLog, hostDone, hostKnows, hostNames) {
  'use strict';
  // Runs inside the context. Capture every intrinsic before any script code runs.
  const O = Object;
  const create = O.create;
  const freeze = O.freeze;
  const getProto = O.getPrototypeOf;
  const ownKeys = O.keys;
  const defineProperty = O.defineProperty;
  const ObjectProto = O.prototype;
  const isArray = Array.isArray;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const P = Promise;
  const promiseThen = P.prototype.then;
  const ErrorC = Error;
  const TypeErrorC = TypeError;
  const ProxyC = Proxy;
  const StringC = String;
  const DateProto = Date.prototype;
  const toISO = Date.prototype.toISOString;
  const apply = Reflect.apply;
  const NOT_FOUND = 'only MCP tools are reachable; find them with tools["$codemode"].search(...)';

  let seq = 0;
  const pending = create(null);

  function fail(message, Ctor) {
    const e = new (Ctor || ErrorC)(message);
    return e;
  }

  function send(kind, name, payload) {
    return new P((resolve, reject) => {
      const id = ++seq;
      pending[id] = { resolve, reject };
      let sent = false;
      try {
        hostCall(kind, id, name, payload);
        sent = true;
      } catch {}
      if (!sent) {
        delete pending[id];
        reject(fail('the call could not be sent to the host'));
      }
    });
  }

  // Arguments: plain data only, deep-copied; __proto__ and function fields dropped.
  function copyArg(value, depth, seen) {
    if (value === null) return null;
    const t = typeof value;
    if (t === 'string' || t === 'boolean') return value;
    if (t === 'number') return value;
    if (t === 'undefined' || t === 'function' || t === 'symbol') return undefined;
    if (t === 'bigint') throw fail('a BigInt cannot be passed to a tool; pass a number or a string', TypeErrorC);
    if (depth > 64) throw fail('tool arguments are nested too deeply', TypeErrorC);
    for (let i = 0; i < seen.length; i++) {
      if (seen[i] === value) throw fail('tool arguments contain a cycle', TypeErrorC);
    }
    seen[seen.length] = value;
    let out;
    if (isArray(value)) {
      out = [];
      const n = value.length;
      for (let i = 0; i < n; i++) {
        const v = copyArg(value[i], depth + 1, seen);
        out[i] = v === undefined ? null : v;
      }
    } else {
      const proto = getProto(value);
      if (proto === DateProto) {
        seen.length = seen.length - 1;
        return apply(toISO, value, []);
      }
      if (proto !== ObjectProto && proto !== null) {
        throw fail('only plain data (objects, arrays, strings, numbers, booleans, null) can be passed to a tool', TypeErrorC);
      }
      out = create(null);
      const keys = ownKeys(value);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (k === '__proto__') continue;
        const v = copyArg(value[k], depth + 1, seen);
        if (v !== undefined) out[k] = v;
      }
    }
    seen.length = seen.length - 1;
    return out;
  }

  function callTool(name, args) {
    let payload;
    try {
      if (args === undefined) args = {};
      if (typeof args !== 'object' || args === null || isArray(args)) {
        throw fail('tool arguments must be a plain object, e.g. tools.' + name + '({ key: "value" })', TypeErrorC);
      }
      const proto = getProto(args);
      if (proto !== ObjectProto && proto !== null) {
        throw fail('tool arguments must be a plain object, e.g. tools.' + name + '({ key: "value" })', TypeErrorC);
      }
      payload = stringify(copyArg(args, 0, []));
      if (typeof payload !== 'string') throw fail('tool arguments could not be serialized', TypeErrorC);
    } catch (e) {
      return P.reject(e);
    }
    return send('call', name, payload);
  }

  function search(query, limit) {
    if (query === undefined || query === null) query = '';
    if (typeof query !== 'string') {
      return P.reject(fail('search(query) takes a string, e.g. tools["$codemode"].search("create issue")', TypeErrorC));
    }
    if (limit !== undefined && (typeof limit !== 'number' || !(limit >= 1))) {
      return P.reject(fail('search(query, limit): limit must be a positive number', TypeErrorC));
    }
    return send('search', query, limit === undefined ? '' : StringC(limit));
  }

  function rejecter(message) {
    const f = () => P.reject(fail(message));
    return f;
  }

  // Lenient serialization of the returned value and console arguments.
  function lenient(value, depth, seen) {
    if (value === null) return null;
    const t = typeof value;
    if (t === 'string' || t === 'boolean') return value;
    if (t === 'number') return value === value && value !== 1 / 0 && value !== -1 / 0 ? value : StringC(value);
    if (t === 'undefined') return undefined;
    if (t === 'bigint') return StringC(value);
    if (t === 'symbol') return undefined;
    if (t === 'function') return undefined;
    if (depth > 32) return '[...]';
    for (let i = 0; i < seen.length; i++) if (seen[i] === value) return '[Circular]';
    seen[seen.length] = value;
    let out;
    if (value instanceof ErrorC) {
      out = describe(value);
    } else if (isArray(value)) {
      out = [];
      const n = value.length;
      for (let i = 0; i < n; i++) {
        const v = lenient(value[i], depth + 1, seen);
        out[i] = v === undefined ? null : v;
      }
    } else if (getProto(value) === DateProto) {
      out = apply(toISO, value, []);
    } else {
      out = create(null);
      const keys = ownKeys(value);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (k === '__proto__') continue;
        const v = lenient(value[k], depth + 1, seen);
        if (v !== undefined) out[k] = v;
      }
    }
    seen.length = seen.length - 1;
    return out;
  }

  function describe(e) {
    try {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
        const name = e.name;
        const message = e.message;
        if (typeof message === 'string') {
          return (typeof name === 'string' && name ? name + ': ' : '') + message;
        }
      }
      if (typeof e === 'string') return e;
      const s = stringify(lenient(e, 0, []));
      return typeof s === 'string' ? s : StringC(e);
    } catch {
      return 'the script threw a value that cannot be described';
    }
  }

  function show(value) {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return '[Function]';
    if (typeof value === 'symbol') return 'Symbol()';
    try {
      const s = stringify(lenient(value, 0, []));
      return typeof s === 'string' ? s : StringC(value);
    } catch {
      return '[value]';
    }
  }

  function logger(prefix) {
    const f = (...args) => {
      let line = prefix;
      for (let i = 0; i < args.length; i++) line += (i > 0 ? ' ' : '') + show(args[i]);
      try {
        hostLog(line);
      } catch {}
    };
    return f;
  }

  function settle(id, ok, payload) {
    const p = pending[id];
    if (p === undefined) return;
    delete pending[id];
    if (ok) {
      let value;
      try {
        value = parse(payload);
      } catch {
        p.reject(fail('the tool result could not be read'));
        return;
      }
      p.resolve(value);
    } else {
      p.reject(fail(payload));
    }
  }

  // Prepared with the context, before the names are known.
  const codemode = freeze({ search: (query, limit) => search(query, limit) });
  const searchMisuse = rejecter('tools.search is not a tool; to search the MCP tools use await tools["$codemode"].search("what you need")');
  const consoleObject = freeze({
    log: logger(''),
    info: logger(''),
    debug: logger(''),
    warn: logger('[warn] '),
    error: logger('[error] '),
  });
  defineProperty(globalThis, 'console', { value: consoleObject, enumerable: false, writable: true, configurable: true });

  // The tools object. Which names are callable is asked of the worker (a string in, a
  // boolean out) at the moment of the read, so a run costs nothing per tool in the pool.
  function knows(key) {
    try {
      return hostKnows(key) === true;
    } catch {
      return false;
    }
  }
  function listNames() {
    try {
      const list = parse(hostNames());
      return isArray(list) ? list : [];
    } catch {
      return [];
    }
  }
  const wrappers = create(null);
  function wrapper(name) {
    let f = wrappers[name];
    if (f === undefined) {
      f = (args) => callTool(name, args);
      wrappers[name] = f;
    }
    return f;
  }
  function describeKey(key) {
    if (typeof key !== 'string') return undefined;
    if (key === '$codemode') return { value: codemode, writable: false, enumerable: false, configurable: true };
    if (knows(key)) return { value: wrapper(key), writable: false, enumerable: true, configurable: true };
    return undefined;
  }
  const refuse = () => false;
  const tools = new ProxyC(create(null), {
    get(t, key) {
      if (typeof key !== 'string') return undefined;
      if (key === '$codemode') return codemode;
      if (knows(key)) return wrapper(key);
      if (key.length > 5 && key[0] === 'm' && key[1] === 'c' && key[2] === 'p' && key[3] === '_' && key[4] === '_') {
        return rejecter('unknown tool ' + stringify(key) + ': ' + NOT_FOUND);
      }
      if (key === 'search') return searchMisuse;
      return undefined;
    },
    has(t, key) {
      return describeKey(key) !== undefined;
    },
    ownKeys() {
      const names = listNames();
      const keys = [];
      for (let i = 0; i < names.length; i++) if (typeof names[i] === 'string') keys[keys.length] = names[i];
      keys[keys.length] = '$codemode';
      return keys;
    },
    getOwnPropertyDescriptor(t, key) {
      return describeKey(key);
    },
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
    setPrototypeOf: refuse,
    preventExtensions: refuse,
  });
  defineProperty(globalThis, 'tools', { value: tools, enumerable: false, writable: false, configurable: false });

  function start(fn) {
    let promise;
    try {
      promise = fn();
    } catch (e) {
      const d = describe(e);
      try { hostDone(false, 'error', d); } catch {}
      return;
    }
    const onValue = (value) => {
      let kind = 'value';
      let text;
      if (value === undefined) {
        kind = 'none';
        text = '';
      } else if (typeof value === 'string') {
        kind = 'text';
        text = value;
      } else {
        try {
          text = stringify(lenient(value, 0, []), null, 2);
          if (typeof text !== 'string') {
            kind = 'none';
            text = '';
          }
        } catch (e) {
          kind = 'error';
          text = 'the returned value could not be serialized: ' + describe(e);
        }
      }
      try { hostDone(kind !== 'error', kind, text); } catch {}
    };
    const onError = (e) => {
      const d = describe(e);
      try { hostDone(false, 'error', d); } catch {}
    };
    // The intrinsic captured before the script ran: a script that replaces or breaks
    // Promise.prototype.then (or its species) fails its own run, not the worker.
    try {
      apply(promiseThen, promise, [onValue, onError]);
    } catch (e) {
      onError(e);
    }
  }

  return { settle, start };
}

// Compiled once; run in each fresh context.
const BOOTSTRAP = new vm.Script('(' + bootstrap.toString() + ')', { filename: 'exec-bootstrap.js' });

let current = null; // the running script: { run, settle, names, namesJson, logged, logLimit, resultLimit, logCut, done }
let prepared = null;
let prepareTimer = null;
// The callable names of the last run; the host sends them again only when they change.
let names = new Set();
let namesJson = '[]';

// The next script's fresh context is made a little after a run ends, off the path of
// the result on its way to the host (making one costs about a millisecond of CPU).
function prepareSoon() {
  if (prepareTimer !== null) return;
  prepareTimer = setTimeout(() => {
    prepareTimer = null;
    if (prepared === null && current === null) prepared = prepare();
  }, PREPARE_DELAY_MS);
}

function prepare() {
  const ctx = vm.createContext(Object.create(null), {
    name: 'exec',
    codeGeneration: { strings: false, wasm: false },
  });
  const CtxError = vm.runInContext('Error', ctx);
  const ref = { run: 0 };
  const hostCall = (kind, id, name, payload) => {
    if (current === null || current.run !== ref.run) return;
    parentPort.postMessage({ t: 'call', run: ref.run, kind: String(kind), id: Number(id), name: String(name), payload: String(payload) });
  };
  const hostLog = (text) => {
    const c = current;
    if (c === null || c.run !== ref.run || c.logCut) return;
    let s = String(text);
    const room = c.logLimit - c.logged;
    if (s.length + 1 > room) {
      s = s.slice(0, Math.max(0, room));
      c.logCut = true;
    }
    c.logged += s.length + 1;
    parentPort.postMessage({ t: 'log', run: ref.run, text: s, cut: c.logCut });
  };
  const hostDone = (ok, kind, text) => {
    const c = current;
    if (c === null || c.run !== ref.run || c.done) return;
    c.done = true;
    // Only what the host may show crosses the thread boundary; the total length goes along.
    const full = String(text);
    const max = c.resultLimit;
    const msg = { t: 'done', run: ref.run, ok: ok === true, kind: String(kind), text: full.length > max ? full.slice(0, max) : full, total: full.length };
    // Report only once the microtasks the script queued have drained, so work the
    // script left behind is charged to this run, not to the next one. A tick queued
    // from a microtask runs right after the microtask queue is empty, with no turn
    // of the event loop in between (an endless chain never lets it run: a timeout).
    // The microtask first makes that hold when this is not called from one.
    queueMicrotask(() =>
      process.nextTick(() => {
        if (current === c) current = null;
        parentPort.postMessage(msg);
        prepareSoon();
      }),
    );
  };
  const hostKnows = (key) => {
    const c = current;
    return c !== null && c.run === ref.run && c.names.has(String(key));
  };
  const hostNames = () => {
    const c = current;
    return c !== null && c.run === ref.run ? c.namesJson : '[]';
  };
  const api = BOOTSTRAP.runInContext(ctx)(
    hostCall,
    hostLog,
    hostDone,
    hostKnows,
    hostNames,
  );
  return { ctx, api, ref, CtxError };
}

function runScript(msg) {
  const p = prepared !== null ? prepared : prepare();
  prepared = null;
  p.ref.run = msg.run;
  if (typeof msg.names === 'string') {
    namesJson = msg.names;
    names = new Set(JSON.parse(msg.names));
  }
  current = {
    run: msg.run,
    settle: p.api.settle,
    names,
    namesJson,
    logged: 0,
    logLimit: msg.logLimit,
    resultLimit: msg.resultLimit,
    logCut: false,
    done: false,
  };
  const fail = (text) => {
    current = null;
    parentPort.postMessage({ t: 'done', run: msg.run, ok: false, kind: 'error', text, total: text.length });
    prepareSoon();
  };
  let fn;
  try {
    const options = { filename: 'exec-script.js', lineOffset: -1 };
    // An import() must reject with an error of the script's realm, which takes this
    // callback (and it makes compiling several times slower). import() can only come
    // from the literal keyword in the source: code generation from strings is off,
    // and a keyword cannot be spelled with escapes. So only sources that contain the
    // word pay for it.
    if (msg.code.includes('import')) {
      options.importModuleDynamically = () => {
        throw new p.CtxError('import() is not available in Exec scripts: only tools and console exist');
      };
    }
    const script = new vm.Script('(async function () {\n' + msg.code + '\n})', options);
    fn = script.runInContext(p.ctx, { displayErrors: false });
  } catch (e) {
    let text = 'the script could not be compiled';
    try {
      text = String(e && e.name) + ': ' + String(e && e.message);
    } catch {}
    fail(text);
    return;
  }
  if (typeof fn !== 'function') {
    fail('SyntaxError: the script is not a valid function body');
    return;
  }
  p.api.start(fn);
}

parentPort.on('message', (msg) => {
  if (msg.t === 'run') {
    runScript(msg);
  } else if (msg.t === 'settle') {
    const c = current;
    if (c === null || c.run !== msg.run) return;
    try {
      c.settle(msg.id, msg.ok, msg.payload);
    } catch {}
  }
});
parentPort.postMessage({ t: 'ready' });
prepareSoon();
`;
