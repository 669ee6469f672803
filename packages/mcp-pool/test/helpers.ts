import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedServer, ServerConfig } from '@wave/mcp-config';
import { afterEach, expect, onTestFinished, vi } from 'vitest';
import type { Clock } from '../src/clock';
import type { McpPoolOptions } from '../src/options';
import { McpPool } from '../src/pool';
import type {
  TerminateResult,
  TransportContext,
  TransportFactory,
  TransportHandle,
  TransportLoss,
} from '../src/transport';

/** A hand-driven clock: timers run only when the test advances time. */
export class FakeClock implements Clock {
  private t = 1_000_000;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.timers.set(this.seq, { at: this.t + Math.max(0, ms), fn });
    return this.seq;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers armed and not yet fired or cleared. */
  pending(): number {
    return this.timers.size;
  }

  /** Delays of the pending timers, relative to now. */
  delays(): number[] {
    return [...this.timers.values()].map((x) => x.at - this.t).sort((a, b) => a - b);
  }

  /** Move time forward by `ms`, firing due timers in order, letting I/O callbacks run between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}

/** Let pending promise callbacks and immediate callbacks run. */
/**
 * A call with neither a signal nor `onProgress` is timed by the SDK's own
 * request timer (a global `setTimeout`), not by the pool's clock: tests drive
 * it with vitest's fake timers. Only `setTimeout`/`clearTimeout` are faked, so
 * {@link flush} (setImmediate) keeps working; real timers come back when the
 * test ends. Call it before the call starts.
 */
export function sdkTimers(): { advance(ms: number): Promise<void>; pending(): number } {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
  return {
    advance: async (ms) => {
      await vi.advanceTimersByTimeAsync(ms);
    },
    pending: () => vi.getTimerCount(),
  };
}

export async function flush(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

import { deferred } from '@wave/testkit';

export { type Deferred, deferred } from '@wave/testkit';

/** A server definition as `@wave/mcp-config` would produce it. */
export function server(
  name: string,
  config: Partial<ServerConfig> = {},
  extra: Partial<ResolvedServer> = {},
): ResolvedServer {
  const cfg: ServerConfig = { command: 'fake-server', args: [name], ...config };
  return {
    name,
    source: 'project',
    transport: cfg.url ? 'http' : 'stdio',
    config: cfg,
    fingerprint: `fp-${name}-${JSON.stringify(cfg.args ?? [])}-${cfg.url ?? ''}`,
    ...extra,
  };
}

/** How a fake server behaves. */
export interface FakeBehavior {
  /** Tool names (default `['echo', 'wait', 'error']`), or a count (`tool_0`...). */
  tools?: string[] | number;
  instructions?: string;
  /** The factory waits for this before returning the handle. */
  gate?: Promise<void>;
  /** The server answers nothing until this resolves (never, if it never does). */
  holdInit?: Promise<void>;
  /** The factory throws this. */
  fail?: Error;
  /** The transport kind to report. @default 'stdio' */
  kind?: 'stdio' | 'http' | 'sse';
  /**
   * While answering the first `tools/list` page, switch to these tools and
   * send `notifications/tools/list_changed` (it reaches the client before
   * that answer: the tool list changed while the dial was still listing).
   */
  changeToolsDuringList?: string[];
}

/** Server side of a fake connection: messages from the client land here. */
class ServerSide implements Transport {
  onclose?: () => void;
  onerror?: (e: Error) => void;
  onmessage?: (m: JSONRPCMessage) => void;
  constructor(private readonly link: FakeHandle) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.link.toClient(message);
  }
  async close(): Promise<void> {
    this.link.serverClosed();
  }
}

/** Client side handed to the pool's SDK Client. */
class ClientSide implements Transport {
  onclose?: () => void;
  onerror?: (e: Error) => void;
  onmessage?: (m: JSONRPCMessage) => void;
  constructor(private readonly link: FakeHandle) {}
  async start(): Promise<void> {
    await this.link.startServer();
  }
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.link.terminated || this.link.gone) throw new Error('Not connected');
    this.link.toServer(message);
  }
  async close(): Promise<void> {
    await this.link.terminate();
  }
}

