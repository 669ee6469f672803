/**
 * The agent: composes mcp-config (what is configured), mcp-pool (connections),
 * mcp-instructions (what to announce) and mcp-cache (what to show while
 * disconnected) around one turn loop and one tool funnel.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createToolCache, type ToolCache, type ToolSnapshot } from '@wave/mcp-cache';
import {
  type ConfigIssue,
  discoverPlugins,
  displayServer,
  type Env,
  isLocallyDisabled,
  loadMcpConfig,
  type PluginServers,
  type ResolvedServer,
  readLocalState,
  resolveHome,
  type ServerDisplay,
} from '@wave/mcp-config';
import {
  type AuthorizeOptions,
  type ElicitationHandler,
  McpPool,
  type McpPoolApi,
  type McpPoolOptions,
  type ServerRecord,
} from '@wave/mcp-pool';
import { mcpSettingsTool } from './builtins/mcp-settings';
import { readOutputTool } from './builtins/read-output';
import type { BuiltinContext, BuiltinTool } from './builtins/types';
import { AgentError } from './errors';
import { Emitter } from './events';
import { decideExposure } from './exposure/decide';
import { type ExecExposure, execExposure } from './exposure/exec-exposure';
import { flatExposure } from './exposure/flat-exposure';
import { gatewayExposure } from './exposure/gateway-exposure';
import type { Exposure, ExposureServerStatus, LiveTool } from './exposure/types';
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  Funnel,
  type FunnelBuiltin,
  type FunnelServer,
} from './funnel';
import { createOutputGuard, type OutputGuard } from './guard/output-guard';
import type { OutputLimits } from './guard/truncate';
import type { Message, ModelAdapter, ModelStreamEvent } from './model';
import { matchRules, type PermissionRules } from './permissions';
import { createJsonlSessionStore, newSessionId } from './sessions/jsonl';
import type { SessionStore } from './sessions/types';
import { stableHash } from './stable-hash';
import { runTurn, type TurnResult } from './turn';

/**
 * The system prompt used when none is given. It never mentions which MCP
 * servers are connected: it is byte-identical for the whole session.
 */
export const DEFAULT_SYSTEM_PROMPT =
  "You are a helpful assistant working in the user's project. Tools named mcp__<server>__<tool> come from MCP servers the user configured; notes about them arrive in <system-reminder> messages. A tool result that says a tool is unavailable explains what the user can do.";

/** How MCP tools are shown to the model. */
import type { ToolMode } from './exposure/decide';

export type { ToolMode };

