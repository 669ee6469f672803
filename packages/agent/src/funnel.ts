/**
 * The ONE tool funnel. Every tool call, whatever the exposure mode (a flat
 * call, a gateway `call`, a nested call from Exec), goes through
 * {@link Funnel.call}: identity -> permission rules -> approval -> the call
 * (pool, or a built-in) -> output guard -> result. Nothing here throws for a
 * refused or failed call: the model gets a result it can read.
 */
import {
  isToolAutoApproved,
  matchToolGlob,
  type ResolvedServer,
  serverIdentity,
  toolReadOnlyOverride,
} from '@wave/mcp-config';
import { isMcpPoolError, type McpPoolApi, type ServerRecord } from '@wave/mcp-pool';
import type { BuiltinContext, BuiltinTool } from './builtins/types';
import { fullToolName, parseFullToolName, toolIdentity } from './exposure/flat';
import type { ToolOutcome } from './exposure/types';
import type { OutputGuard } from './guard/output-guard';
import {
  type AskReason,
  decidePermission,
  matchRules,
  type PermissionRules,
  type RuleMatch,
  toolDefinitionHash,
} from './permissions';

/** What a tool call returns from the pool. */
export type CallToolResult = Awaited<ReturnType<McpPoolApi['callTool']>>;
/** A tool as a server lists it. */
export type McpTool = ServerRecord['tools'][number];

/** The exact server and tool behind a full name, when the caller knows it. */
export interface ToolHint {
  server: string;
  tool: string;
}

/**
 * A built-in as the funnel runs it: `readOnly` ones may run in parallel;
 * `unguarded` ones (`ReadOutput`, whose pages are bounded already and must
 * not spill again) skip the output guard.
 */
export type FunnelBuiltin = BuiltinTool & { readOnly?: boolean; unguarded?: boolean };

/** What `canUseTool` is asked. */
export interface ApprovalRequest {
  /** The identity rules match: `mcp__<server>__<tool>` or a built-in's name. */
  fullName: string;
  /** Server name as configured (MCP tools). */
  server?: string;
  /** Tool name on the server, or the built-in's name. */
  tool: string;
  arguments: Record<string, unknown>;
  description?: string;
  /** Why the user is asked. */
  reason: AskReason;
  /**
   * `approveTools` globs a project file or plugin asked for. A hint to show
   * ("this project asks to auto-approve ..."), never consent.
   */
  requestedApprovals?: string[];
  signal?: AbortSignal;
}

/** The user's answer. `allow-always` is remembered for this exact name and tool definition. */
export type ApprovalAnswer = 'allow' | 'allow-always' | 'deny';

/** A configured server as the funnel sees it. */
export interface FunnelServer {
  server: ResolvedServer;
  /** Set when the host refused it (`isServerAllowed`) or it is switched off: why, for the model. */
  blockedReason?: string;
  /** Why it is off: `config` (`"disabled": true` in its file), `local` (turned off on this machine), `not-allowed` (the host's gate). */
  disabledReason?: 'config' | 'local' | 'not-allowed';
}

/** Everything the funnel needs; the agent provides it. */
export interface FunnelDeps {
  pool: McpPoolApi;
  /** The configured servers now. */
  servers(): readonly FunnelServer[];
  /** Built-in tools by name. One that does not always ask runs unless a rule denies or asks. */
  builtins: ReadonlyMap<string, FunnelBuiltin>;
  builtinContext(signal?: AbortSignal): BuiltinContext;
  rules(): PermissionRules | undefined;
  canUseTool?: ((request: ApprovalRequest) => Promise<ApprovalAnswer>) | undefined;
  /** Full name -> definition hash of an earlier "allow always". */
  remembered: Map<string, string>;
  guard: OutputGuard;
  supportsVision: boolean;
  /**
   * Glob on full name -> read-only (the host's `readOnlyTools` option). Wins over
   * the server's `readOnlyTools` in its config, which wins over the tool's own `readOnlyHint`.
   */
  readOnlyOverrides?: Readonly<Record<string, boolean>> | undefined;
  onApprovalRequest?(request: ApprovalRequest): void;
  onAllowAlways?(event: { fullName: string; definitionHash: string }): void;
  onToolCall?(event: {
    callId?: string;
    /** The MCP server that took the call (MCP tools that resolved). */
    server?: string;
    fullName: string;
    arguments: Record<string, unknown>;
    outcome: ToolOutcome;
    ms: number;
  }): void;
  now?(): number;
}

