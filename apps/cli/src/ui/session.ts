/**
 * The state behind `wave ui`: one AgentHost with one agent, the messages,
 * the running turn, pending approvals and the MCP server list with a
 * version. The HTTP layer (server.ts) only translates requests to calls here.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type {
  Agent,
  AgentHost,
  ApprovalAnswer,
  ApprovalRequest,
  McpServerView,
  Message,
  ModelAdapter,
} from '@wave/agent';
import {
  isLocallyDisabled,
  isMcpConfigError,
  isServerTrusted,
  type LocalState,
  type ResolvedServer,
  removeServer,
  trustServer,
} from '@wave/mcp-config';
import { createModel, modelSettingsFor } from '../agent-session';
import { type GlobalOptions, loadWorld, type World } from '../context';
import { CliError, type Io } from '../io';
import type { ModelFlags } from '../model-settings';
import type {
  McpSnapshot,
  UiApproval,
  UiElicitation,
  UiEvents,
  UiMessage,
  UiServer,
  UiState,
} from './api-types';

/** An API failure with an HTTP status and a stable code. */
export class UiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'UiError';
  }
}

/** Flags of `wave ui` that shape the agent. */
export interface UiAgentFlags extends ModelFlags {
  /** Trust the project and plugin servers as configured now. */
  trust?: boolean;
}

type Listener = <K extends keyof UiEvents>(event: K, data: UiEvents[K]) => void;

interface Pending {
  view: UiApproval;
  resolve(answer: ApprovalAnswer): void;
}

/** What the user answers to a form. */
export interface FormAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

interface PendingForm {
  view: UiElicitation;
  resolve(answer: FormAnswer): void;
}

/** Longest config file the read-only panel shows. */
const MAX_FILE_BYTES = 256 * 1024;
/** A connect or disconnect that takes longer than this ends with an error toast. */
const ACTION_TIMEOUT_MS = 60_000;

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : `[image ${b.mimeType}]`)).join('');
}

/** The page's form of a message; undefined for `isMeta` notices. Pure. */
export function uiMessage(m: Message, id: number): UiMessage | undefined {
  if (m.role === 'user') {
    if (m.isMeta) return undefined;
    return { id, role: 'user', text: textOf(m.content) };
  }
  if (m.role === 'assistant') {
    const out: UiMessage = { id, role: 'assistant', text: m.content };
    if (m.toolCalls && m.toolCalls.length > 0)
      out.toolCalls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
    return out;
  }
  const out: UiMessage = {
    id,
    role: 'tool',
    text: textOf(m.content),
    toolCallId: m.toolCallId,
    name: m.name,
  };
  if (m.isError) out.isError = true;
  return out;
}

/** The settings page's form of a server. Pure. */
export function uiServer(v: McpServerView, local: LocalState, resolved?: ResolvedServer): UiServer {
  const c = v.config;
  const target = c.url ?? [c.command ?? '', ...(c.args ?? [])].join(' ').trim();
  const out: UiServer = {
    name: v.name,
    source: v.source,
    transport: c.transport,
    target,
    status: v.status,
    toolCount: v.toolCount,
    fromCache: v.fromCache,
    readOnly: v.source === 'plugin' || v.source === 'constructor',
  };
  if (resolved && isLocallyDisabled(local, resolved)) {
    out.status = 'disabled';
    out.error = `Switched off on this machine (wave mcp enable ${v.name} turns it on).`;
  } else if (v.error?.code === 'NOT_ALLOWED') {
    out.error = `Not trusted on this machine: run "wave mcp trust ${v.name}" or start wave ui with --trust.`;
  } else if (v.error) {
    out.error = v.error.message;
  }
  if (v.lastConnectedAt !== undefined) out.lastConnectedAt = v.lastConnectedAt;
  if (v.file !== undefined) out.file = v.file;
  if (c.plugin !== undefined) out.plugin = c.plugin;
  return out;
}