/** Options of {@link Agent.create}. */
export interface AgentOptions {
  /** The project directory: `<workdir>/.mcp.json` is read, sessions are grouped by it. */
  workdir: string;
  /** The wave home (`<home>/mcp.json`, sessions, tool cache). @default $WAVE_HOME, else ~/.wave */
  home?: string;
  /** The model. See `openaiCompatible`, `anthropic`, and `scriptedModel` from `@wave/agent/testing`. */
  model: ModelAdapter;
  /** @default DEFAULT_SYSTEM_PROMPT */
  systemPrompt?: string;
  /** MCP servers given in code: the highest-precedence config source. @default {} */
  mcpServers?: Record<string, unknown>;
  /**
   * Servers contributed by plugins: the lowest-precedence source.
   * @default the plugins installed under `<home>/plugins/` (see `discoverPlugins`)
   */
  plugins?: PluginServers[];
  /** Look for installed plugins under `<home>/plugins/` when `plugins` is not given. @default true */
  discoverPlugins?: boolean;
  /** Permission rules on full tool names. @default {} (every MCP tool asks) */
  permissions?: PermissionRules;
  /** Asked when no rule decides. @default none: such calls are denied with a reason the model can read */
  canUseTool?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /**
   * How MCP tools are declared: `flat` (each tool as `mcp__<server>__<tool>`),
   * `exec` (folded into one `Exec` tool), `gateway` (one constant `mcp` tool),
   * or `auto`: flat below 5 visible MCP tools, Exec from 5 on, re-decided
   * every turn (flat whenever Exec is disabled or denied). @default 'auto'
   */
  toolMode?: ToolMode;
  /** Allow the Exec tool (used by `auto` from 5 MCP tools on). @default true */
  enableExec?: boolean;
  /**
   * Gate for servers from the repository (project `.mcp.json`) and plugins,
   * asked once per server before anything can dial it. A refused server is
   * shown as `disabled` and never started. @default every server allowed
   */
  isServerAllowed?: (server: ResolvedServer) => boolean | Promise<boolean>;
  /** Resume this session (`'latest'`: the newest of this workdir, or a new one). @default a new session */
  sessionId?: string;
  /** Where transcripts go. @default JSONL files under `<home>/sessions/<workdir-hash>/` */
  sessionStore?: SessionStore;
  /**
   * A shared pool (`McpPool.create({ shared: true })`) to lease connections
   * from; the agent releases its lease on destroy and never destroys the pool.
   * @default a private pool, destroyed with the agent
   */
  pool?: McpPool;
  /** Options of the private pool (limits, timeouts, transport factory). Ignored with `pool`. @default {} */
  poolOptions?: Omit<McpPoolOptions, 'servers' | 'shared'>;
  /**
   * Answers a server's elicitation (a form it wants the user to fill in):
   * `(server, request, { signal }) => { action: 'accept' | 'decline' | 'cancel', content? }`.
   * With a shared `pool`, give it to the pool instead (both at once reject
   * with `INVALID_OPTIONS`). @default none: servers
   * are told the client cannot elicit, so every request is declined
   */
  onElicitation?: ElicitationHandler;
  /** Model calls that may ask for tools in one turn. @default 25 */
  maxToolRounds?: number;
  /**
   * Read-only overrides by full-name glob (servers sometimes set `readOnlyHint`
   * wrong), e.g. `{ 'mcp__fs__read_*': true, 'mcp__db__*': false }`. First match wins.
   * Wins over a server's own `readOnlyTools` config field (globs relative to the
   * server), which wins over the tool's `readOnlyHint`.
   * @default {} (each tool's own `readOnlyHint`)
   */
  readOnlyTools?: Record<string, boolean>;
  /** Earlier "allow always" answers to restore: full name -> definition hash (see the `allowAlways` event). @default {} */
  rememberedApprovals?: Record<string, string>;
  /** Longest instructions text per server shown to the model. @default 2048 */
  instructionsMaxChars?: number;
  /** Environment for `${VAR}` expansion in config. @default process.env */
  env?: Env;
  /** Tool snapshot cache (shown while a server is not connected); `false` turns it off. @default `<home>/mcp-tools-cache.json` */
  toolCache?: ToolCache | false;
  /** Identifies the agent in a shared pool and in logs. @default a random id */
  id?: string;
  /**
   * Extra built-in tools, declared after `ReadOutput` and `McpSettings` (which
   * are always there), never folded away. One without `alwaysAsk` runs unless
   * a rule denies or asks; its text goes through the output guard like any
   * tool's. @default []
   */
  builtins?: BuiltinTool[];
  /**
   * Output guard limits: text over 8 KB or 1 000 lines is cut and spilled to a
   * file `ReadOutput` can page through, structured content over 16 KB is
   * summarized, images are counted per turn. @default DEFAULT_OUTPUT_LIMITS
   */
  outputLimits?: Partial<OutputLimits>;
  /** Clock for timestamps. @default Date.now */
  now?: () => number;
}

/** A server as a settings page shows it. */
export interface McpServerView {
  name: string;
  source: ResolvedServer['source'];
  /** `disabled`: switched off (see `disabledReason`); it is never started. */
  status: ServerRecord['status'] | 'disabled' | 'needs-auth';
  /** Why a `disabled` server is off: `"disabled": true` in its file, the local switch, or the host's `isServerAllowed`. */
  disabledReason?: 'config' | 'local' | 'not-allowed';
  error?: { code: string; message: string; stderrTail?: string };
  toolCount: number;
  tools: { name: string; description?: string; inputSchema?: unknown }[];
  /** The tools come from the snapshot cache (the server is not connected). */
  fromCache: boolean;
  lastConnectedAt?: number;
  instructions?: string;
  manuallyDisconnected: boolean;
  /** The configuration as written, secrets masked. */
  config: ServerDisplay;
  /** Absolute path of the file it came from (project and user sources). */
  file?: string;
}

/** A non-fatal problem. */
export interface AgentWarning {
  code: 'SESSION_SAVE_FAILED' | 'SESSION_TORN' | 'CACHE_WRITE_FAILED' | 'SERVER_GATE_FAILED';
  message: string;
}