/** A resolved call target. */
type Target =
  | { kind: 'builtin'; tool: FunnelBuiltin }
  | { kind: 'mcp'; entry: FunnelServer; record: ServerRecord; tool: McpTool; toolName: string }
  | { kind: 'unavailable'; message: string };

/** Why a server cannot take calls now, and what the user can do. Pure. */
export function unavailableReason(record: ServerRecord | undefined, entry: FunnelServer): string {
  const name = entry.server.name;
  if (entry.blockedReason) return entry.blockedReason;
  if (!record)
    return `MCP server "${name}" is not part of this session. Ask the user to reload the MCP configuration.`;
  if (record.manuallyDisconnected) {
    return `MCP server "${name}" was disconnected by the user. Ask the user to reconnect it (e.g. /mcp connect ${name}) if you need it.`;
  }
  switch (record.status) {
    case 'error':
      return `MCP server "${name}" failed: ${record.error?.message ?? 'unknown error'} It is not retried automatically; the user can fix its configuration and reconnect it.`;
    case 'needs-auth':
      return `MCP server "${name}" needs the user to sign in (OAuth) before its tools work. Ask the user to sign in (e.g. wave mcp login ${name}, or "Sign in" in the MCP settings).`;
    case 'connecting':
      return `MCP server "${name}" is still connecting. Try again in a moment.`;
    case 'reconnecting':
      return `MCP server "${name}" lost its connection and is reconnecting. Try again in a moment.`;
    default:
      return `MCP server "${name}" is not connected. The user can connect it (e.g. /mcp connect ${name}).`;
  }
}

function textOutcome(text: string, isError: boolean, blocked = false): ToolOutcome {
  return blocked ? { content: text, isError, blocked } : { content: text, isError };
}

function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) return String((error as Error).message);
  return String(error);
}

/** The execution funnel of one agent. */
export class Funnel {
  private readonly hashes = new WeakMap<object, string>();
  private rulesSeen: PermissionRules | undefined;
  private readonly matches = new Map<string, RuleMatch>();
  private readonly approvals = new WeakMap<ResolvedServer, Map<string, boolean>>();
  private readonly identities = new WeakMap<ResolvedServer, string>();

  constructor(private readonly deps: FunnelDeps) {}

  private ruleMatch(fullName: string): RuleMatch {
    const rules = this.deps.rules();
    if (rules !== this.rulesSeen) {
      this.rulesSeen = rules;
      this.matches.clear();
    }
    let m = this.matches.get(fullName);
    if (m === undefined) {
      m = matchRules(rules, fullName);
      this.matches.set(fullName, m);
    }
    return m;
  }

  private identity(server: ResolvedServer): string {
    let id = this.identities.get(server);
    if (id === undefined) {
      id = serverIdentity(server.name);
      this.identities.set(server, id);
    }
    return id;
  }

  private autoApproved(server: ResolvedServer, tool: string): boolean {
    let byTool = this.approvals.get(server);
    if (!byTool) {
      byTool = new Map();
      this.approvals.set(server, byTool);
    }
    let v = byTool.get(tool);
    if (v === undefined) {
      v = isToolAutoApproved(server, tool);
      byTool.set(tool, v);
    }
    return v;
  }

