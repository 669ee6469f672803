import type {
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ConfigSource, Lifecycle, ResolvedServer } from '@wave/mcp-config';
import type { KillResult } from '@wave/proc-reaper';
import type { AuthorizeOptions } from './auth/manager';
import { needsAuthError } from './auth/status';
import type { CallOptions } from './calls';
import type { ListChangedEvent, ServerLogEntry } from './client-features';
import { PoolCore, type ServerEvent, type Slot } from './core';
import { McpPoolError } from './errors';
import type { ServerErrorInfo, ServerStatus } from './machine';
import { lifecycleOf, type McpPoolOptions } from './options';
import type { ServerRequestOptions } from './resources';
import * as requests from './resources';

/** What a pool (or lease) says about one configured server. A fresh object per call. */
export interface ServerRecord {
  name: string;
  source: ConfigSource;
  /** `stdio` | `http` | `sse`, or the unknown type as configured. */
  transport: string;
  status: ServerStatus;
  /** Why it is in `error` (or, while `reconnecting`, why it dropped). */
  error?: ServerErrorInfo;
  /** Its tools while connected (kept while reconnecting); at most `limits.maxToolsPerServer`. */
  tools: readonly Tool[];
  /** How many tools the server listed beyond the limit (not exposed). */
  toolsDropped: number;
  /** The server's `instructions` from `initialize`, verbatim. */
  instructions?: string;
  /** Last successful connection (epoch ms). */
  lastConnectedAt?: number;
  /** Pid of the server process (stdio, while connecting or connected). */
  pid?: number;
  /** Current connection attempt; grows with every dial. */
  generation: number;
  lifecycle: Lifecycle;
  fingerprint: string;
  /** Disconnected by hand: not dialed again until `connect()`. */
  manuallyDisconnected: boolean;
  /** While `reconnecting`: attempts made so far. */
  reconnectAttempt?: number;
}

/** What `onChange` listeners get. Drop snapshots older than the last one you saw. */
export interface PoolSnapshot {
  /** Grows by one with every snapshot of this pool (or lease). */
  version: number;
  servers: ServerRecord[];
}

/** Options of {@link McpPoolApi.ensureConnected}. */
export interface EnsureConnectedOptions {
  /** Stop waiting (rejects with the signal's reason); the dials go on in the background. */
  signal?: AbortSignal;
}

/** Options of {@link McpPoolApi.callTool}. */
export type CallToolOptions = CallOptions;