/** Events of an agent. */
export interface AgentEvents {
  /** Server list or a server's status/tools changed. `version` grows by one each time. */
  mcpServersChanged: { version: number };
  /** A message was appended to the history. */
  message: Message;
  /** Streaming from the model. */
  modelEvent: ModelStreamEvent;
  /** A tool call finished (through the funnel). */
  toolCall: {
    callId?: string;
    /** The MCP server that took the call, when it resolved to one. */
    server?: string;
    fullName: string;
    arguments: Record<string, unknown>;
    isError: boolean;
    blocked: boolean;
    ms: number;
  };
  /** The user is about to be asked (before `canUseTool`). */
  approvalRequest: ApprovalRequest;
  /** The user answered "allow always": persist it to restore with `rememberedApprovals`. */
  allowAlways: { fullName: string; definitionHash: string };
  turnEnd: TurnResult;
  warning: AgentWarning;
}

interface Loaded {
  servers: ResolvedServer[];
  issues: ConfigIssue[];
  configured: FunnelServer[];
}

const TRUSTED = new Set(['constructor', 'user']);

async function loadAndGate(
  options: AgentOptions,
  home: string,
  warn: (w: AgentWarning) => void,
): Promise<Loaded> {
  const load: Parameters<typeof loadMcpConfig>[0] = { workdir: options.workdir, home };
  if (options.env) load.env = options.env;
  if (options.mcpServers) load.constructorServers = options.mcpServers;
  const pluginIssues: ConfigIssue[] = [];
  if (options.plugins) load.plugins = options.plugins;
  else if (options.discoverPlugins !== false) {
    const found = await discoverPlugins({ home });
    load.plugins = found.plugins;
    pluginIssues.push(...found.issues);
  }
  // The per-machine switch (`wave mcp disable`, a settings page) lives in the home, never in a shared file.
  const [{ servers, issues: configIssues }, local] = await Promise.all([
    loadMcpConfig(load),
    readLocalState(home),
  ]);
  const issues = [...pluginIssues, ...configIssues];
  const configured: FunnelServer[] = [];
  for (const server of servers) {
    const entry: FunnelServer = { server };
    if (server.disabled === true) {
      entry.disabledReason = 'config';
      entry.blockedReason = `MCP server "${server.name}" is disabled in ${server.file ?? 'its configuration'} ("disabled": true).`;
    } else if (isLocallyDisabled(local, server)) {
      entry.disabledReason = 'local';
      entry.blockedReason = `MCP server "${server.name}" is turned off on this machine; the user can turn it on in the host's settings (wave mcp enable ${server.name}).`;
    } else if (options.isServerAllowed && !TRUSTED.has(server.source)) {
      let allowed = false;
      try {
        allowed = (await options.isServerAllowed(server)) === true;
      } catch (error) {
        warn({
          code: 'SERVER_GATE_FAILED',
          message: `isServerAllowed threw for MCP server "${server.name}" (${(error as Error)?.message ?? String(error)}); it stays off.`,
        });
      }
      if (!allowed) {
        entry.disabledReason = 'not-allowed';
        entry.blockedReason = `MCP server "${server.name}" (from ${server.file ?? server.plugin ?? server.source}) was not allowed by the host. The user can trust it in the host's settings.`;
      }
    }
    configured.push(entry);
  }
  return { servers, issues, configured };
}

/**
 * An agent over MCP servers. `Agent.create()` reads configuration and starts
 * no process; the first `sendMessage()` dials what is due.
 *
 * @example
 * ```ts
 * const agent = await Agent.create({ workdir, model, mcpServers: { hello: { command: 'node', args: ['hello.mjs'] } } });
 * const { text } = await agent.sendMessage('Say hi through the echo tool');
 * await agent.destroy();
 * ```
 */
export class Agent {
  /** This agent's id (lease name in a shared pool). */
  readonly id: string;
  /** The session id transcripts are saved under. */
  readonly sessionId: string;
  readonly workdir: string;
  readonly home: string;

