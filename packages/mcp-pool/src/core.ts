import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedServer } from '@wave/mcp-config';
import type { KillResult, Ledger } from '@wave/proc-reaper';
import { AuthManager } from './auth/manager';
import { needsAuthError } from './auth/status';
import { backoffDelay, type ResolvedReconnectOptions, resolveReconnectOptions } from './backoff';
import { CallDeadlines, type CallOptions, callFailure, isSdkTimeout, type PendingCall } from './calls';
import {
  type ClientFeatureOverrides,
  type ClientFeatures,
  clientCapabilities,
  featuresFor,
  installClientFeatures,
  type ListChangedEvent,
  type ServerLogEntry,
  ServerLogs,
  workdirRoots,
} from './client-features';
import { type Clock, systemClock } from './clock';
import { type DialAbort, dialFailure, errText, lossError, notConnectedError } from './diagnosis';
import { listTools, NO_SDK_TIMEOUT, raceAbort, runDial, within } from './dial';
import { McpPoolError } from './errors';
import { defaultTransportFactory } from './factory';
import {
  type CloseReason,
  type DialMode,
  initialState,
  type MachineEffect,
  type MachineEvent,
  type MachineOptions,
  type MachineState,
  type ServerErrorInfo,
  transition,
} from './machine';
import { lifecycleOf, type McpPoolOptions, type ResolvedPoolSettings, resolveSettings } from './options';
import { createProcessLedger } from './process-ledger';
import { ListCache, refreshLists } from './resources';
import type { TerminateResult, TransportFactory, TransportHandle, TransportLoss } from './transport';
import type { PoolWarning } from './warnings';

/** Extra time a close may take beyond the kill grace before the pool stops waiting for it. */
const CLOSE_SLACK_MS = 3_000;

/** What a server sent that the pool surfaces to hosts. @internal */
export type ServerEvent =
  | { type: 'log'; entry: ServerLogEntry }
  | { type: 'listChanged'; list: ListChangedEvent['list'] };

/** One connection attempt (one generation) of a slot. @internal */
export interface Conn {
  generation: number;
  abort: AbortController;
  handle?: TransportHandle | undefined;
  client?: Client | undefined;
  /** Resolves when the dial is over (success or failure, cleanup done). Never rejects. */
  settled: Promise<void>;
  closing?: Promise<void> | undefined;
  lost?: TransportLoss | undefined;
  refreshing?: boolean;
  refreshAgain?: boolean;
  /** A tools/list_changed arrived before the dial finished: list again once connected. */
  refreshAfterDial?: boolean;
  /** `initialize` completed (a loss after it fails the dial at once, see onLost). */
  handshaken?: boolean;
}

/**
 * One connection slot: a server identity (its name in a private pool, its
 * fingerprint in a shared pool) with its state machine, transports and timers.
 * @internal
 */
export interface Slot {
  readonly key: string;
  server: ResolvedServer;
  state: MachineState;
  readonly conns: Map<number, Conn>;
  retryTimer?: unknown;
  idleTimer?: unknown;
  inFlight: number;
  lastUsedAt: number;
  /** Views (tokens) that have this server configured. */
  readonly members: Set<string>;
  /** Views (tokens) that use it: dialed it or called it, and did not disconnect it. */
  readonly users: Set<string>;
}

/**
 * The engine behind {@link McpPool} and its leases: slots, the state machine
 * runtime, dials, calls, timers and limits. Views (the public pool and its
 * leases) map names to slots and keep their own manual-disconnect flags.
 * @internal
 */
export class PoolCore {
  readonly settings: ResolvedPoolSettings;
  readonly reconnect: ResolvedReconnectOptions;
  readonly clock: Clock;
  readonly shared: boolean;
  private readonly random: () => number;
  /** A reconnected connection up for `maxDelayMs` has recovered (see MachineOptions.stableMs). */
  private readonly machineOptions: MachineOptions;
  private readonly factory: TransportFactory;
  private readonly markerNamespace: string | undefined;
  private readonly slots = new Map<string, Slot>();
  /** Every close and dial still running, so destroy() can wait for all of them. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly listeners = new Set<() => void>();
  private generationCounter = 0;
  /** Tool calls with a deadline, and the one timer that enforces them. */
  private readonly deadlines: CallDeadlines;
  private emitQueued = false;
  private destroyedFlag = false;
  private destroying: Promise<void> | undefined;
  /** Client features (elicitation, sampling, roots) of the pool, and per-server overrides. */
  private readonly features: ClientFeatures;
  private readonly featureOverrides: ClientFeatureOverrides | undefined;
  /** The last log messages of each server (by server name). */
  readonly logs: ServerLogs;
  private readonly serverEventListeners = new Set<(slot: Slot, event: ServerEvent) => void>();
  /** Prompt and resource lists of live connections (see ListCache). */
  readonly lists = new ListCache();
  /** Clients that declared roots (they get `notifications/roots/list_changed`). */
  private readonly rootsClients = new WeakSet<Client>();