/** The API of a pool and of each lease of a shared pool. */
export interface McpPoolApi {
  /** Every configured server, in configuration order. */
  list(): ServerRecord[];
  /** One server, or undefined. */
  get(name: string): ServerRecord | undefined;
  /**
   * Dial, in parallel, every server never dialed here, not disconnected by
   * hand, and not failed; wait for those and for dials already in flight.
   * When nothing is pending it returns an already-resolved promise and
   * touches nothing. Never rejects because a server failed (see its record).
   */
  ensureConnected(opts?: EnsureConnectedOptions): Promise<void>;
  /**
   * Synchronous: would `ensureConnected()` dial or wait on anything right now?
   * A host checks this to skip MCP work entirely on a turn with nothing pending.
   */
  hasPendingDials(): boolean;
  /** Start dialing `eager` servers in the background. */
  warm(): void;
  /** Dial now (retry a failed server, undo a manual disconnect). Resolves with the record, `error` included. */
  connect(name: string): Promise<ServerRecord>;
  /** Disconnect by hand: kill the process tree, stick until `connect()`. Always settles with the record. */
  disconnect(name: string): Promise<ServerRecord>;
  /** Call a tool of a connected server. Rejects with {@link McpPoolError}. */
  callTool(
    server: string,
    tool: string,
    args?: Record<string, unknown>,
    opts?: CallToolOptions,
  ): Promise<CallToolResult>;
  /** Hot reload: changed (by fingerprint) -> closed and reset; removed -> closed and dropped; added -> registered. */
  update(servers: readonly ResolvedServer[]): Promise<void>;
  /** Close everything this object owns. Idempotent. */
  destroy(): Promise<void>;
  /** Listen to changes; returns the unsubscribe function. */
  onChange(listener: (snapshot: PoolSnapshot) => void): () => void;
  /** Version of the last snapshot. */
  readonly version: number;
  /** Every resource of a connected server (all pages). Never dials. */
  listResources(server: string, opts?: ServerRequestOptions): Promise<Resource[]>;
  /** Every resource template of a connected server (all pages). Never dials. */
  listResourceTemplates(server: string, opts?: ServerRequestOptions): Promise<ResourceTemplate[]>;
  /** Read one resource of a connected server. Never dials. */
  readResource(server: string, uri: string, opts?: ServerRequestOptions): Promise<ReadResourceResult>;
  /** Every prompt of a connected server (all pages). Never dials. */
  listPrompts(server: string, opts?: ServerRequestOptions): Promise<Prompt[]>;
  /** One prompt of a connected server, filled with `args`. Never dials. */
  getPrompt(
    server: string,
    name: string,
    args?: Record<string, string>,
    opts?: ServerRequestOptions,
  ): Promise<GetPromptResult>;
  /** The last log messages (`notifications/message`) of a server, oldest first (`limits.logsPerServer`). */
  logs(server: string): ServerLogEntry[];
  /** Listen to servers' log messages; returns the unsubscribe function. */
  onLog(listener: (entry: ServerLogEntry) => void): () => void;
  /** Listen to a server's tools/prompts/resources list changing; returns the unsubscribe function. */
  onListChanged(listener: (event: ListChangedEvent) => void): () => void;
  /** Tell this pool's (or lease's) connected servers that the roots changed (`notifications/roots/list_changed`). Never rejects. */
  sendRootsListChanged(): Promise<void>;
  /**
   * Sign in to an http/sse server with OAuth (browser through `openUrl`, or a
   * pasted redirect URL), store its tokens under `<home>/oauth/`, then dial it
   * if it was `needs-auth`. Rejects with {@link McpPoolError} `AUTH_REQUIRED`
   * (its `cause` is an `AuthorizeError` with a `reason`) when the sign-in fails.
   */
  authorize(name: string, opts: AuthorizeOptions): Promise<ServerRecord>;
  /** Delete the server's stored tokens; a live connection to it closes and the server is `needs-auth`. */
  logout(name: string): Promise<ServerRecord>;
}

interface Entry {
  server: ResolvedServer;
  slot: Slot;
  /** Token of this (view, name) pair in the slot's member and user sets. */
  token: string;
  manual: boolean;
}

/** How many times connect() follows a configuration change that happened while it dialed. */
const MAX_CONNECT_ROUNDS = 3;

function unknownServer(name: string, known: Iterable<string>): McpPoolError {
  const names = [...known];
  return new McpPoolError(
    'UNKNOWN_SERVER',
    `No MCP server named "${name}" is configured${names.length ? ` (configured: ${names.join(', ')})` : ''}.`,
    { server: name },
  );
}

/**
 * A per-agent view of a shared {@link McpPool}: the same API, its own server
 * list, its own manual-disconnect flags. `destroy()` releases the lease: it
 * never kills a connection another lease uses; a connection nobody uses any
 * more closes once idle, and a dial nobody waits for any more stops at once
 * (its process tree killed).
 */
export interface McpPoolLease extends McpPoolApi, AsyncDisposable {
  /** The agent this lease belongs to (for diagnostics). */
  readonly agentId: string;
  /** True once released (or once the shared pool behind it was destroyed). */
  readonly destroyed: boolean;
  /** Release the lease. Idempotent. */
  destroy(): Promise<void>;
  /** Same as `destroy()`, for `await using lease = pool.lease(...)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Shared implementation of the pool's own view and of leases (internal: never in the public types). */
class PoolView implements McpPoolLease {
  protected readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(snapshot: PoolSnapshot) => void>();
  private versionCounter = 0;
  private released = false;
  private releasing: Promise<void> | undefined;
  private readonly unsubscribe: () => void;
  private readonly resolved = Promise.resolve();
  private readonly logListeners = new Set<(entry: ServerLogEntry) => void>();
  private readonly listListeners = new Set<(event: ListChangedEvent) => void>();
  private readonly unsubscribeServerEvents: () => void;