  private readonly emitter = new Emitter<AgentEvents>();
  private readonly history: Message[];
  private persisted: number;
  private needsRewrite: boolean;
  private destroyed = false;
  private destroying: Promise<void> | undefined;
  private turn: Promise<TurnResult> | undefined;
  private readonly lifetime = new AbortController();
  private readonly funnel: Funnel;
  private readonly exposures: { flat: Exposure; gateway: Exposure; exec: ExecExposure };
  private readonly remembered: Map<string, string>;
  private readonly snapshots = new Map<string, ToolSnapshot>();
  private readonly written = new Map<string, string>();
  private readonly seenTools = new Map<string, { tools: ServerRecord['tools']; fingerprint: string }>();
  private changeVersion = 0;
  /** The last tool cache refresh (see {@link refreshCache}); it never rejects. */
  private cacheWrites: Promise<void> = Promise.resolve();
  private readonly unsubscribePool: () => void;
  private readonly guard: OutputGuard;
  /** `ReadOutput` and `McpSettings`, then the host's own: always declared, never folded away. */
  private readonly builtinList: FunnelBuiltin[];

  private constructor(
    private readonly options: AgentOptions,
    private loaded: Loaded,
    private readonly pool: McpPoolApi,
    private readonly store: SessionStore,
    private readonly cache: ToolCache | undefined,
    session: { id: string; messages: Message[]; torn: boolean },
    snapshots: readonly ToolSnapshot[],
    id: string,
    home: string,
  ) {
    this.id = id;
    this.home = home;
    this.workdir = options.workdir;
    this.sessionId = session.id;
    this.history = session.messages;
    this.persisted = session.messages.length;
    this.needsRewrite = session.torn;
    for (const s of snapshots) {
      this.snapshots.set(s.server, s);
      this.written.set(s.server, stableHash([s.fingerprint, s.tools, s.instructions ?? null]));
    }
    this.remembered = new Map(Object.entries(options.rememberedApprovals ?? {}));
    this.builtinList = [
      { ...readOutputTool, readOnly: true, unguarded: true },
      mcpSettingsTool,
      ...(options.builtins ?? []),
    ];
    this.exposures = { flat: flatExposure(), gateway: gatewayExposure(), exec: execExposure() };
    this.guard = createOutputGuard({
      dir: join(this.filesDir(), 'tool-output'),
      ...(options.outputLimits ? { limits: options.outputLimits } : {}),
    });
    const builtins = new Map<string, FunnelBuiltin>();
    for (const b of this.builtinList) builtins.set(b.declaration.name, b);
    this.funnel = new Funnel({
      pool,
      servers: () => this.loaded.configured,
      builtins,
      builtinContext: (signal) => this.builtinContext(signal),
      rules: () => this.options.permissions,
      canUseTool: options.canUseTool,
      remembered: this.remembered,
      guard: this.guard,
      supportsVision: options.model.supportsVision === true,
      readOnlyOverrides: options.readOnlyTools,
      onApprovalRequest: (r) => this.emitter.emit('approvalRequest', r),
      onAllowAlways: (e) => this.emitter.emit('allowAlways', e),
      onToolCall: (e) => {
        const ev: AgentEvents['toolCall'] = {
          fullName: e.fullName,
          arguments: e.arguments,
          isError: e.outcome.isError,
          blocked: e.outcome.blocked === true,
          ms: e.ms,
        };
        if (e.callId !== undefined) ev.callId = e.callId;
        if (e.server !== undefined) ev.server = e.server;
        this.emitter.emit('toolCall', ev);
      },
      now: options.now,
    });
    this.unsubscribePool = pool.onChange(() => {
      this.changed();
      // A tool list that changes between turns (list_changed, a connect) reaches the cache now,
      // so a later disconnect never shows an older snapshot.
      if (this.cache && !this.destroyed) void this.refreshCache();
    });
  }