  constructor(opts: McpPoolOptions) {
    this.settings = resolveSettings(opts);
    this.reconnect = resolveReconnectOptions(opts.reconnect);
    this.machineOptions = {
      maxReconnectAttempts: this.reconnect.maxAttempts,
      stableMs: this.reconnect.maxDelayMs,
    };
    this.clock = opts.clock ?? systemClock();
    this.deadlines = new CallDeadlines(this.clock);
    this.onWarning = opts.onWarning;
    this.home = opts.home;
    this.sweepOnStart = opts.sweepOnStart !== false;
    this.random = opts.random ?? Math.random;
    this.factory = opts.transportFactory ?? defaultTransportFactory;
    this.shared = opts.shared === true;
    this.markerNamespace = opts.markerNamespace;
    this.features = {
      onElicitation: opts.onElicitation,
      onSampling: opts.onSampling,
      roots: opts.roots === undefined ? workdirRoots(opts.workdir ?? process.cwd()) : opts.roots,
    };
    this.featureOverrides = opts.perServer;
    this.logs = new ServerLogs(this.settings.logsPerServer);
    // OAuth (./auth): token files under the home, refresh, sign-in. No I/O until used.
    this.auth = new AuthManager({ ...opts.oauth, home: opts.home, now: () => this.clock.now() });
  }

  /** OAuth of this pool's http/sse servers. */
  readonly auth: AuthManager;

  get destroyed(): boolean {
    return this.destroyedFlag;
  }

  /** Slot key of a server: its name in a private pool, its fingerprint in a shared one. */
  keyOf(server: ResolvedServer): string {
    return this.shared ? `fp:${server.fingerprint}` : `name:${server.name}\u0000${server.fingerprint}`;
  }

  /** Subscribe to "something changed" (batched per microtask). */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private readonly home: string | undefined;
  private readonly sweepOnStart: boolean;
  private ledgerInstance: Ledger | undefined;
  private sweeping: Promise<KillResult[]> | undefined;
  private swept = false;

  /** The process ledger of this pool (created on first use; creating it does no I/O). */
  private ledger(): Ledger {
    this.ledgerInstance ??= createProcessLedger(this.home, (message) =>
      this.warn({ code: 'LEDGER', message }),
    );
    return this.ledgerInstance;
  }

  /**
   * Reap the process trees recorded by hosts that are no longer running, and
   * delete their ledgers. Runs once on the first dial unless `sweepOnStart`
   * is false; a call while one runs shares it. Never rejects.
   */
  sweepLedgers(): Promise<KillResult[]> {
    this.swept = true;
    if (this.sweeping) return this.sweeping;
    const run = this.ledger()
      .sweep({ graceMs: this.settings.killGraceMs })
      .catch((err: unknown) => {
        this.warn({
          code: 'LEDGER',
          message: `Could not sweep the process ledgers of earlier hosts: ${errText(err)}.`,
        });
        return [] as KillResult[];
      })
      .finally(() => {
        this.sweeping = undefined;
      });
    this.sweeping = run;
    this.track(run);
    return run;
  }
  private readonly onWarning: ((warning: PoolWarning) => void) | undefined;

  /** Tell the host's `onWarning` listener; its failures are its own. */
  warn(warning: PoolWarning): void {
    try {
      this.onWarning?.(warning);
    } catch {
      // a listener's failure is its own
    }
  }

  // ---------------------------------------------------------------- membership