  constructor(
    private readonly core: PoolCore,
    private readonly viewId: string,
    servers: readonly ResolvedServer[],
    /** The agent this view belongs to (for diagnostics; `''` for a pool's own view). */
    readonly agentId: string,
  ) {
    // Duplicate names: the later definition wins (as in config merging), at the first one's position.
    const byName = new Map<string, ResolvedServer>();
    for (const server of servers) byName.set(server.name, server);
    for (const server of byName.values()) {
      const token = `${viewId}\u0000${server.name}`;
      this.entries.set(server.name, { server, slot: core.register(token, server), token, manual: false });
    }
    this.unsubscribe = core.subscribe(() => this.emit());
    this.unsubscribeServerEvents = core.onServerEvent((slot, event) => this.serverEvent(slot, event));
  }

  get version(): number {
    return this.versionCounter;
  }

  /** True once destroyed / released (or the shared pool behind a lease was destroyed). */
  get destroyed(): boolean {
    return this.released || this.core.destroyed;
  }

  private entry(name: string): Entry {
    const e = this.entries.get(name);
    if (!e) throw unknownServer(name, this.entries.keys());
    return e;
  }

  private destroyedError(what: string): McpPoolError {
    return new McpPoolError('POOL_DESTROYED', `The MCP pool was destroyed; cannot ${what}.`);
  }

  list(): ServerRecord[] {
    const out: ServerRecord[] = [];
    for (const e of this.entries.values()) out.push(this.record(e));
    return out;
  }

  get(name: string): ServerRecord | undefined {
    const e = this.entries.get(name);
    return e ? this.record(e) : undefined;
  }

  private record(e: Entry): ServerRecord {
    const s = e.slot.state;
    const server = e.server;
    const r: ServerRecord = {
      name: server.name,
      source: server.source,
      transport: server.transport,
      status: 'disconnected',
      tools: [],
      toolsDropped: 0,
      generation: s.generation,
      lifecycle: lifecycleOf(server),
      fingerprint: server.fingerprint,
      manuallyDisconnected: e.manual,
    };
    if (s.lastConnectedAt !== undefined) r.lastConnectedAt = s.lastConnectedAt;
    if (e.manual || this.released) return r;
    r.status = s.status;
    r.tools = s.tools;
    r.toolsDropped = s.toolsDropped;
    if (s.error) r.error = s.error;
    if (s.instructions !== undefined) r.instructions = s.instructions;
    if (s.pid !== undefined) r.pid = s.pid;
    if (s.status === 'reconnecting') r.reconnectAttempt = s.attempt;
    return r;
  }

  hasPendingDials(): boolean {
    if (this.destroyed) return false;
    for (const e of this.entries.values()) {
      if (e.manual) continue;
      const st = e.slot.state;
      if (st.status === 'connecting') return true;
      if (st.status === 'disconnected' && !st.dialed) return true;
    }
    return false;
  }