  /** Find what a full name refers to right now. */
  private resolve(fullName: string, hint?: ToolHint): Target {
    const builtin = this.deps.builtins.get(fullName);
    if (builtin) return { kind: 'builtin', tool: builtin };
    if (hint) {
      // The exposure knows exactly which server and tool it declared (names that collide
      // after identity mapping get a suffixed full name, which cannot be parsed back).
      const entry = this.deps.servers().find((s) => s.server.name === hint.server);
      const record = entry && !entry.blockedReason ? this.deps.pool.get(hint.server) : undefined;
      const tool = record?.tools.find((t) => t.name === hint.tool);
      if (entry && record && tool && (record.status === 'connected' || record.status === 'reconnecting')) {
        return { kind: 'mcp', entry, record, tool, toolName: tool.name };
      }
    }
    const parsed = parseFullToolName(fullName);
    if (!parsed) {
      return {
        kind: 'unavailable',
        message: `Unknown tool "${fullName}". MCP tools are named mcp__<server>__<tool>; use one of the declared tools.`,
      };
    }
    const entry = this.deps.servers().find((s) => this.identity(s.server) === parsed.server);
    if (!entry) {
      return {
        kind: 'unavailable',
        message: `Tool ${fullName} is unavailable because no MCP server "${parsed.server}" is configured. The user can add it to the MCP configuration.`,
      };
    }
    const record = entry.blockedReason ? undefined : this.deps.pool.get(entry.server.name);
    const live = record && (record.status === 'connected' || record.status === 'reconnecting');
    if (!record || !live || entry.blockedReason) {
      return {
        kind: 'unavailable',
        message: `Tool ${fullName} is unavailable because ${unavailableReason(record, entry)}`,
      };
    }
    const tool =
      record.tools.find((t) => t.name === parsed.tool) ??
      record.tools.find(
        (t) => fullToolName(record.name, t.name) === fullName || toolIdentity(t.name) === parsed.tool,
      );
    if (!tool) {
      return {
        kind: 'unavailable',
        message: `Tool ${fullName} is unavailable because MCP server "${entry.server.name}" has no tool "${parsed.tool}" now (it lists: ${record.tools.map((t) => t.name).join(', ') || 'nothing'}).`,
      };
    }
    return { kind: 'mcp', entry, record, tool, toolName: tool.name };
  }

  /**
   * May this call run in parallel with other read-only calls? First that
   * decides: the host's `readOnlyTools` option (full names), the server's
   * `readOnlyTools` in its config (names on the server), the tool's own `readOnlyHint`.
   */
  isReadOnly(fullName: string, hint?: ToolHint): boolean {
    const builtin = this.deps.builtins.get(fullName);
    if (builtin?.readOnly) return true;
    const overrides = this.deps.readOnlyOverrides;
    if (overrides) {
      for (const [glob, value] of Object.entries(overrides)) {
        if (matchToolGlob(glob, fullName)) return value;
      }
    }
    const t = this.resolve(fullName, hint);
    if (t.kind !== 'mcp') return false;
    const configured = toolReadOnlyOverride(t.entry.server, t.toolName);
    if (configured !== undefined) return configured;
    return (t.tool.annotations as { readOnlyHint?: boolean } | undefined)?.readOnlyHint === true;
  }