  /**
   * Load every config source (issues kept, see {@link getConfigIssues}), ask
   * `isServerAllowed` about repository and plugin servers, build the pool (or
   * lease the shared one), restore the session. Starts no process.
   */
  static async create(options: AgentOptions): Promise<Agent> {
    if (!options || typeof options.workdir !== 'string' || options.workdir === '') {
      throw new AgentError(
        'INVALID_OPTIONS',
        'Agent.create needs { workdir: string, model }: workdir is missing.',
      );
    }
    if (!options.model || typeof options.model.generate !== 'function') {
      throw new AgentError(
        'INVALID_OPTIONS',
        'Agent.create needs { model }: pass a ModelAdapter (e.g. openaiCompatible(...)).',
      );
    }
    if (options.pool && options.onElicitation) {
      throw new AgentError(
        'INVALID_OPTIONS',
        'Agent.create: onElicitation cannot be used with a shared pool (its connections serve every agent that leases them); give the handler to the pool: McpPool.create({ shared: true, onElicitation }), or AgentHost.create({ poolOptions: { onElicitation } }).',
      );
    }
    if (options.pool && !options.pool.shared) {
      throw new AgentError(
        'INVALID_OPTIONS',
        'Agent.create: the pool option must be a shared pool (McpPool.create({ shared: true })); a private pool is created for you otherwise.',
      );
    }
    const homeOpts: Parameters<typeof resolveHome>[0] = {};
    if (options.home !== undefined) homeOpts.home = options.home;
    if (options.env !== undefined) homeOpts.env = options.env;
    const home = resolveHome(homeOpts);
    const id = options.id ?? randomUUID();
    const early: AgentWarning[] = [];
    const store = options.sessionStore ?? createJsonlSessionStore({ home });
    const cache = options.toolCache === false ? undefined : (options.toolCache ?? createToolCache({ home }));

    const [loaded, session, snapshots] = await Promise.all([
      loadAndGate(options, home, (w) => early.push(w)),
      Agent.openSession(store, options),
      cache
        ? cache.list(options.workdir).catch(() => [] as ToolSnapshot[])
        : Promise.resolve([] as ToolSnapshot[]),
    ]);
    for (const w of session.warnings) early.push({ code: 'SESSION_TORN', message: w });

    const servers = loaded.configured.filter((s) => !s.blockedReason).map((s) => s.server);
    let pool: McpPoolApi;
    if (options.pool) pool = options.pool.lease(id, servers);
    else {
      // Elicitation: without a handler the pool declares no capability, so servers cannot ask
      // (the "declined" default). A shared pool takes its handler where the host creates it.
      // The servers' root (roots/list) is the agent's workdir unless the host says otherwise.
      const poolOptions: McpPoolOptions = {
        workdir: options.workdir,
        ...(options.poolOptions ?? {}),
        servers,
      };
      if (options.onElicitation) poolOptions.onElicitation = options.onElicitation;
      pool = McpPool.create(poolOptions);
    }
    const agent = new Agent(
      options,
      loaded,
      pool,
      store,
      cache,
      { id: session.id, messages: session.messages, torn: session.warnings.length > 0 },
      snapshots,
      id,
      home,
    );
    agent.pendingWarnings = early;
    return agent;
  }

  private pendingWarnings: AgentWarning[] = [];

  private static async openSession(
    store: SessionStore,
    options: AgentOptions,
  ): Promise<{ id: string; messages: Message[]; warnings: string[] }> {
    if (options.sessionId === undefined)
      return { id: newSessionId(options.now?.()), messages: [], warnings: [] };
    const loaded = await store.load(options.workdir, options.sessionId);
    if (loaded) return loaded;
    if (options.sessionId === 'latest')
      return { id: newSessionId(options.now?.()), messages: [], warnings: [] };
    throw new AgentError(
      'SESSION_NOT_FOUND',
      `No session "${options.sessionId}" for workdir ${options.workdir}. Use sessionId: 'latest' to resume the newest, or omit it to start a new one.`,
    );
  }

  /** Listen to an event; returns the unsubscribe function. Warnings found during `create` are replayed to the first `warning` listener. */
  on<K extends keyof AgentEvents>(event: K, listener: (payload: AgentEvents[K]) => void): () => void {
    const off = this.emitter.on(event, listener);
    if (event === 'warning' && this.pendingWarnings.length > 0) {
      const ws = this.pendingWarnings;
      this.pendingWarnings = [];
      for (const w of ws) this.emitter.emit('warning', w);
    }
    return off;
  }

  private assertAlive(what: string): void {
    if (this.destroyed)
      throw new AgentError('AGENT_DESTROYED', `The agent was destroyed; cannot ${what}. Create a new agent.`);
  }

  private warn(w: AgentWarning): void {
    this.emitter.emit('warning', w);
  }

  private changed(): void {
    if (this.destroyed) return;
    this.changeVersion += 1;
    this.emitter.emit('mcpServersChanged', { version: this.changeVersion });
  }

  private filesDir(): string {
    return this.store.filesDir(this.workdir, this.sessionId);
  }