/** A fake connection with an in-process low-level MCP server. */
export class FakeHandle implements TransportHandle {
  readonly transport: ClientSide;
  readonly kind: string;
  terminated = false;
  gone = false;
  terminateCalls = 0;
  /** Requests the client cancelled (notifications/cancelled seen by the server). */
  cancelled = 0;
  /** The reasons the client gave in those notifications/cancelled. */
  readonly cancelReasons: unknown[] = [];
  /** Resolves calls of the `wait` tool. */
  readonly waitGate = deferred();
  private lost?: (loss: TransportLoss) => void;
  private readonly serverSide: ServerSide;
  private readonly server: Server;
  private toolNames: string[];
  private closeFired = false;
  private started = false;
  private changedDuringList = false;

  constructor(
    readonly name: string,
    private readonly behavior: FakeBehavior,
    readonly ctx: TransportContext,
    /** Pretend pid of this server process. */
    readonly pidValue: number,
  ) {
    this.kind = behavior.kind ?? 'stdio';
    this.transport = new ClientSide(this);
    this.serverSide = new ServerSide(this);
    const t = behavior.tools ?? ['echo', 'wait', 'error'];
    this.toolNames = typeof t === 'number' ? Array.from({ length: t }, (_, i) => `tool_${i}`) : [...t];
    this.server = new Server(
      { name: `fake-${name}`, version: '1.0.0' },
      {
        capabilities: { tools: { listChanged: true } },
        ...(behavior.instructions !== undefined ? { instructions: behavior.instructions } : {}),
      },
    );
    this.server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      // Two pages, to exercise pagination.
      const all: Tool[] = this.toolNames.map((n) => ({ name: n, inputSchema: { type: 'object' } }));
      const half = Math.ceil(all.length / 2);
      const change = this.behavior.changeToolsDuringList;
      if (change && !this.changedDuringList) {
        this.changedDuringList = true;
        queueMicrotask(() => void this.setTools(change));
      }
      if (req.params?.cursor === 'page2') return { tools: all.slice(half) };
      return all.length > 1 ? { tools: all.slice(0, half), nextCursor: 'page2' } : { tools: all };
    });
    this.server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      switch (req.params.name) {
        case 'echo':
          return { content: [{ type: 'text', text: String(args.text ?? '') }] };
        case 'wait': {
          extra.signal.addEventListener('abort', () => {
            this.cancelled += 1;
            this.cancelReasons.push(extra.signal.reason);
          });
          const token = req.params._meta?.progressToken;
          if (token !== undefined) {
            this.progressToken = token;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: 1, total: 2, message: 'half way' },
            });
          }
          await this.waitGate.promise;
          return { content: [{ type: 'text', text: 'waited' }] };
        }
        case 'error':
          throw new McpError(ErrorCode.InternalError, 'the tool broke');
        case 'timeout-error':
          // A server's own "request timed out" (it gave up on something upstream).
          throw new McpError(ErrorCode.RequestTimeout, 'upstream timed out', { timeout: 5 });
        default:
          if (this.toolNames.includes(req.params.name))
            return { content: [{ type: 'text', text: req.params.name }] };
          throw new McpError(ErrorCode.InvalidParams, `Tool ${req.params.name} not found`);
      }
    });
  }

  pid(): number | undefined {
    return this.started ? this.pidValue : undefined;
  }

  onLost(cb: (loss: TransportLoss) => void): void {
    this.lost = cb;
  }

  async startServer(): Promise<void> {
    if (this.terminated) throw new Error('terminated before start');
    this.started = true;
    this.ctx.onPid(this.pidValue);
    await this.server.connect(this.serverSide);
  }

  private pendingToClient: JSONRPCMessage[] = [];

  toServer(message: JSONRPCMessage): void {
    queueMicrotask(() => {
      if (!this.terminated && !this.gone) this.serverSide.onmessage?.(message);
    });
  }

  toClient(message: JSONRPCMessage): void {
    if (this.behavior.holdInit) {
      this.pendingToClient.push(message);
      void this.behavior.holdInit.then(() => {
        const msgs = this.pendingToClient.splice(0);
        for (const m of msgs) if (!this.terminated && !this.gone) this.transport.onmessage?.(m);
      });
      return;
    }
    queueMicrotask(() => {
      if (!this.terminated && !this.gone) this.transport.onmessage?.(message);
    });
  }

  serverClosed(): void {}

  /** Progress token of the last `wait` call that asked for progress. */
  private progressToken: string | number | undefined;

  /** Send one more progress notification for the last `wait` call that asked for progress. */
  async progress(value: number): Promise<void> {
    if (this.progressToken === undefined) throw new Error('no wait call asked for progress');
    await this.server.notification({
      method: 'notifications/progress',
      params: { progressToken: this.progressToken, progress: value },
    });
  }

  /** Replace the tool list and tell the client (notifications/tools/list_changed). */
  async setTools(names: string[]): Promise<void> {
    this.toolNames = names;
    await this.server.sendToolListChanged();
  }

  /** Simulate an unexpected end (process exit or network drop). */
  lose(loss: Partial<TransportLoss> = {}): void {
    this.gone = true;
    const full: TransportLoss = {
      kind: this.kind === 'stdio' ? 'exit' : 'drop',
      recoverable: this.kind !== 'stdio',
      message: this.kind === 'stdio' ? 'process exited with code 3' : 'event stream failed',
      ...loss,
    };
    this.fireClose();
    this.lost?.(full);
  }

  /** Report a loss without closing the transport (e.g. only the http GET event stream failed). */
  reportLoss(loss: Partial<TransportLoss> = {}): void {
    this.lost?.({
      kind: 'drop',
      recoverable: this.kind !== 'stdio',
      message: 'event stream failed',
      ...loss,
    });
  }

  /**
   * The transport closes (the SDK fails pending requests) but the loss is not
   * reported yet, like a stdio server whose exit waits for its last stderr lines.
   */
  closeWithoutLoss(): void {
    this.gone = true;
    this.fireClose();
  }

  private fireClose(): void {
    if (this.closeFired) return;
    this.closeFired = true;
    this.transport.onclose?.();
  }

  terminate(): Promise<TerminateResult> {
    this.terminateCalls += 1;
    this.terminated = true;
    this.fireClose();
    return Promise.resolve({ pids: [this.pidValue], survivors: [], forced: false, ms: 0 });
  }

  diagnostics() {
    return this.gone && this.kind === 'stdio'
      ? { exit: { code: 3, signal: null }, stderrTail: 'fatal: boom' }
      : {};
  }
}

