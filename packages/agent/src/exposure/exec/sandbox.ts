/**
 * The Exec sandbox, host side: one warm worker thread, one script at a time,
 * a wall-clock budget enforced by terminating the worker.
 */
import { Worker } from 'node:worker_threads';
import type { ContentBlock, ImageBlock } from '../../model';
import { type CatalogTool, renderSignature } from '../catalog';
import { cutText, failureText, type NestedToolResult, successText, toScriptValue } from './result';
import { WORKER_SOURCE } from './worker-source';

/** What the sandbox needs from the agent, asked again on every run. */
export interface ExecHost {
  /** The live, permitted MCP pool; the callable set is computed from it when a script starts. */
  listTools(): CatalogTool[];
  /**
   * Calls one tool by its full name (`mcp__server__tool`) through the agent's funnel
   * (rules, approval, pool call, output limits). A rejection rejects the script's await only.
   */
  call(fullName: string, args: unknown, signal: AbortSignal): Promise<NestedToolResult>;
  /** Searches the whole live pool, best first. */
  search(query: string, limit: number): CatalogTool[];
}

export interface ExecSandboxOptions {
  /** Wall-clock budget of one script, including its nested calls. @default 60000 */
  timeoutMs?: number;
  /** Nested calls (tools and `$codemode.search`) per script; the call over it is rejected alone. @default 50 */
  maxCalls?: number;
  /** Characters of console output kept per script. @default 10000 */
  maxConsoleChars?: number;
  /** Characters of the returned value shown to the model; the rest is cut, with the total stated. @default 20000 */
  maxResultChars?: number;
  /** Images from nested calls attached to the result per script. @default 8 */
  maxImages?: number;
  /** Hits returned by `tools["$codemode"].search(query)` when no limit is given. @default 12 */
  searchLimit?: number;
  /** Largest limit `search(query, limit)` accepts. @default 50 */
  maxSearchLimit?: number;
  /** Heap limit of the worker, in MB. @default 256 */
  memoryLimitMb?: number;
  /** Milliseconds clock for `durationMs`. @default performance.now */
  now?: () => number;
}

export interface ExecRunOptions {
  /** Aborting it (or passing one already aborted) stops the script and fails the run. */
  signal?: AbortSignal;
}

export type ExecFailureCode =
  | 'EXEC_BAD_ARGUMENT'
  | 'EXEC_SCRIPT_ERROR'
  | 'EXEC_TIMEOUT'
  | 'EXEC_ABORTED'
  | 'EXEC_CRASHED'
  | 'EXEC_CLOSED';

/** The outcome of one script. `run()` never rejects. */
export interface ExecResult {
  /** The tool result for the model: text, plus the images nested calls returned. */
  content: string | ContentBlock[];
  isError: boolean;
  /** Present when the script failed. */
  failure?: { code: ExecFailureCode; message: string };
  /** Nested calls made (tool calls and searches, including rejected ones under the limit). */
  calls: number;
  /** Console output collected (possibly cut). */
  console: string;
  durationMs: number;
}

export interface ExecSandbox {
  run(code: unknown, host: ExecHost, options?: ExecRunOptions): Promise<ExecResult>;
  /** Terminates the worker and fails every pending run. Idempotent. */
  close(): Promise<void>;
}

interface Limits {
  timeoutMs: number;
  maxCalls: number;
  maxConsoleChars: number;
  maxResultChars: number;
  maxImages: number;
  searchLimit: number;
  maxSearchLimit: number;
  memoryLimitMb: number;
}

interface Active {
  id: number;
  host: ExecHost;
  names: Set<string>;
  worker: Worker;
  controller: AbortController;
  calls: number;
  /** Host calls not yet settled: aborted when the run ends. */
  inFlight: number;
  console: string[];
  consoleCut: boolean;
  images: ImageBlock[];
  omittedImages: number;
  started: number;
  finish(result: ExecResult): void;
  fail(code: ExecFailureCode, message: string): void;
}

type WorkerMessage =
  | { t: 'ready' }
  | { t: 'log'; run: number; text: string; cut: boolean }
  | { t: 'call'; run: number; kind: 'call' | 'search'; id: number; name: string; payload: string }
  | {
      t: 'done';
      run: number;
      ok: boolean;
      kind: 'none' | 'text' | 'value' | 'error';
      text: string;
      total: number;
    };