  private builtinContext(signal?: AbortSignal): BuiltinContext {
    const ctx: BuiltinContext = {
      workdir: this.workdir,
      home: this.home,
      sessionDir: this.filesDir(),
      reloadConfig: () => this.reloadMcpConfig(),
      servers: () => this.loaded.servers,
    };
    if (signal) ctx.signal = signal;
    return ctx;
  }

  /** Problems found in the configuration (bad files, bad servers), as of the last load. */
  getConfigIssues(): ConfigIssue[] {
    this.assertAlive('read config issues');
    return [...this.loaded.issues];
  }

  /** A copy of the conversation history. */
  getMessages(): Message[] {
    this.assertAlive('read messages');
    return structuredClone(this.history);
  }

  /** Every configured server, connected or not. A cached tool list is never shown as connected. */
  getMcpServers(): McpServerView[] {
    this.assertAlive('list MCP servers');
    return this.loaded.configured.map((s) => this.view(s));
  }

  private view(entry: FunnelServer): McpServerView {
    const server = entry.server;
    const record = entry.blockedReason ? undefined : this.pool.get(server.name);
    const v: McpServerView = {
      name: server.name,
      source: server.source,
      status: entry.blockedReason ? 'disabled' : (record?.status ?? 'disconnected'),
      toolCount: 0,
      tools: [],
      fromCache: false,
      manuallyDisconnected: record?.manuallyDisconnected ?? false,
      config: displayServer(server),
    };
    if (server.file !== undefined) v.file = server.file;
    if (entry.disabledReason) v.disabledReason = entry.disabledReason;
    // Switched off on purpose (config, local switch) is listed as disabled quietly; refused by the host is an error.
    if (entry.disabledReason === 'not-allowed' && entry.blockedReason) {
      v.error = { code: 'NOT_ALLOWED', message: entry.blockedReason };
    } else if (record?.error) {
      v.error = { code: record.error.code, message: record.error.message };
      if (record.error.stderrTail) v.error.stderrTail = record.error.stderrTail;
    }
    if (record?.lastConnectedAt !== undefined) v.lastConnectedAt = record.lastConnectedAt;
    const live = record && (record.status === 'connected' || record.status === 'reconnecting');
    if (live) {
      v.tools = record.tools.map((t) => {
        const tool: McpServerView['tools'][number] = { name: t.name, inputSchema: t.inputSchema };
        if (t.description !== undefined) tool.description = t.description;
        return tool;
      });
      if (record.instructions !== undefined) v.instructions = record.instructions;
    } else {
      const snap = this.snapshots.get(server.name);
      if (snap && snap.fingerprint === server.fingerprint) {
        v.tools = snap.tools.map((t) => ({ ...t }));
        v.fromCache = true;
        if (v.lastConnectedAt === undefined) v.lastConnectedAt = snap.lastConnectedAt;
      }
    }
    v.toolCount = v.tools.length;
    return v;
  }

  private entry(name: string): FunnelServer {
    const e = this.loaded.configured.find((s) => s.server.name === name);
    if (!e) {
      const names = this.loaded.configured.map((s) => s.server.name);
      throw new AgentError(
        'UNKNOWN_SERVER',
        `No MCP server named "${name}" is configured${names.length ? ` (configured: ${names.join(', ')})` : ''}.`,
      );
    }
    return e;
  }

  /** Dial a server now (retry a failed one, undo a manual disconnect). Settles with the new view, error included. */
  async connectMcpServer(name: string): Promise<McpServerView> {
    this.assertAlive(`connect "${name}"`);
    const e = this.entry(name);
    if (!e.blockedReason) await this.pool.connect(name);
    this.assertAlive(`connect "${name}"`);
    // A first successful connection is what the snapshot cache shows while disconnected later.
    await this.refreshCache();
    return this.view(e);
  }

  /**
   * Sign in to a remote server that needs OAuth (status `needs-auth`) through
   * the pool's `authorize` (the host shows `openUrl`'s URL; the pool never
   * opens a browser), then dial it. Rejects as the pool does (`AUTH_REQUIRED`).
   */
  async authorizeMcpServer(name: string, opts: AuthorizeOptions): Promise<McpServerView> {
    this.assertAlive(`sign in to "${name}"`);
    const e = this.entry(name);
    if (e.blockedReason) return this.view(e);
    await this.pool.authorize(name, opts);
    this.assertAlive(`sign in to "${name}"`);
    await this.refreshCache();
    return this.view(e);
  }