  /** Run one call through the funnel. Never rejects. */
  async call(
    fullName: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; callId?: string; hint?: ToolHint } = {},
  ): Promise<ToolOutcome> {
    const started = this.deps.now?.() ?? Date.now();
    const trace: { server?: string } = {};
    let outcome: ToolOutcome;
    try {
      outcome = await this.run(fullName, args, trace, opts.signal, opts.hint);
    } catch (error) {
      outcome = textOutcome(`Tool ${fullName} failed: ${errorText(error)}`, true);
    }
    const ms = (this.deps.now?.() ?? Date.now()) - started;
    const event: Parameters<NonNullable<FunnelDeps['onToolCall']>>[0] = {
      fullName,
      arguments: args,
      outcome,
      ms,
    };
    if (opts.callId !== undefined) event.callId = opts.callId;
    if (trace.server !== undefined) event.server = trace.server;
    this.deps.onToolCall?.(event);
    return outcome;
  }

  private async run(
    fullName: string,
    args: Record<string, unknown>,
    trace: { server?: string },
    signal?: AbortSignal,
    hint?: ToolHint,
  ): Promise<ToolOutcome> {
    const target = this.resolve(fullName, hint);
    if (target.kind === 'unavailable') return textOutcome(target.message, true, true);
    if (target.kind === 'mcp') trace.server = target.entry.server.name;

    // Permission rules, then approval. Rule matches, trusted approveTools and
    // definition hashes are cached: they are pure in their (stable) inputs.
    const definitionSource: object = target.kind === 'builtin' ? target.tool.declaration : target.tool;
    const definitionHash = () => {
      let h = this.hashes.get(definitionSource);
      if (h === undefined) {
        h = toolDefinitionHash(
          target.kind === 'builtin'
            ? {
                name: target.tool.declaration.name,
                description: target.tool.declaration.description,
                inputSchema: target.tool.declaration.inputSchema,
              }
            : { name: fullName, description: target.tool.description, inputSchema: target.tool.inputSchema },
        );
        this.hashes.set(definitionSource, h);
      }
      return h;
    };
    const alwaysAsk = target.kind === 'builtin' && target.tool.alwaysAsk;
    const rememberedHash = alwaysAsk ? undefined : this.deps.remembered.get(fullName);
    const decision = decidePermission({
      fullName,
      match: this.ruleMatch(fullName),
      alwaysAsk,
      trusted: target.kind === 'builtin' && !alwaysAsk,
      autoApproved: target.kind === 'mcp' && this.autoApproved(target.entry.server, target.toolName),
      definitionHash: rememberedHash === undefined ? undefined : definitionHash(),
      rememberedHash,
    });
    if (decision.kind === 'deny') return textOutcome(decision.reason, true, true);
    if (decision.kind === 'ask') {
      const request: ApprovalRequest = {
        fullName,
        tool: target.kind === 'builtin' ? target.tool.declaration.name : target.toolName,
        arguments: args,
        reason: decision.reason,
      };
      if (target.kind === 'mcp') {
        request.server = target.entry.server.name;
        if (target.tool.description !== undefined) request.description = target.tool.description;
        const hint = target.entry.server.requestedApprovals;
        if (hint && hint.length > 0) request.requestedApprovals = [...hint];
      } else {
        request.description = target.tool.declaration.description;
      }
      if (signal) request.signal = signal;
      this.deps.onApprovalRequest?.(request);
      const ask = this.deps.canUseTool;
      if (!ask) {
        return textOutcome(
          `Permission denied: ${fullName} needs approval and this session has no way to ask the user (no canUseTool). The user can allow it with a permission rule.`,
          true,
          true,
        );
      }
      let answer: ApprovalAnswer;
      try {
        answer = await ask(request);
      } catch (error) {
        return textOutcome(
          `Permission denied: asking the user about ${fullName} failed (${errorText(error)}).`,
          true,
          true,
        );
      }
      if (answer !== 'allow' && answer !== 'allow-always') {
        return textOutcome(
          `Permission denied: the user did not allow ${fullName}. Do not retry it unless the user asks.`,
          true,
          true,
        );
      }
      if (answer === 'allow-always' && !(target.kind === 'builtin' && target.tool.alwaysAsk)) {
        const hash = definitionHash();
        this.deps.remembered.set(fullName, hash);
        this.deps.onAllowAlways?.({ fullName, definitionHash: hash });
      }
    }
    if (signal?.aborted)
      return textOutcome(`Tool ${fullName} was not run: the turn was aborted.`, true, true);

    if (target.kind === 'builtin') {
      const r = await target.tool.run(args, this.deps.builtinContext(signal));
      if (target.tool.unguarded) return textOutcome(r.content, r.isError === true);
      // A built-in's text is bounded like any tool's: cut, spilled, readable with ReadOutput.
      return this.deps.guard.guard(
        { content: [{ type: 'text', text: r.content }], isError: r.isError === true },
        { fullName, supportsVision: this.deps.supportsVision },
      );
    }
    let result: CallToolResult;
    try {
      result = await this.deps.pool.callTool(
        target.entry.server.name,
        target.toolName,
        args,
        signal ? { signal } : {},
      );
    } catch (error) {
      if (isMcpPoolError(error, 'SERVER_NOT_CONNECTED') || isMcpPoolError(error, 'POOL_DESTROYED')) {
        const record = this.deps.pool.get(target.entry.server.name);
        return textOutcome(
          `Tool ${fullName} is unavailable because ${unavailableReason(record, target.entry)}`,
          true,
          true,
        );
      }
      return textOutcome(`Tool ${fullName} failed: ${errorText(error)}`, true);
    }
    return this.deps.guard.guard(result, { fullName, supportsVision: this.deps.supportsVision });
  }
}