const dropProto = (key: string, value: unknown): unknown => (key === '__proto__' ? undefined : value);

/**
 * How long after a run ends the worker makes the next run's fresh context
 * (about a millisecond of CPU): late enough not to compete with the result on
 * its way to the host, early enough to be ready before the model's next turn.
 */
const PREPARE_DELAY_MS = 5;

/** Creates a sandbox. No thread starts until the first script runs. */
export function createExecSandbox(options: ExecSandboxOptions = {}): ExecSandbox {
  const limits: Limits = {
    timeoutMs: options.timeoutMs ?? 60_000,
    maxCalls: options.maxCalls ?? 50,
    maxConsoleChars: options.maxConsoleChars ?? 10_000,
    maxResultChars: options.maxResultChars ?? 20_000,
    maxImages: options.maxImages ?? 8,
    searchLimit: options.searchLimit ?? 12,
    maxSearchLimit: options.maxSearchLimit ?? 50,
    memoryLimitMb: options.memoryLimitMb ?? 256,
  };
  const now = options.now ?? (() => performance.now());

  let worker: Worker | undefined;
  /** The callable names the current worker last received (it keeps them between runs). */
  let sentNames: { worker: Worker; json: string } | undefined;
  let active: Active | undefined;
  let nextId = 0;
  let closed = false;
  let closing: Promise<void> | undefined;
  let queue: Promise<void> = Promise.resolve();
  const waiting = new Set<(r: ExecResult) => void>();
  const exits = new Set<Promise<unknown>>();

  /** A run that failed before its script started. */
  const failed = (code: ExecFailureCode, message: string, started: number): ExecResult => ({
    content: failureText(message, '', false, limits.maxConsoleChars),
    isError: true,
    failure: { code, message },
    calls: 0,
    console: '',
    durationMs: now() - started,
  });

  function retire(w: Worker): void {
    if (worker === w) worker = undefined;
    w.removeAllListeners('message');
    const exit = w.terminate().catch(() => undefined);
    exits.add(exit);
    void exit.then(() => exits.delete(exit));
  }

  function spawn(): Worker {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      // The flag lets import() reach our callback, which rejects with an error of the
      // script's own realm; without it Node rejects with an error of the worker realm.
      execArgv: ['--experimental-vm-modules', '--no-warnings'],
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryLimitMb },
      workerData: { prepareDelayMs: PREPARE_DELAY_MS },
    });
    w.stdout.resume();
    w.stderr.resume();
    w.unref();
    w.on('message', (msg: WorkerMessage) => onMessage(w, msg));
    w.on('error', (err: Error) => {
      if (active?.worker === w) active.fail('EXEC_CRASHED', `the sandbox worker crashed: ${err.message}`);
      retire(w);
    });
    w.on('exit', (code) => {
      if (active?.worker === w)
        active.fail('EXEC_CRASHED', `the sandbox worker exited unexpectedly (code ${code})`);
      if (worker === w) worker = undefined;
    });
    return w;
  }

  function onMessage(w: Worker, msg: WorkerMessage): void {
    const a = active;
    if (msg.t === 'ready' || a === undefined || a.worker !== w || msg.run !== a.id) return;
    if (msg.t === 'log') {
      if (!a.consoleCut) {
        a.console.push(msg.text);
        if (msg.cut) a.consoleCut = true;
      }
    } else if (msg.t === 'call') {
      void onCall(a, msg);
    } else if (msg.t === 'done') {
      const consoleText = a.console.join('\n');
      if (msg.ok) {
        const text = successText({
          value: msg.kind === 'none' ? undefined : msg.text,
          valueLength: msg.total,
          console: consoleText,
          consoleCut: a.consoleCut,
          maxResultChars: limits.maxResultChars,
          maxConsoleChars: limits.maxConsoleChars,
          omittedImages: a.omittedImages,
        });
        a.finish({
          content: a.images.length === 0 ? text : [{ type: 'text', text }, ...a.images],
          isError: false,
          calls: a.calls,
          console: consoleText,
          durationMs: now() - a.started,
        });
      } else {
        a.fail('EXEC_SCRIPT_ERROR', cutText(msg.text, limits.maxResultChars, 'error message', msg.total));
      }
    }
  }

  function reply(a: Active, id: number, ok: boolean, payload: string): void {
    if (active !== a) return;
    a.worker.postMessage({ t: 'settle', run: a.id, id, ok, payload });
  }

  async function onCall(a: Active, msg: Extract<WorkerMessage, { t: 'call' }>): Promise<void> {
    let answer: { ok: boolean; payload: string };
    try {
      answer = await answerCall(a, msg);
    } catch (err) {
      // A host that throws or hands back something malformed fails this call only.
      answer = {
        ok: false,
        payload: `${msg.name} failed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    reply(a, msg.id, answer.ok, answer.payload);
  }

  async function answerCall(
    a: Active,
    msg: Extract<WorkerMessage, { t: 'call' }>,
  ): Promise<{ ok: boolean; payload: string }> {
    if (a.calls >= limits.maxCalls) {
      return {
        ok: false,
        payload: `call limit reached: a script may make at most ${limits.maxCalls} tool calls`,
      };
    }
    a.calls += 1;
    if (msg.kind === 'search') {
      const pool = a.host.listTools();
      const asked = msg.payload === '' ? limits.searchLimit : Number(msg.payload);
      const limit = msg.name.trim() === '' ? pool.length : Math.min(Math.floor(asked), limits.maxSearchLimit);
      const hits = a.host.search(msg.name, limit).map((tool) => ({
        name: tool.fullName,
        description: tool.description ?? '',
        signature: renderSignature(tool),
      }));
      return { ok: true, payload: JSON.stringify(hits) };
    }
    if (!a.names.has(msg.name)) {
      return {
        ok: false,
        payload: `unknown tool ${JSON.stringify(msg.name)}: only MCP tools are reachable; find them with tools["$codemode"].search(...)`,
      };
    }
    let result: NestedToolResult;
    a.inFlight += 1;
    try {
      const args: unknown = JSON.parse(msg.payload, dropProto);
      result = await a.host.call(msg.name, args, a.controller.signal);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, payload: message === '' ? `${msg.name} failed` : message };
    } finally {
      a.inFlight -= 1;
    }
    if (active !== a) return { ok: false, payload: 'the script has ended' };
    const value = toScriptValue(result, limits.maxImages - a.images.length);
    a.images.push(...value.images);
    if (value.ok && typeof result.content !== 'string') {
      const images = result.content.filter((b) => b.type === 'image').length;
      a.omittedImages += images - value.images.length;
    }
    return value.ok ? { ok: true, payload: value.payload } : { ok: false, payload: value.message };
  }

  function execute(code: string, host: ExecHost, signal: AbortSignal | undefined, started: number) {
    return new Promise<ExecResult>((resolve) => {
      let tools: CatalogTool[];
      try {
        tools = host.listTools();
      } catch (err) {
        resolve(
          failed('EXEC_SCRIPT_ERROR', `the tool list is unavailable: ${(err as Error)?.message}`, started),
        );
        return;
      }
      worker ??= spawn();
      const w = worker;
      const id = ++nextId;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let heapWatch: ReturnType<typeof setInterval> | undefined;
      const onAbort = () => a.fail('EXEC_ABORTED', 'the script was aborted');
      const a: Active = {
        id,
        host,
        names: new Set(tools.map((t) => t.fullName)),
        worker: w,
        controller: new AbortController(),
        calls: 0,
        inFlight: 0,
        console: [],
        consoleCut: false,
        images: [],
        omittedImages: 0,
        started,
        finish(result) {
          if (active !== a) return;
          active = undefined;
          resolve(result);
          clearTimeout(timer);
          clearInterval(heapWatch);
          signal?.removeEventListener('abort', onAbort);
          // Stops host calls still running (aborting costs a stack trace: only when there are some).
          if (a.inFlight > 0) a.controller.abort();
        },
        fail(code, message) {
          if (active !== a) return;
          // The worker may be stuck in a loop or hold the script's leftovers: end it,
          // and start its replacement now so the next script finds a warm one.
          if (code !== 'EXEC_SCRIPT_ERROR') {
            retire(w);
            if (!closed && worker === undefined) worker = spawn();
          }
          const consoleText = a.console.join('\n');
          a.finish({
            content: failureText(message, consoleText, a.consoleCut, limits.maxConsoleChars),
            isError: true,
            failure: { code, message },
            calls: a.calls,
            console: consoleText,
            durationMs: now() - a.started,
          });
        },
      };
      active = a;
      // The worker keeps the callable names between runs: send them only when they changed.
      const namesJson = JSON.stringify([...a.names]);
      const names = sentNames?.worker === w && sentNames.json === namesJson ? undefined : namesJson;
      sentNames = { worker: w, json: namesJson };
      // Posted first, so the worker wakes up while the host arms the budget.
      w.postMessage({
        t: 'run',
        run: id,
        code,
        names,
        logLimit: limits.maxConsoleChars,
        // The worker sends one character more than is shown, so the cut is always visible.
        resultLimit: limits.maxResultChars + 1,
      });
      timer = setTimeout(
        () =>
          a.fail('EXEC_TIMEOUT', `the script did not finish within the time limit (${limits.timeoutMs} ms)`),
        limits.timeoutMs,
      );
      heapWatch = watchHeap(w, limits.memoryLimitMb, (usedMb) =>
        a.fail(
          'EXEC_CRASHED',
          `the script used more than ${usedMb} MB of memory (limit ${limits.memoryLimitMb} MB) and was stopped`,
        ),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  function run(code: unknown, host: ExecHost, runOptions: ExecRunOptions = {}): Promise<ExecResult> {
    const started = now();
    const signal = runOptions.signal;
    if (typeof code !== 'string' || code.trim() === '') {
      return Promise.resolve(
        failed(
          'EXEC_BAD_ARGUMENT',
          '`code` must be a non-empty string of JavaScript (an async function body)',
          started,
        ),
      );
    }
    if (closed) return Promise.resolve(failed('EXEC_CLOSED', 'the sandbox is closed', started));
    if (signal?.aborted)
      return Promise.resolve(failed('EXEC_ABORTED', 'the script was aborted before it started', started));
    return new Promise<ExecResult>((resolve) => {
      let settled = false;
      const settle = (r: ExecResult) => {
        if (settled) return;
        settled = true;
        waiting.delete(settle);
        signal?.removeEventListener('abort', onQueuedAbort);
        resolve(r);
      };
      const onQueuedAbort = () =>
        settle(failed('EXEC_ABORTED', 'the script was aborted before it started', started));
      signal?.addEventListener('abort', onQueuedAbort, { once: true });
      waiting.add(settle);
      queue = queue.then(async () => {
        if (settled) return;
        if (closed) {
          settle(failed('EXEC_CLOSED', 'the sandbox is closed', started));
          return;
        }
        signal?.removeEventListener('abort', onQueuedAbort);
        waiting.delete(settle);
        settle(await execute(code, host, signal, started));
      });
    });
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      closed = true;
      for (const settle of [...waiting]) settle(failed('EXEC_CLOSED', 'the sandbox was closed', now()));
      active?.fail('EXEC_CLOSED', 'the sandbox was closed while the script ran');
      if (worker !== undefined) retire(worker);
      await Promise.all([...exits]);
    })();
    return closing;
  }

  return { run, close };
}

/**
 * On Node versions with `worker.getHeapStatistics()` (22.16+, 24), a script
 * that allocates fast (an endless promise chain) can hit the worker's heap
 * limit in under a second, and V8 then aborts the whole process instead of
 * just the worker. So, while a script runs, the host polls the worker's heap
 * and stops it at 60% of its limit. Node 20 has no such call, and there the
 * limit ends only the worker (ERR_WORKER_OUT_OF_MEMORY).
 */
function watchHeap(
  worker: Worker,
  limitMb: number,
  onOver: (usedMb: number) => void,
): ReturnType<typeof setInterval> | undefined {
  const stats = (worker as unknown as { getHeapStatistics?: () => Promise<{ used_heap_size: number }> })
    .getHeapStatistics;
  if (typeof stats !== 'function') return undefined;
  const threshold = limitMb * 0.6 * 1024 * 1024;
  let inFlight = false;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = true;
    stats
      .call(worker)
      .then((s) => {
        if (s.used_heap_size > threshold) onOver(Math.round(s.used_heap_size / 1048576));
      })
      .catch(() => undefined)
      .finally(() => {
        inFlight = false;
      });
  }, 25);
  timer.unref?.();
  return timer;
}