/** A transport factory of fake servers, recording every dial. */
export function fakeFactory(behaviors: Record<string, FakeBehavior> = {}) {
  const dialed: string[] = [];
  const handles: FakeHandle[] = [];
  const factory: TransportFactory = async (srv, ctx) => {
    dialed.push(srv.name);
    const b = behaviors[srv.name] ?? {};
    if (b.gate) await b.gate;
    if (b.fail) throw b.fail;
    const h = new FakeHandle(srv.name, b, ctx, 50_000 + handles.length);
    handles.push(h);
    return h;
  };
  return {
    factory,
    dialed,
    handles,
    behaviors,
    /** Handles not terminated (and not lost). */
    open: () => handles.filter((h) => !h.terminated && !h.gone),
    last: (name: string) => [...handles].reverse().find((h) => h.name === name),
  };
}

/** The real clock, counting timers that are armed and not yet fired or cleared. */
export function countingClock(): Clock & { pending(): number } {
  const live = new Set<unknown>();
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const h: ReturnType<typeof setTimeout> = setTimeout(() => {
        live.delete(h);
        fn();
      }, ms);
      h.unref();
      live.add(h);
      return h;
    },
    clearTimeout(h) {
      live.delete(h);
      clearTimeout(h as ReturnType<typeof setTimeout>);
    },
    pending: () => live.size,
  };
}

/**
 * A pool over fake transports and a hand-driven clock, destroyed after the
 * test with a check that nothing is left open and no timer is pending.
 * Call once at module level; returns the per-test factory.
 */
export function fakePoolHarness(base: Partial<McpPoolOptions> = {}) {
  const made: { pool: McpPool; clock: FakeClock; fake: ReturnType<typeof fakeFactory> }[] = [];
  afterEach(async () => {
    for (const { pool, clock, fake } of made.splice(0)) {
      await pool.destroy();
      // Every test ends with nothing open and no timer pending.
      expect(fake.open()).toEqual([]);
      expect(clock.pending()).toBe(0);
    }
  });
  return (behaviors = {}, opts: Partial<McpPoolOptions> = {}) => {
    const clock = new FakeClock();
    const fake = fakeFactory(behaviors);
    const pool = McpPool.create({
      transportFactory: fake.factory,
      clock,
      random: () => 0.5,
      ...base,
      ...opts,
    });
    made.push({ pool, clock, fake });
    return { pool, clock, fake };
  };
}