  ensureConnected(opts: EnsureConnectedOptions = {}): Promise<void> {
    const signal = opts.signal;
    if (this.destroyed) return this.resolved;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const waits: Promise<void>[] = [];
    for (const e of this.entries.values()) {
      if (e.manual) continue;
      const slot = e.slot;
      const st = slot.state;
      if (st.status === 'disconnected' && !st.dialed) {
        this.core.use(e.token, slot);
        const p = this.core.dial(slot, 'auto');
        if (p) waits.push(p);
      } else if (st.status === 'connecting') {
        this.core.use(e.token, slot);
        const p = this.core.inFlightDial(slot);
        if (p) waits.push(p);
      } else if (st.status === 'connected' && !slot.users.has(e.token)) {
        this.core.use(e.token, slot);
      }
    }
    if (waits.length === 0) return this.resolved;
    const all = Promise.all(waits).then(() => undefined);
    if (!signal) return all;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void all.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  warm(): void {
    if (this.destroyed) return;
    for (const e of this.entries.values()) {
      if (e.manual || lifecycleOf(e.server) !== 'eager') continue;
      const st = e.slot.state;
      if (st.status === 'disconnected' && !st.dialed) {
        this.core.use(e.token, e.slot);
        void this.core.dial(e.slot, 'auto');
      }
    }
  }

  async connect(name: string): Promise<ServerRecord> {
    const e = this.entry(name);
    if (this.destroyed) throw this.destroyedError(`connect "${name}"`);
    if (e.manual) {
      e.manual = false;
      this.core.notify();
    }
    let current: Entry = e;
    // update() may change the server's configuration while it dials: then dial
    // what is configured now (bounded, in case the configuration keeps changing).
    for (let round = 0; round < MAX_CONNECT_ROUNDS; round++) {
      const slot = current.slot;
      this.core.use(current.token, slot);
      const p = this.core.dial(slot, 'explicit');
      if (p) await p;
      const now = this.entries.get(name);
      if (!now || now.manual || this.destroyed || now.slot === slot) return this.record(now ?? current);
      current = now;
    }
    return this.record(current);
  }

  async disconnect(name: string): Promise<ServerRecord> {
    const e = this.entry(name);
    if (!e.manual) {
      e.manual = true;
      this.core.notify();
    }
    try {
      await this.core.unuse(e.token, e.slot);
    } catch {
      // Closing is bounded and never rejects; whatever happened, answer with the record.
    }
    return this.record(e);
  }

  callTool(
    server: string,
    tool: string,
    args?: Record<string, unknown>,
    opts?: CallToolOptions,
  ): Promise<CallToolResult> {
    const e = this.entries.get(server);
    if (!e) return Promise.reject(unknownServer(server, this.entries.keys()));
    if (this.destroyed) return Promise.reject(this.destroyedError(`call "${tool}" on "${server}"`));
    if (e.manual) {
      return Promise.reject(
        new McpPoolError(
          'SERVER_NOT_CONNECTED',
          `Cannot call "${tool}": MCP server "${server}" was disconnected by hand. Use connect("${server}") first.`,
          { server },
        ),
      );
    }
    if (!e.slot.users.has(e.token)) this.core.use(e.token, e.slot);
    // Closed to make room: dialed on demand (the hot path never gets here).
    if (e.slot.state.evicted === true && e.slot.state.status === 'disconnected') {
      return this.dialThenCall(e, tool, args, opts);
    }
    return this.core.callTool(e.slot, tool, args, opts);
  }

  private async dialThenCall(
    e: Entry,
    tool: string,
    args: Record<string, unknown> | undefined,
    opts: CallToolOptions | undefined,
  ): Promise<CallToolResult> {
    const p = this.core.dial(e.slot, 'explicit');
    if (p) await p;
    return this.core.callTool(e.slot, tool, args, opts);
  }

  /** The connected entry of `server` for a request that never dials. */
  private requestEntry(server: string, what: string): Entry {
    const e = this.entries.get(server);
    if (!e) throw unknownServer(server, this.entries.keys());
    if (this.destroyed) throw this.destroyedError(`${what} on "${server}"`);
    if (e.manual) {
      throw new McpPoolError(
        'SERVER_NOT_CONNECTED',
        `Cannot ${what}: MCP server "${server}" was disconnected by hand. Use connect("${server}") first.`,
        { server },
      );
    }
    if (!e.slot.users.has(e.token)) this.core.use(e.token, e.slot);
    return e;
  }

  private request<T>(server: string, what: string, run: (e: Entry) => Promise<T>): Promise<T> {
    try {
      return run(this.requestEntry(server, what));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  listResources(server: string, opts: ServerRequestOptions = {}): Promise<Resource[]> {
    return this.request(server, 'list resources', (e) => requests.listResources(this.core, e.slot, opts));
  }

  listResourceTemplates(server: string, opts: ServerRequestOptions = {}): Promise<ResourceTemplate[]> {
    return this.request(server, 'list resource templates', (e) =>
      requests.listResourceTemplates(this.core, e.slot, opts),
    );
  }

  readResource(server: string, uri: string, opts: ServerRequestOptions = {}): Promise<ReadResourceResult> {
    return this.request(server, `read "${uri}"`, (e) => requests.readResource(this.core, e.slot, uri, opts));
  }

  listPrompts(server: string, opts: ServerRequestOptions = {}): Promise<Prompt[]> {
    return this.request(server, 'list prompts', (e) => requests.listPrompts(this.core, e.slot, opts));
  }

  getPrompt(
    server: string,
    name: string,
    args?: Record<string, string>,
    opts: ServerRequestOptions = {},
  ): Promise<GetPromptResult> {
    return this.request(server, `get prompt "${name}"`, (e) =>
      requests.getPrompt(this.core, e.slot, name, args, opts),
    );
  }

  logs(server: string): ServerLogEntry[] {
    const e = this.entry(server);
    return this.core.logs.get(e.slot.key).map((entry) => ({ ...entry, server }));
  }

  onLog(listener: (entry: ServerLogEntry) => void): () => void {
    this.logListeners.add(listener);
    return () => {
      this.logListeners.delete(listener);
    };
  }

  onListChanged(listener: (event: ListChangedEvent) => void): () => void {
    this.listListeners.add(listener);
    return () => {
      this.listListeners.delete(listener);
    };
  }

  sendRootsListChanged(): Promise<void> {
    if (this.destroyed) return this.resolved;
    const slots: Slot[] = [];
    for (const e of this.entries.values()) if (!e.manual) slots.push(e.slot);
    return this.core.sendRootsListChanged(slots);
  }

  // --- OAuth (./auth) -------------------------------------------------------

  async authorize(name: string, opts: AuthorizeOptions): Promise<ServerRecord> {
    const e = this.entry(name);
    if (this.destroyed) throw this.destroyedError(`sign in to "${name}"`);
    try {
      await this.core.auth.authorize(e.server, opts);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const message = why.startsWith('Sign-in') ? why : `Sign-in to MCP server "${name}" failed: ${why}`;
      throw new McpPoolError('AUTH_REQUIRED', message, {
        server: name,
        cause: err,
      });
    }
    const current = this.entries.get(name);
    // Signed in: dial it now (unless disconnected by hand, or live already).
    const st = current?.slot.state.status;
    if (current && !current.manual && st !== 'connected' && st !== 'connecting') return this.connect(name);
    return this.record(current ?? e);
  }

  async logout(name: string): Promise<ServerRecord> {
    const e = this.entry(name);
    await this.core.auth.logout(e.server);
    const why = 'signed out (its tokens were deleted)';
    const error = needsAuthError(e.server, why, this.core.auth.now());
    this.core.dispatch(e.slot, { type: 'NEEDS_AUTH', generation: e.slot.state.generation, error });
    return this.record(e);
  }

  // ---------------------------------------------------------------------------

  /** A server event of a slot, told under each name this view gives that slot. */
  private serverEvent(slot: Slot, event: ServerEvent): void {
    const listeners = event.type === 'log' ? this.logListeners : this.listListeners;
    if (listeners.size === 0) return;
    for (const e of this.entries.values()) {
      if (e.slot !== slot || e.manual) continue;
      const out: ServerLogEntry | ListChangedEvent =
        event.type === 'log'
          ? { ...event.entry, server: e.server.name }
          : { server: e.server.name, list: event.list };
      for (const l of [...listeners]) {
        try {
          (l as (v: typeof out) => void)(out);
        } catch {
          // a listener's failure is its own
        }
      }
    }
  }

  async update(servers: readonly ResolvedServer[]): Promise<void> {
    if (this.destroyed) throw this.destroyedError('update servers');
    const next = new Map<string, ResolvedServer>();
    for (const s of servers) next.set(s.name, s);
    const closes: Promise<void>[] = [];
    const old = new Map(this.entries);
    this.entries.clear();
    for (const [name, server] of next) {
      const e = old.get(name);
      if (!e) {
        const token = `${this.viewId}\u0000${name}`;
        this.entries.set(name, { server, slot: this.core.register(token, server), token, manual: false });
        continue;
      }
      old.delete(name);
      if (this.core.keyOf(server) !== e.slot.key) {
        // What the server would run changed: close the old connection, start over (a manual disconnect stays).
        closes.push(this.core.unregister(e.token, e.slot, 'now'));
        e.slot = this.core.register(e.token, server);
      } else {
        e.slot.server = server;
        this.core.settingsChanged(e.slot);
      }
      e.server = server;
      this.entries.set(name, e);
    }
    for (const e of old.values()) closes.push(this.core.unregister(e.token, e.slot, 'now'));
    this.core.notify();
    await Promise.all(closes);
  }

  /**
   * Give every slot back: a connection nobody else uses closes after idle, a
   * dial nobody else waits for is abandoned at once. Idempotent.
   */
  release(): Promise<void> {
    // One promise for every caller: a second release() settles only when the first has finished.
    this.releasing ??= this.doRelease();
    return this.releasing;
  }

  private async doRelease(): Promise<void> {
    this.released = true;
    // Stop following the core (a long-lived shared pool must not keep released views alive),
    // after one last snapshot: everything disconnected.
    this.unsubscribe();
    this.unsubscribeServerEvents();
    this.emit();
    const closes: Promise<void>[] = [];
    for (const e of this.entries.values()) closes.push(this.core.unregister(e.token, e.slot, 'idle'));
    this.core.notify();
    await Promise.all(closes);
  }

  /** Release the view (a lease's `destroy()`). */
  destroy(): Promise<void> {
    return this.release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  onChange(listener: (snapshot: PoolSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private emit(): void {
    this.versionCounter += 1;
    if (this.listeners.size === 0) return;
    const snapshot: PoolSnapshot = { version: this.versionCounter, servers: this.list() };
    for (const l of [...this.listeners]) {
      try {
        l(snapshot);
      } catch {
        // a listener's failure is its own
      }
    }
  }
}

/**
 * Owns the MCP connections of one agent (or, with `shared: true`, of a whole
 * host process, through {@link McpPool.lease}). Creating it spawns nothing.
 *
 * @example
 * ```ts
 * const pool = McpPool.create({ servers: (await loadMcpConfig({ workdir })).servers });
 * await pool.ensureConnected();               // dials what is due, in parallel
 * const result = await pool.callTool('hello', 'echo', { text: 'hi' });
 * await pool.destroy();                       // every process tree is gone
 * ```
 */
export class McpPool implements McpPoolApi, AsyncDisposable {
  readonly #core: PoolCore;
  readonly #view: PoolView;
  #destroying: Promise<void> | undefined;
  #leaseCounter = 0;

  /** Same as {@link McpPool.create}; starts no work. */
  constructor(opts: McpPoolOptions = {}) {
    this.#core = new PoolCore(opts);
    this.#view = new PoolView(this.#core, 'pool', opts.servers ?? [], '');
  }

  /** Create a pool. Spawns nothing, dials nothing, arms no timer. */
  static create(opts: McpPoolOptions = {}): McpPool {
    return new McpPool(opts);
  }

  /** True when created with `shared: true`. */
  get shared(): boolean {
    return this.#core.shared;
  }

  /** True once `destroy()` was called. */
  get destroyed(): boolean {
    return this.#view.destroyed;
  }

  get version(): number {
    return this.#view.version;
  }

  /**
   * Reap the process trees that hosts no longer running recorded under
   * `<home>/processes/`, and delete their ledgers. The pool does this once
   * by itself on its first dial (unless `sweepOnStart: false`); a call while
   * a sweep runs shares it. Never rejects (failures go to `onWarning`).
   */
  sweepLedgers(): Promise<KillResult[]> {
    return this.#core.sweepLedgers();
  }

  /** Connections currently connecting, connected or reconnecting. */
  get liveConnections(): number {
    return this.#core.liveCount();
  }

  /**
   * A per-agent view of a shared pool. Servers with the same fingerprint share
   * one connection across leases (reference-counted). Throws `INVALID_ARGUMENT`
   * when the pool is not shared, `POOL_DESTROYED` after `destroy()`.
   */
  lease(agentId: string, servers: readonly ResolvedServer[]): McpPoolLease {
    if (!this.#core.shared) {
      throw new McpPoolError(
        'INVALID_ARGUMENT',
        'lease() needs a shared pool: create it with McpPool.create({ shared: true }).',
      );
    }
    if (this.destroyed)
      throw new McpPoolError('POOL_DESTROYED', 'The MCP pool was destroyed; cannot lease it.');
    this.#leaseCounter += 1;
    return new PoolView(this.#core, `lease:${this.#leaseCounter}:${agentId}`, servers, agentId);
  }

  /**
   * Close every connection (whole process trees), cancel every timer, settle
   * every dial in flight (a dial that completes later closes at once).
   * Idempotent; never rejects. Leases of a shared pool become destroyed too.
   */
  destroy(): Promise<void> {
    // One promise for every caller: a second destroy() settles only when the first has finished.
    this.#destroying ??= (async () => {
      await this.#core.destroy();
      await this.#view.release();
    })();
    return this.#destroying;
  }

  /** Same as `destroy()`, for `await using pool = McpPool.create(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  list(): ServerRecord[] {
    return this.#view.list();
  }
  get(name: string): ServerRecord | undefined {
    return this.#view.get(name);
  }
  ensureConnected(opts?: EnsureConnectedOptions): Promise<void> {
    return this.#view.ensureConnected(opts);
  }
  hasPendingDials(): boolean {
    return this.#view.hasPendingDials();
  }
  warm(): void {
    this.#view.warm();
  }
  connect(name: string): Promise<ServerRecord> {
    return this.#view.connect(name);
  }
  disconnect(name: string): Promise<ServerRecord> {
    return this.#view.disconnect(name);
  }
  authorize(name: string, opts: AuthorizeOptions): Promise<ServerRecord> {
    return this.#view.authorize(name, opts);
  }
  logout(name: string): Promise<ServerRecord> {
    return this.#view.logout(name);
  }
  callTool(
    server: string,
    tool: string,
    args?: Record<string, unknown>,
    opts?: CallToolOptions,
  ): Promise<CallToolResult> {
    return this.#view.callTool(server, tool, args, opts);
  }
  update(servers: readonly ResolvedServer[]): Promise<void> {
    return this.#view.update(servers);
  }
  onChange(listener: (snapshot: PoolSnapshot) => void): () => void {
    return this.#view.onChange(listener);
  }
  listResources(server: string, opts?: ServerRequestOptions): Promise<Resource[]> {
    return this.#view.listResources(server, opts);
  }
  listResourceTemplates(server: string, opts?: ServerRequestOptions): Promise<ResourceTemplate[]> {
    return this.#view.listResourceTemplates(server, opts);
  }
  readResource(server: string, uri: string, opts?: ServerRequestOptions): Promise<ReadResourceResult> {
    return this.#view.readResource(server, uri, opts);
  }
  listPrompts(server: string, opts?: ServerRequestOptions): Promise<Prompt[]> {
    return this.#view.listPrompts(server, opts);
  }
  getPrompt(
    server: string,
    name: string,
    args?: Record<string, string>,
    opts?: ServerRequestOptions,
  ): Promise<GetPromptResult> {
    return this.#view.getPrompt(server, name, args, opts);
  }
  logs(server: string): ServerLogEntry[] {
    return this.#view.logs(server);
  }
  onLog(listener: (entry: ServerLogEntry) => void): () => void {
    return this.#view.onLog(listener);
  }
  onListChanged(listener: (event: ListChangedEvent) => void): () => void {
    return this.#view.onListChanged(listener);
  }
  sendRootsListChanged(): Promise<void> {
    return this.#view.sendRootsListChanged();
  }
}