  /** Disconnect by hand; it stays disconnected (later turns do not dial it) until `connectMcpServer`. */
  async disconnectMcpServer(name: string): Promise<McpServerView> {
    this.assertAlive(`disconnect "${name}"`);
    const e = this.entry(name);
    if (!e.blockedReason) await this.pool.disconnect(name);
    return this.view(e);
  }

  /** Read the configuration again and apply it: changed servers restart, removed ones close, new ones wait for the next turn. */
  async reloadMcpConfig(): Promise<void> {
    this.assertAlive('reload the MCP config');
    const warnings: AgentWarning[] = [];
    const loaded = await loadAndGate(this.options, this.home, (w) => warnings.push(w));
    this.assertAlive('reload the MCP config');
    for (const w of warnings) this.warn(w);
    this.loaded = loaded;
    await this.pool.update(loaded.configured.filter((s) => !s.blockedReason).map((s) => s.server));
    this.changed();
  }

  /**
   * Replace the history (compaction, rewind). The next turn's instructions
   * delta re-announces what the new history no longer carries.
   */
  replaceHistory(messages: readonly Message[]): void {
    this.assertAlive('replace the history');
    if (this.turn) {
      throw new AgentError(
        'TURN_IN_PROGRESS',
        'Cannot replace the history while a turn runs; wait for it to end.',
      );
    }
    this.history.splice(0, this.history.length, ...structuredClone([...messages]));
    this.persisted = 0;
    this.needsRewrite = true;
  }

  /** Run one turn. Rejects with `TURN_IN_PROGRESS` while another turn of this agent runs. */
  sendMessage(text: string, opts: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    if (this.destroyed) {
      return Promise.reject(
        new AgentError(
          'AGENT_DESTROYED',
          'The agent was destroyed; cannot send a message. Create a new agent.',
        ),
      );
    }
    if (this.turn) {
      return Promise.reject(
        new AgentError('TURN_IN_PROGRESS', 'A turn is already running on this agent; wait for it to end.'),
      );
    }
    const p = this.runTurn(text, opts.signal).finally(() => {
      this.turn = undefined;
    });
    this.turn = p;
    return p;
  }

  private async runTurn(text: string, userSignal?: AbortSignal): Promise<TurnResult> {
    const signal = userSignal ? AbortSignal.any([userSignal, this.lifetime.signal]) : this.lifetime.signal;
    this.guard.startTurn();
    let result: TurnResult;
    try {
      result = await runTurn(
        {
          pool: this.pool,
          model: this.options.model,
          system: this.options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
          chooseExposure: (visible) => this.chooseExposure(visible),
          serverStatuses: () => this.serverStatuses(),
          funnel: this.funnel,
          servers: () => this.loaded.configured,
          rules: () => this.options.permissions,
          builtins: this.builtinList.map((b) => b.declaration),
          history: this.history,
          maxToolRounds: this.options.maxToolRounds ?? 25,
          instructionsMaxChars: this.options.instructionsMaxChars,
          onMessage: (m) => this.emitter.emit('message', m),
          onModelEvent: (e) => this.emitter.emit('modelEvent', e),
          signal,
        },
        text,
      );
    } finally {
      // (7) Save what this turn added, even when it failed (not after destroy: destroy saves).
      if (!this.destroyed) await this.save();
    }
    if (this.destroyed) throw new AgentError('AGENT_DESTROYED', 'The agent was destroyed during the turn.');
    // (8) Refresh the tool snapshot cache for servers whose tools changed.
    await this.refreshCache();
    this.emitter.emit('turnEnd', result);
    return result;
  }

  /** The exposure of this turn (re-decided every turn). */
  private chooseExposure(visible: readonly LiveTool[]): Exposure {
    const rules = this.options.permissions;
    const kind = decideExposure({
      toolMode: this.options.toolMode ?? 'auto',
      enableExec: this.options.enableExec ?? true,
      execDenied: matchRules(rules, 'Exec').kind === 'deny',
      visibleToolCount: visible.length,
    });
    return this.exposures[kind];
  }

  private serverStatuses(): ExposureServerStatus[] {
    return this.loaded.configured.map((s) => {
      const v = this.view(s);
      const out: ExposureServerStatus = {
        name: v.name,
        status: v.status,
        toolCount: v.fromCache ? 0 : v.toolCount,
      };
      if (v.error) out.error = v.error.message;
      return out;
    });
  }