/** The model when none is configured: every call fails with how to configure one. */
export function unconfiguredModel(howTo: string): ModelAdapter {
  return {
    name: 'none',
    async generate() {
      throw new UiError('NO_MODEL', howTo, 400);
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UiError('TIMEOUT', `${what} did not finish within ${ms / 1000} s.`, 504)),
      ms,
    );
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** One conversation and its MCP servers, for the web page. */
export class UiSession {
  private readonly listeners = new Set<Listener>();
  private readonly pending = new Map<string, Pending>();
  private readonly forms = new Map<string, PendingForm>();
  /** Sign-ins in progress, by server name. */
  private readonly signIns = new Map<string, AbortController>();
  private version = 0;
  private busy = false;
  private streaming = '';
  private abort: AbortController | undefined;
  private turn: Promise<void> | undefined;
  private nextId: number;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly host: AgentHost,
    private readonly agent: Agent,
    private readonly world: World,
    readonly modelName: string,
    /** Set when no model is configured: how to configure one (sent as the error of every message). */
    private readonly noModel?: string,
  ) {
    this.nextId = agent.getMessages().length;
    agent.on('message', (m) => {
      const ui = uiMessage(m, this.nextId++);
      if (m.role === 'assistant') this.streaming = '';
      if (ui) this.emit('message', ui);
    });
    agent.on('modelEvent', (e) => {
      if (e.type !== 'text-delta') return;
      this.streaming += e.text;
      this.emit('delta', { text: e.text });
    });
    agent.on('mcpServersChanged', () => this.emit('mcp', this.mcpSnapshot()));
    agent.on('warning', () => undefined);
  }

  /** Read the config, pick the model, create the host and its agent. Starts no MCP process. */
  static async create(io: Io, globals: GlobalOptions, flags: UiAgentFlags): Promise<UiSession> {
    const world = await loadWorld(io, globals);
    // Without a model the settings page still works; sending a message says how to configure one.
    let model: ModelAdapter;
    let modelName: string;
    let noModel: string | undefined;
    try {
      const settings = await modelSettingsFor(io, world.home, flags);
      model = await createModel(settings);
      modelName = `${settings.provider}:${settings.model}`;
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      model = unconfiguredModel(err.message);
      modelName = 'no model';
      noModel = err.message;
      io.err(`wave ui: ${err.message}\n`);
    }
    const { AgentHost } = await import('@wave/agent');
    let session: UiSession | undefined;
    const host = AgentHost.create({
      home: world.home,
      poolOptions: {
        onElicitation: (server, request, ctx) =>
          session ? session.elicit(server, request, ctx.signal) : { action: 'cancel' },
      },
    });
    const isServerAllowed = async (server: ResolvedServer): Promise<boolean> => {
      if (isLocallyDisabled(world.local, server)) return false;
      if (isServerTrusted(world.local, server)) return true;
      if (!flags.trust) return false;
      world.local = await trustServer(world.home, server);
      return true;
    };
    try {
      const agent = await host.create('ui', {
        workdir: world.workdir,
        home: world.home,
        model,
        env: io.env,
        plugins: world.plugins,
        isServerAllowed,
        canUseTool: (req) => (session as UiSession).ask(req),
      });
      session = new UiSession(host, agent, world, modelName, noModel);
      return session;
    } catch (err) {
      await host.close();
      throw err;
    }
  }

  /** Receive every event; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit<K extends keyof UiEvents>(event: K, data: UiEvents[K]): void {
    for (const l of this.listeners) l(event, data);
  }

  /** The server list now, with a fresh version. */
  mcpSnapshot(): McpSnapshot {
    const resolved = new Map(this.world.servers.map((s) => [s.name, s]));
    this.version += 1;
    return {
      version: this.version,
      servers: this.agent.getMcpServers().map((v) => uiServer(v, this.world.local, resolved.get(v.name))),
      files: this.world.files,
      workdir: this.world.workdir,
      project: basename(this.world.workdir),
    };
  }

  state(): UiState {
    const messages: UiMessage[] = [];
    this.agent.getMessages().forEach((m, i) => {
      const ui = uiMessage(m, i);
      if (ui) messages.push(ui);
    });
    return {
      sessionId: this.agent.sessionId,
      workdir: this.world.workdir,
      model: this.modelName,
      busy: this.busy,
      streaming: this.streaming,
      messages,
      approvals: this.approvals(),
      elicitations: [...this.forms.values()].map((f) => f.view),
      mcp: this.mcpSnapshot(),
    };
  }

  private approvals(): UiApproval[] {
    return [...this.pending.values()].map((p) => p.view);
  }

  private ask(req: ApprovalRequest): Promise<ApprovalAnswer> {
    const id = randomUUID();
    const view: UiApproval = {
      id,
      fullName: req.fullName,
      tool: req.tool,
      arguments: req.arguments,
      reason: String(req.reason),
    };
    if (req.server !== undefined) view.server = req.server;
    if (req.description !== undefined) view.description = req.description;
    return new Promise<ApprovalAnswer>((resolve) => {
      const done = (answer: ApprovalAnswer) => {
        if (!this.pending.delete(id)) return;
        req.signal?.removeEventListener('abort', onAbort);
        this.emit('approvals', { approvals: this.approvals() });
        resolve(answer);
      };
      const onAbort = () => done('deny');
      this.pending.set(id, { view, resolve: done });
      if (req.signal?.aborted) return done('deny');
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.emit('approvals', { approvals: this.approvals() });
    });
  }

  /** A server asks for a form: shown on the page until answered, cancelled by the server, or closed. */
  elicit(
    server: string,
    request: { message: string; requestedSchema?: unknown },
    signal?: AbortSignal,
  ): Promise<FormAnswer> {
    const id = randomUUID();
    const view: UiElicitation = {
      id,
      server,
      message: request.message,
      schema: (request.requestedSchema ?? { type: 'object', properties: {} }) as UiElicitation['schema'],
    };
    const list = () => ({ elicitations: [...this.forms.values()].map((f) => f.view) });
    return new Promise<FormAnswer>((resolve) => {
      const done = (answer: FormAnswer) => {
        if (!this.forms.delete(id)) return;
        signal?.removeEventListener('abort', onAbort);
        this.emit('elicitations', list());
        resolve(answer);
      };
      const onAbort = () => done({ action: 'cancel' });
      this.forms.set(id, { view, resolve: done });
      if (signal?.aborted) return done({ action: 'cancel' });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.emit('elicitations', list());
    });
  }

  /** Answer a pending form. */
  answerForm(id: string, body: Record<string, unknown>): void {
    const action = body.action;
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel')
      throw new UiError('BAD_REQUEST', '"action" must be "accept", "decline" or "cancel".', 400);
    const f = this.forms.get(id);
    if (!f) throw new UiError('NOT_FOUND', `No pending form "${id}" (already answered?).`, 404);
    const answer: FormAnswer = { action };
    if (action === 'accept') {
      const content = body.content;
      if (typeof content !== 'object' || content === null || Array.isArray(content))
        throw new UiError('BAD_REQUEST', '"content" must be an object of field values.', 400);
      answer.content = content as FormAnswer['content'];
    }
    f.resolve(answer);
  }

  /** Answer a pending approval. */
  answer(id: string, answer: string): void {
    if (answer !== 'allow' && answer !== 'allow-always' && answer !== 'deny')
      throw new UiError('BAD_REQUEST', '"answer" must be "allow", "allow-always" or "deny".', 400);
    const p = this.pending.get(id);
    if (!p) throw new UiError('NOT_FOUND', `No pending approval "${id}" (already answered?).`, 404);
    p.resolve(answer);
  }

  /** Start a turn; its messages arrive as events. */
  send(text: string): void {
    if (typeof text !== 'string' || text.trim() === '')
      throw new UiError('BAD_REQUEST', '"text" must be a non-empty string.', 400);
    if (this.closing) throw new UiError('CLOSED', 'wave ui is shutting down.', 503);
    if (this.busy) throw new UiError('BUSY', 'A turn is running; wait for it or stop it first.', 409);
    if (this.noModel !== undefined) {
      // No turn without a model: nothing is dialed, the page is told how to configure one.
      this.emit('busy', { busy: true });
      this.finish({ busy: false, error: this.noModel });
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    this.busy = true;
    this.streaming = '';
    this.emit('busy', { busy: true });
    this.turn = this.agent.sendMessage(text, { signal: abort.signal }).then(
      () => this.finish({ busy: false }),
      (err: unknown) =>
        this.finish(
          abort.signal.aborted
            ? { busy: false, stopped: true }
            : { busy: false, error: err instanceof Error ? err.message : String(err) },
        ),
    );
  }

  private finish(event: UiEvents['busy']): void {
    this.busy = false;
    this.abort = undefined;
    this.streaming = '';
    this.emit('busy', event);
  }

  /** Stop the running turn. Returns whether one was running. */
  stop(): boolean {
    if (!this.abort) return false;
    this.abort.abort(new UiError('STOPPED', 'Stopped by the user.', 409));
    return true;
  }

  private server(name: string): UiServer {
    const s = this.mcpSnapshot().servers.find((v) => v.name === name);
    if (!s) throw new UiError('UNKNOWN_SERVER', `No MCP server named "${name}" is configured.`, 404);
    return s;
  }

  /** Dial a server now; settles with the refreshed list, or throws a UiError. */
  async connect(name: string): Promise<McpSnapshot> {
    const s = this.server(name);
    if (s.status === 'disabled')
      throw new UiError('DISABLED', s.error ?? `"${name}" is switched off on this machine.`, 409);
    await withTimeout(
      this.agent.connectMcpServer(name).catch((err: unknown) => {
        throw new UiError('CONNECT_FAILED', err instanceof Error ? err.message : String(err), 502);
      }),
      ACTION_TIMEOUT_MS,
      `Connecting "${name}"`,
    );
    return this.mcpSnapshot();
  }

  /**
   * Start the OAuth sign-in of a `needs-auth` server: resolves with the
   * authorization URL for the page to open (the flow then goes on here; its
   * end is a `signIn` event). A second sign-in of the same server cancels the
   * first.
   */
  async signIn(name: string): Promise<{ url: string }> {
    const s = this.server(name);
    if (s.transport !== 'http' && s.transport !== 'sse')
      throw new UiError(
        'NOT_REMOTE',
        `"${name}" is a ${s.transport} server: only remote servers sign in.`,
        409,
      );
    this.signIns.get(name)?.abort(new UiError('SUPERSEDED', 'A new sign-in started.', 409));
    const abort = new AbortController();
    this.signIns.set(name, abort);
    let gotUrl: (url: string) => void = () => undefined;
    let shown = false;
    const url = new Promise<string>((resolve) => {
      gotUrl = resolve;
    });
    const openUrl = (u: string) => {
      shown = true;
      gotUrl(u);
    };
    const done = this.agent
      .authorizeMcpServer(name, { openUrl, signal: abort.signal })
      .then(
        () => this.emit('signIn', { server: name, ok: true }),
        (err: unknown) => {
          // Before the URL was shown, the failure is the answer to the request itself.
          if (shown && this.signIns.get(name) === abort)
            this.emit('signIn', {
              server: name,
              ok: false,
              error: err instanceof Error ? err.message : String(err),
            });
          throw err;
        },
      )
      .finally(() => {
        if (this.signIns.get(name) === abort) this.signIns.delete(name);
        this.emit('mcp', this.mcpSnapshot());
      });
    const first = await Promise.race([
      url.then((u) => ({ url: u })),
      done.then(
        () => ({ url: '' }),
        (err: unknown) => ({ error: err }),
      ),
    ]);
    done.catch(() => undefined);
    if ('error' in first)
      throw new UiError(
        'SIGN_IN_FAILED',
        first.error instanceof Error ? first.error.message : String(first.error),
        502,
      );
    return first;
  }

  /** Disconnect by hand; settles with the refreshed list, or throws a UiError. */
  async disconnect(name: string): Promise<McpSnapshot> {
    this.server(name);
    await withTimeout(
      this.agent.disconnectMcpServer(name).catch((err: unknown) => {
        throw new UiError('DISCONNECT_FAILED', err instanceof Error ? err.message : String(err), 502);
      }),
      ACTION_TIMEOUT_MS,
      `Disconnecting "${name}"`,
    );
    return this.mcpSnapshot();
  }

  /** Remove a user or project server from its file (not through the model), then reload. */
  async remove(name: string): Promise<McpSnapshot> {
    const s = this.server(name);
    if (s.readOnly || !s.file || (s.source !== 'user' && s.source !== 'project'))
      throw new UiError(
        'READ_ONLY',
        `"${name}" comes from ${s.plugin ? `plugin "${s.plugin}"` : s.source} and cannot be deleted here.`,
        409,
      );
    try {
      await removeServer(s.file, name, { source: s.source });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new UiError(
        isMcpConfigError(err) ? err.code : 'WRITE_FAILED',
        `Could not delete "${name}" from ${s.file}: ${message}`,
        500,
      );
    }
    const fresh = await loadWorld(this.world.io, { cwd: this.world.workdir });
    this.world.servers = fresh.servers;
    this.world.files = fresh.files;
    await this.agent.reloadMcpConfig();
    return this.mcpSnapshot();
  }

  /** The config file of a server, for the read-only panel (only files the server list names). */
  async configFile(name: string): Promise<{ path: string; content: string }> {
    const s = this.server(name);
    if (!s.file) throw new UiError('NO_FILE', `"${name}" is not defined in a config file.`, 404);
    let content: string;
    try {
      const buf = await readFile(s.file);
      content = buf.subarray(0, MAX_FILE_BYTES).toString('utf8');
    } catch (err) {
      throw new UiError('READ_FAILED', `Cannot read ${s.file}: ${(err as Error).message}`, 500);
    }
    return { path: s.file, content };
  }

  /** Stop the turn, deny pending approvals, destroy the agent and every MCP process. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      this.abort?.abort(new UiError('CLOSED', 'wave ui is shutting down.', 503));
      for (const a of this.signIns.values()) a.abort(new UiError('CLOSED', 'wave ui is shutting down.', 503));
      for (const p of [...this.pending.values()]) p.resolve('deny');
      for (const f of [...this.forms.values()]) f.resolve({ action: 'cancel' });
      await this.host.close();
      await this.turn?.catch(() => undefined);
      this.listeners.clear();
    })();
    return this.closing;
  }
}