  /** A view configures `server`: get or create its slot. */
  register(token: string, server: ResolvedServer): Slot {
    const key = this.keyOf(server);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {
        key,
        server,
        state: initialState(this.generationCounter),
        conns: new Map(),
        inFlight: 0,
        lastUsedAt: 0,
        members: new Set(),
        users: new Set(),
      };
      this.slots.set(key, slot);
    } else if (slot.members.size === 0) {
      // Same fingerprint = same command/url/env: the first member's definition is used for dialing.
      slot.server = server;
    }
    slot.members.add(token);
    return slot;
  }

  /**
   * A view no longer configures this slot (removed, changed, released).
   * `now`: close at once if nobody else uses it; `idle`: let a live connection
   * idle out (a dial or reconnection nobody else waits for stops at once).
   */
  unregister(token: string, slot: Slot, mode: 'now' | 'idle'): Promise<void> {
    slot.members.delete(token);
    slot.users.delete(token);
    if (slot.users.size === 0) {
      if (mode === 'now') return this.closeSlot(slot);
      // Released: a dial or a reconnection nobody waits for any more stops at once (its
      // process tree killed); the slot is due again for the next user (see RELEASE).
      const before = slot.state;
      this.dispatch(slot, { type: 'RELEASE' });
      if (slot.state !== before) return this.whenClosed(slot).then(() => this.gc(slot));
      // A live connection nobody uses any more closes once idle (whatever its lifecycle),
      // or at once when it has no finite idle timeout.
      if (this.idleTimeoutOf(slot) === undefined) return this.closeSlot(slot);
      this.armIdle(slot);
    }
    this.gc(slot);
    return Promise.resolve();
  }

  /** The view uses the slot (dialed or called it): it counts for the shared reference count. */
  use(token: string, slot: Slot): void {
    if (slot.users.has(token)) return;
    slot.users.add(token);
    if (this.idleTimeoutOf(slot) === undefined) this.clearIdle(slot);
  }

  /** The view stopped using the slot (manual disconnect). Closes it at once when nobody else uses it. */
  unuse(token: string, slot: Slot): Promise<void> {
    slot.users.delete(token);
    if (slot.users.size === 0) return this.closeSlot(slot);
    return Promise.resolve();
  }

  private closeSlot(slot: Slot): Promise<void> {
    this.dispatch(slot, { type: 'DISCONNECT' });
    const p = this.whenClosed(slot);
    return p.then(() => this.gc(slot));
  }

  /**
   * Drop a slot nobody configures once it holds nothing (closed, or failed):
   * a long-lived shared pool must not keep slots of released leases, and a
   * new lease must not inherit a failure nobody asked to keep.
   */
  private gc(slot: Slot): void {
    if (slot.members.size > 0) return;
    const st = slot.state.status;
    if ((st !== 'disconnected' && st !== 'error') || slot.conns.size > 0) return;
    if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
    this.clearIdle(slot);
    this.clearRetry(slot);
  }

  /** Resolves when every connection of the slot is closed and every dial settled. */
  whenClosed(slot: Slot): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const c of slot.conns.values()) {
      waits.push(c.settled);
      if (c.closing) waits.push(c.closing);
    }
    return Promise.all(waits).then(() => undefined);
  }

  // ---------------------------------------------------------------- dialing

  /**
   * Ask the slot to dial. Returns the promise of the dial that now runs (a new
   * one, or one already in flight), or `undefined` when nothing runs
   * (connected already, or an `auto` dial that is not due).
   */
  dial(slot: Slot, mode: DialMode): Promise<void> | undefined {
    if (this.destroyedFlag) return undefined;
    const s = slot.state;
    if (s.status === 'connecting') return slot.conns.get(s.generation)?.settled;
    if (s.status === 'connected') return undefined;
    if (mode === 'auto' && (s.dialed || s.status !== 'disconnected')) return undefined;
    const noRoom = this.makeRoom(slot) ? undefined : this.noRoomError(slot);
    const generation = this.nextGeneration();
    // Nothing could be closed to make room: the machine fails the dial at once (no process is started).
    this.dispatch(slot, { type: 'DIAL', mode, generation, noRoom });
    return slot.conns.get(generation)?.settled;
  }

  /** The in-flight dial of the slot, if any. */
  inFlightDial(slot: Slot): Promise<void> | undefined {
    const s = slot.state;
    if (s.status !== 'connecting' && s.status !== 'reconnecting') return undefined;
    return slot.conns.get(s.generation)?.settled;
  }

  /** The error of a dial the connection limit leaves no room for. */
  private noRoomError(slot: Slot): ServerErrorInfo {
    return dialFailure({
      name: slot.server.name,
      transport: slot.server.transport,
      maxConnections: this.settings.maxConnections,
      reason: { kind: 'limit' },
      err: undefined,
      diag: {},
      at: this.clock.now(),
    });
  }

  private nextGeneration(): number {
    this.generationCounter += 1;
    return this.generationCounter;
  }

  private isLive(slot: Slot): boolean {
    const st = slot.state.status;
    return st === 'connecting' || st === 'connected' || st === 'reconnecting';
  }

  /** Make room for one more live connection; false when the limit is reached and nothing can be closed. */
  private makeRoom(forSlot: Slot): boolean {
    let live = 0;
    let victim: Slot | undefined;
    for (const s of this.slots.values()) {
      if (s === forSlot || !this.isLive(s)) continue;
      live += 1;
      if (s.state.status === 'connected' && s.inFlight === 0) {
        if (!victim || s.lastUsedAt < victim.lastUsedAt) victim = s;
      }
    }
    if (live < this.settings.maxConnections) return true;
    if (!victim) return false;
    this.dispatch(victim, { type: 'IDLE', generation: victim.state.generation, reason: 'evicted' });
    return true;
  }

  private startDial(slot: Slot, generation: number): void {
    if (!this.swept && this.sweepOnStart) void this.sweepLedgers();
    const abort = new AbortController();
    const conn: Conn = { generation, abort, settled: Promise.resolve() };
    slot.conns.set(generation, conn);
    conn.settled = this.track(runDial(this, slot, conn));
  }

  /** The transport of `conn`, made by the configured factory with the pool's context. */
  createTransport(slot: Slot, conn: Conn): TransportHandle | Promise<TransportHandle> {
    const server = slot.server;
    const generation = conn.generation;
    return this.factory(server, {
      signal: conn.abort.signal,
      onPid: (pid) => this.dispatch(slot, { type: 'PID', generation, pid }),
      clock: this.clock,
      stderrBytes: this.settings.stderrBytes,
      killGraceMs: this.settings.killGraceMs,
      markerNamespace: this.markerNamespace,
      maxMessageBytes: this.settings.maxMessageBytes,
      ledger: this.ledger(),
      auth: this.auth.forServer(server),
      onLedgerError: (err) =>
        this.warn({
          code: 'LEDGER',
          server: server.name,
          message: `MCP server "${server.name}": its process tree could not be recorded in the process ledger (${errText(err)}); if this host crashes, the next one cannot reap it.`,
        }),
    });
  }

  /** A client for `conn`: the server's client features, tool list changes, logs. */
  createClient(slot: Slot, conn: Conn): Client {
    const server = slot.server;
    const features = featuresFor(server.name, this.features, this.featureOverrides);
    const client = new Client(this.settings.clientInfo, { capabilities: clientCapabilities(features) });
    if (features.roots) this.rootsClients.add(client);
    client.onerror = () => {
      // Transport noise (stdout garbage, stream errors) is reported through diagnostics and onLost.
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.refreshTools(slot, conn);
      this.serverEvent(slot, conn, { type: 'listChanged', list: 'tools' });
    });
    installClientFeatures(client, server.name, features, {
      log: (entry) => this.serverEvent(slot, conn, { type: 'log', entry: { ...entry, server: '', at: 0 } }),
      // Refresh what a host listed (like tools), then tell the host.
      listChanged: (list) =>
        void this.track(refreshLists(this, slot, list)).then(() =>
          this.serverEvent(slot, conn, { type: 'listChanged', list }),
        ),
    });
    return client;
  }

  onLost(slot: Slot, conn: Conn, loss: TransportLoss): void {
    if (conn.lost || conn.closing) return;
    conn.lost = loss;
    // Dropped after the handshake while the dial still lists tools: its requests may never be
    // answered, so the dial fails now (and, being recoverable, retries) instead of timing out.
    if (
      conn.handshaken &&
      loss.recoverable &&
      !conn.abort.signal.aborted &&
      slot.state.status !== 'connected'
    ) {
      conn.abort.abort({ kind: 'lost', loss } satisfies DialAbort);
    }
    this.dispatch(slot, this.lostEvent(slot, conn, loss));
  }

  private lostEvent(slot: Slot, conn: Conn, loss: TransportLoss): MachineEvent {
    if (loss.kind === 'auth') {
      const error = needsAuthError(slot.server, loss.message, this.clock.now());
      return { type: 'NEEDS_AUTH', generation: conn.generation, error };
    }
    const error = lossError(slot.server.name, loss, this.clock.now());
    return { type: 'LOST', generation: conn.generation, error, recoverable: loss.recoverable };
  }

  async refreshTools(slot: Slot, conn: Conn): Promise<void> {
    if (conn.refreshing) {
      conn.refreshAgain = true;
      return;
    }
    conn.refreshing = true;
    try {
      do {
        conn.refreshAgain = false;
        if (slot.state.generation !== conn.generation || !conn.client) return;
        if (slot.state.status !== 'connected') {
          // Still dialing (listing tools): the dial lists again once it is connected.
          if (slot.state.status === 'connecting' || slot.state.status === 'reconnecting')
            conn.refreshAfterDial = true;
          return;
        }
        conn.refreshAfterDial = false;
        const listed = await this.boundedListTools(slot, conn, conn.client);
        this.dispatch(slot, {
          type: 'TOOLS',
          generation: conn.generation,
          tools: listed.tools,
          toolsDropped: listed.dropped,
        });
      } while (conn.refreshAgain);
    } catch {
      // Keep the previous tools: a failed refresh is not a failed connection.
    } finally {
      conn.refreshing = false;
    }
    // A change announced while a failed (or timed-out) listing ran: list again.
    if (conn.refreshAgain && !conn.closing && slot.state.generation === conn.generation) {
      void this.refreshTools(slot, conn);
    }
  }

  /**
   * One refresh listing, bounded like a dial (`connectTimeoutMs`): an
   * unanswered `tools/list` ends, so the next `list_changed` starts a new one.
   */
  private async boundedListTools(slot: Slot, conn: Conn, client: Client) {
    const ac = new AbortController();
    const ms = slot.server.config.connectTimeoutMs ?? this.settings.connectMs;
    const onAbort = () => ac.abort(conn.abort.signal.reason);
    conn.abort.signal.addEventListener('abort', onAbort, { once: true });
    const timer = this.clock.setTimeout(
      () => ac.abort(new Error(`tools/list not answered within ${ms} ms`)),
      ms,
    );
    try {
      return await raceAbort(listTools(this, slot, client, ac.signal), ac.signal);
    } finally {
      this.clock.clearTimeout(timer);
      conn.abort.signal.removeEventListener('abort', onAbort);
    }
  }

  // ---------------------------------------------------------------- closing

  private closeGeneration(slot: Slot, generation: number, reason: CloseReason): void {
    const conn = slot.conns.get(generation);
    if (conn) void this.closeConn(slot, conn, reason);
  }

  /** Close one connection: abort its dial, terminate its transport (whole tree). Idempotent, never rejects. */
  closeConn(slot: Slot, conn: Conn, reason: CloseReason): Promise<void> {
    if (conn.closing) return conn.closing;
    if (!conn.abort.signal.aborted) conn.abort.abort({ kind: 'closed', reason } satisfies DialAbort);
    const handle = conn.handle;
    conn.closing = this.track(
      (async () => {
        try {
          if (handle) await this.terminate(handle);
        } finally {
          if (slot.conns.get(conn.generation) === conn) slot.conns.delete(conn.generation);
          this.gc(slot);
        }
      })(),
    );
    return conn.closing;
  }

  /** Terminate a handle, bounded in time; never rejects. */
  async terminate(handle: TransportHandle): Promise<TerminateResult | undefined> {
    const p = Promise.resolve()
      .then(() => handle.terminate())
      .catch((err: unknown) => ({ pids: [], survivors: [], forced: false, ms: 0, error: String(err) }));
    return within(this.clock, p, this.settings.killGraceMs + CLOSE_SLACK_MS);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    const safe = p.catch(() => undefined as T);
    this.pending.add(safe);
    void safe.finally(() => this.pending.delete(safe));
    return safe;
  }

  // ---------------------------------------------------------------- state machine runtime

  /** Feed an event to a slot's machine and run the resulting effects. */
  dispatch(slot: Slot, event: MachineEvent): void {
    const before = slot.state;
    const [next, effects] = transition(before, event, this.machineOptions);
    if (next !== before) {
      slot.state = next;
      if (next.status !== 'connected') this.clearIdle(slot);
      else if (before.status !== 'connected') {
        slot.lastUsedAt = this.clock.now();
        this.armIdle(slot);
      }
      this.notify();
    }
    for (const effect of effects) this.runEffect(slot, effect);
  }

  private runEffect(slot: Slot, effect: MachineEffect): void {
    switch (effect.type) {
      case 'dial':
        this.startDial(slot, effect.generation);
        return;
      case 'close':
        this.closeGeneration(slot, effect.generation, effect.reason);
        return;
      case 'cancelRetry':
        this.clearRetry(slot);
        return;
      case 'scheduleRetry': {
        this.clearRetry(slot);
        if (this.destroyedFlag) return;
        const delay = backoffDelay(effect.attempt, this.reconnect, this.random);
        const { generation } = effect;
        slot.retryTimer = this.clock.setTimeout(() => {
          slot.retryTimer = undefined;
          if (this.destroyedFlag) return;
          if (slot.state.status !== 'reconnecting' || slot.state.generation !== generation) return;
          const next = this.nextGeneration();
          // No room for the connection right now: this attempt fails (and counts).
          const noRoom = this.makeRoom(slot) ? undefined : this.noRoomError(slot);
          this.dispatch(slot, { type: 'RETRY', generation, next, noRoom });
        }, delay);
        return;
      }
    }
  }

  private clearRetry(slot: Slot): void {
    if (slot.retryTimer !== undefined) {
      this.clock.clearTimeout(slot.retryTimer);
      slot.retryTimer = undefined;
    }
  }

  // ---------------------------------------------------------------- idle

  /** Idle timeout of the slot, or undefined when it never idles out right now. */
  private idleTimeoutOf(slot: Slot): number | undefined {
    const lifecycle = lifecycleOf(slot.server);
    // keep-alive and eager servers stay while someone uses them; unused (released) ones idle out too.
    if (lifecycle !== 'lazy' && slot.users.size > 0) return undefined;
    const ms = slot.server.config.idleTimeoutMs ?? this.settings.idleMs;
    return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
  }

  /**
   * The slot's settings changed without a new fingerprint (lifecycle, idle
   * timeout): re-arm its idle timer for the rest of the new period.
   */
  settingsChanged(slot: Slot): void {
    if (this.destroyedFlag || slot.state.status !== 'connected') return;
    this.clearIdle(slot);
    // With a call in flight, the end of the last call arms it.
    if (slot.inFlight > 0) return;
    const ms = this.idleTimeoutOf(slot);
    if (ms === undefined) return;
    this.scheduleIdle(slot, slot.state.generation, Math.max(0, slot.lastUsedAt + ms - this.clock.now()));
  }

  /** (Re)arm the idle timer for a full idle period from now. */
  private armIdle(slot: Slot): void {
    this.clearIdle(slot);
    if (this.destroyedFlag || slot.state.status !== 'connected' || slot.inFlight > 0) return;
    const ms = this.idleTimeoutOf(slot);
    if (ms === undefined) return;
    this.scheduleIdle(slot, slot.state.generation, ms);
  }

  private scheduleIdle(slot: Slot, generation: number, ms: number): void {
    slot.idleTimer = this.clock.setTimeout(() => this.onIdleTimer(slot, generation), ms);
  }

  /**
   * Calls do not touch the idle timer (that would cost two timer operations
   * per call); when it fires, it checks the last use and re-arms for the rest
   * of the period, or leaves re-arming to the end of the call in flight.
   */
  private onIdleTimer(slot: Slot, generation: number): void {
    slot.idleTimer = undefined;
    if (slot.state.status !== 'connected' || slot.state.generation !== generation || slot.inFlight > 0)
      return;
    const ms = this.idleTimeoutOf(slot);
    if (ms === undefined) return;
    const remaining = slot.lastUsedAt + ms - this.clock.now();
    if (remaining > 0) {
      this.scheduleIdle(slot, generation, remaining);
      return;
    }
    this.dispatch(slot, { type: 'IDLE', generation, reason: 'idle' });
  }

  private clearIdle(slot: Slot): void {
    if (slot.idleTimer !== undefined) {
      this.clock.clearTimeout(slot.idleTimer);
      slot.idleTimer = undefined;
    }
  }

  // ---------------------------------------------------------------- calls

  /** Call a tool on a connected slot. */
  /**
   * Call a tool on a connected slot. Written without `async`/`await` on
   * purpose: this is the hot path, and each await layer costs microtask hops.
   */
  callTool(
    slot: Slot,
    tool: string,
    args: Record<string, unknown> | undefined,
    opts: CallOptions = {},
  ): Promise<CallToolResult> {
    const name = slot.server.name;
    if (this.destroyedFlag) {
      return Promise.reject(
        new McpPoolError(
          'POOL_DESTROYED',
          `The MCP pool was destroyed; cannot call "${tool}" on "${name}".`,
          {
            server: name,
          },
        ),
      );
    }
    const s = slot.state;
    const conn = s.status === 'connected' ? slot.conns.get(s.generation) : undefined;
    const client = conn?.client;
    if (!conn || !client) return Promise.reject(this.notConnected(slot, tool));
    const userSignal = opts.signal;
    if (userSignal?.aborted) {
      return Promise.reject(
        new McpPoolError(
          'CALL_ABORTED',
          `Call of "${tool}" on MCP server "${name}" was aborted before it started.`,
          {
            server: name,
            cause: userSignal.reason,
          },
        ),
      );
    }
    const timeoutMs = opts.timeoutMs ?? slot.server.config.callTimeoutMs ?? this.settings.callMs;
    const bounded = Number.isFinite(timeoutMs) && timeoutMs > 0;
    const now = this.clock.now();
    const call: PendingCall = { deadline: Number.POSITIVE_INFINITY, timedOut: false, timeoutMs };
    const onProgress = opts.onProgress;
    let requestOptions: RequestOptions;
    let onUserAbort: (() => void) | undefined;
    if (userSignal === undefined && onProgress === undefined) {
      // The lean path: nothing can cancel the call but its deadline, so the
      // SDK's own request timer (armed for every request anyway) is the
      // deadline, and it cancels the request itself. No AbortSignal: creating
      // one costs several µs on Node 20, a tenth of an echo over stdio.
      call.sdkTimeout = bounded ? Math.min(timeoutMs, NO_SDK_TIMEOUT) : NO_SDK_TIMEOUT;
      requestOptions = { timeout: call.sdkTimeout };
    } else {
      const abort = new AbortController();
      call.abort = abort;
      if (bounded) call.deadline = now + timeoutMs;
      if (onProgress) {
        const maxMs = opts.maxTotalMs ?? this.settings.callMaxTotalMs;
        const maxAt = Number.isFinite(maxMs) && maxMs > 0 ? now + maxMs : Number.POSITIVE_INFINITY;
        call.idle = { maxAt, maxMs };
        call.deadline = Math.min(call.deadline, maxAt);
      }
      if (call.deadline !== Number.POSITIVE_INFINITY) this.deadlines.add(call);
      if (userSignal) {
        onUserAbort = () => abort.abort(userSignal.reason);
        userSignal.addEventListener('abort', onUserAbort, { once: true });
      }
      requestOptions = { signal: abort.signal, timeout: NO_SDK_TIMEOUT };
      if (onProgress) {
        requestOptions.onprogress = (progress) => {
          // Progress restarts the idle limit (never past the absolute one); the
          // deadline sweep re-arms for the later deadline when it fires.
          const idle = call.idle;
          if (idle && !call.timedOut && bounded) {
            call.deadline = Math.min(this.clock.now() + timeoutMs, idle.maxAt);
          }
          onProgress(progress);
        };
      }
    }
    slot.inFlight += 1;
    slot.lastUsedAt = now;
    const done = () => {
      if (call.abort) this.deadlines.delete(call);
      if (onUserAbort) userSignal?.removeEventListener('abort', onUserAbort);
      slot.inFlight -= 1;
      slot.lastUsedAt = this.clock.now();
      if (slot.inFlight === 0 && slot.idleTimer === undefined && slot.state.status === 'connected') {
        this.armIdle(slot);
      }
    };
    const fail = (err: unknown): never => {
      done();
      if (call.sdkTimeout !== undefined && isSdkTimeout(err, call.sdkTimeout)) call.timedOut = true;
      throw callFailure(name, tool, err, call, userSignal?.aborted === true, {
        lost: conn.lost,
        closing: conn.closing !== undefined,
        transportGone: conn.client?.transport === undefined,
      });
    };
    let pending: Promise<CallToolResult>;
    try {
      pending = client.callTool(
        { name: tool, arguments: args ?? {} },
        undefined,
        requestOptions,
      ) as Promise<CallToolResult>;
    } catch (err) {
      return Promise.reject(err).catch(fail);
    }
    return pending.then((result) => {
      done();
      return result;
    }, fail);
  }

  notConnected(slot: Slot, tool: string): McpPoolError {
    return notConnectedError(slot.server.name, slot.state, tool);
  }

  // ---------------------------------------------------------------- client features

  /** Listen to log messages and list changes of every slot. */
  onServerEvent(listener: (slot: Slot, event: ServerEvent) => void): () => void {
    this.serverEventListeners.add(listener);
    return () => this.serverEventListeners.delete(listener);
  }

  private serverEvent(slot: Slot, conn: Conn, event: ServerEvent): void {
    // Only the current connection speaks for the slot.
    if (slot.state.generation !== conn.generation || this.destroyedFlag) return;
    if (event.type === 'log') {
      event.entry.server = slot.server.name;
      event.entry.at = this.clock.now();
      this.logs.add(slot.key, event.entry);
    }
    for (const l of [...this.serverEventListeners]) {
      try {
        l(slot, event);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** The client of the slot's live connection, or undefined when it is not connected. */
  connectedClient(slot: Slot): Client | undefined {
    const s = slot.state;
    return s.status === 'connected' ? slot.conns.get(s.generation)?.client : undefined;
  }

  /**
   * A request other than a tool call starts on the slot: it counts as in
   * flight (not evicted, not idled out). Call the returned function once done.
   */
  beginUse(slot: Slot): () => void {
    slot.inFlight += 1;
    slot.lastUsedAt = this.clock.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      slot.inFlight -= 1;
      slot.lastUsedAt = this.clock.now();
      if (slot.inFlight === 0 && slot.idleTimer === undefined && slot.state.status === 'connected') {
        this.armIdle(slot);
      }
    };
  }

  /** Tell the connected servers of `slots` that declared roots that the roots changed. Never rejects. */
  async sendRootsListChanged(slots: Iterable<Slot>): Promise<void> {
    const sends: Promise<unknown>[] = [];
    for (const slot of new Set(slots)) {
      const client = this.connectedClient(slot);
      if (!client || !this.rootsClients.has(client)) continue;
      sends.push(client.sendRootsListChanged().catch(() => undefined));
    }
    await Promise.all(sends);
  }

  // ---------------------------------------------------------------- teardown

  /** Close every connection, cancel every timer, settle every dial. Idempotent. */
  destroy(): Promise<void> {
    if (this.destroying) return this.destroying;
    this.destroyedFlag = true;
    for (const slot of this.slots.values()) {
      this.clearIdle(slot);
      this.clearRetry(slot);
      this.dispatch(slot, { type: 'DESTROY' });
      // Also close connections of older generations still finishing.
      for (const conn of [...slot.conns.values()]) void this.closeConn(slot, conn, 'destroy');
    }
    this.destroying = (async () => {
      // Dials that settle now may start closes; loop until nothing is pending.
      while (this.pending.size > 0) await Promise.all([...this.pending]);
      for (const slot of this.slots.values()) {
        this.clearIdle(slot);
        this.clearRetry(slot);
      }
      this.deadlines.stop();
      this.notify();
    })();
    return this.destroying;
  }

  // ---------------------------------------------------------------- change notification

  /** Schedule a change notification (batched per microtask). */
  notify(): void {
    if (this.emitQueued) return;
    this.emitQueued = true;
    queueMicrotask(() => {
      this.emitQueued = false;
      for (const l of [...this.listeners]) {
        try {
          l();
        } catch {
          // a listener's failure is its own
        }
      }
    });
  }

  /** Live connection count (connecting, connected, reconnecting). */
  liveCount(): number {
    let n = 0;
    for (const s of this.slots.values()) if (this.isLive(s)) n += 1;
    return n;
  }
}