  /** Persist unsaved messages. A failure is a warning; it never throws. */
  private async save(): Promise<void> {
    try {
      if (this.needsRewrite) {
        const snapshot = [...this.history];
        await this.store.rewrite(this.workdir, this.sessionId, snapshot);
        this.needsRewrite = false;
        this.persisted = snapshot.length;
      } else if (this.persisted < this.history.length) {
        const fresh = this.history.slice(this.persisted);
        await this.store.append(this.workdir, this.sessionId, fresh);
        this.persisted += fresh.length;
      }
    } catch (error) {
      this.warn({
        code: 'SESSION_SAVE_FAILED',
        message: `Saving session ${this.sessionId} failed: ${(error as Error)?.message ?? String(error)}`,
      });
    }
  }

  /** Refresh the tool snapshot cache; runs are serialized (a change event and a turn end never write at once). Never rejects. */
  private refreshCache(): Promise<void> {
    const run = this.cacheWrites
      .then(() => this.writeCache())
      .catch((error: unknown) =>
        this.warn({
          code: 'CACHE_WRITE_FAILED',
          message: `Refreshing the tool cache failed: ${(error as Error)?.message ?? String(error)}`,
        }),
      );
    this.cacheWrites = run;
    return run;
  }

  private async writeCache(): Promise<void> {
    if (!this.cache || this.destroyed) return;
    const entries: Parameters<ToolCache['write']>[1] = [];
    for (const { server, blockedReason } of this.loaded.configured) {
      if (blockedReason) continue;
      const r = this.pool.get(server.name);
      if (r?.status !== 'connected') continue;
      // The pool keeps one tools array per listing: the same array means nothing to compare.
      const seen = this.seenTools.get(server.name);
      if (seen && seen.tools === r.tools && seen.fingerprint === server.fingerprint) continue;
      this.seenTools.set(server.name, { tools: r.tools, fingerprint: server.fingerprint });
      const tools = r.tools.map((t) => {
        const tool: ToolSnapshot['tools'][number] = { name: t.name };
        if (t.description !== undefined) tool.description = t.description;
        if (t.inputSchema !== undefined) tool.inputSchema = t.inputSchema as object;
        return tool;
      });
      const key = stableHash([server.fingerprint, tools, r.instructions ?? null]);
      if (this.written.get(server.name) === key) continue;
      const input: Parameters<ToolCache['write']>[1][number] = {
        server: server.name,
        fingerprint: server.fingerprint,
        tools,
        lastConnectedAt: r.lastConnectedAt ?? this.options.now?.() ?? Date.now(),
      };
      if (r.instructions !== undefined) input.instructions = r.instructions;
      entries.push(input);
      this.written.set(server.name, key);
      this.snapshots.set(server.name, { ...input, workdir: this.workdir });
    }
    if (entries.length === 0) return;
    try {
      await this.cache.write(
        this.workdir,
        entries,
        this.loaded.configured.map((s) => s.server.name),
      );
    } catch (error) {
      this.warn({
        code: 'CACHE_WRITE_FAILED',
        message: `Writing the tool cache failed: ${(error as Error)?.message ?? String(error)}`,
      });
    }
  }

  /**
   * Mark destroyed (every later call rejects with `AGENT_DESTROYED`, nothing
   * can start a process), abort the running turn, save the transcript (a
   * failure is a `warning`), then release the pool. Idempotent.
   */
  destroy(): Promise<void> {
    if (this.destroying) return this.destroying;
    this.destroyed = true;
    // Observed now, so a turn that rejects because of this destroy is never an unhandled rejection.
    const turn = this.turn?.catch(() => undefined);
    this.destroying = (async () => {
      this.lifetime.abort(new AgentError('AGENT_DESTROYED', 'The agent was destroyed during the turn.'));
      try {
        await this.save();
      } catch {
        // save() reports its own failures
      }
      this.unsubscribePool();
      try {
        // No cache write lands after destroy() resolves; a slow one never holds up the pool's teardown.
        await Promise.all([this.pool.destroy(), this.exposures.exec.close(), this.cacheWrites]);
      } finally {
        await turn;
        this.emitter.clear();
      }
    })();
    return this.destroying;
  }

  /** Same as {@link destroy}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }
}
