/**
 * One turn, in this order: (1) start the pending MCP dials (only if there
 * are any) while the turn prepares, await them just before declaring tools;
 * (2) append the instructions delta; (3) declare tools; (4) call the model;
 * (5) run each tool call through the funnel; (6) loop until the model stops
 * calling tools or the round limit is hit. Saving the transcript and
 * refreshing the tool cache are the caller's (steps 7 and 8).
 */
import { computeInstructionsDelta } from '@wave/mcp-instructions';
import type { McpPoolApi } from '@wave/mcp-pool';
import { AgentError } from './errors';
import { fullToolName } from './exposure/flat';
import type { Exposure, ExposureServerStatus, LiveTool, ToolOutcome } from './exposure/types';
import type { Funnel, FunnelServer } from './funnel';
import type {
  AssistantMessage,
  Message,
  ModelAdapter,
  ModelResponse,
  ModelStreamEvent,
  ModelUsage,
  ToolCall,
  ToolDeclaration,
  ToolResultMessage,
} from './model';
import { allDenied, matchRules, type PermissionRules } from './permissions';

/** Why a turn ended. */
export type TurnStopReason = 'end' | 'max_tokens' | 'tool_rounds_limit' | 'other';

/** What `sendMessage` resolves with. */
export interface TurnResult {
  /** The model's last text. */
  text: string;
  /** Messages this turn added, in order (user message, instructions delta, assistant and tool messages). */
  messages: Message[];
  /** Model calls that asked for tools. */
  toolRounds: number;
  stopReason: TurnStopReason;
  /** Summed over the turn's model calls (when the adapter reports it). */
  usage: ModelUsage;
}

/** What a turn works with. */
export interface TurnContext {
  pool: McpPoolApi;
  model: ModelAdapter;
  system: string;
  /** The exposure for this turn, decided once per turn from the tools visible at its start. */
  chooseExposure(visible: readonly LiveTool[]): Exposure;
  /** Every configured server's state, for exposures that report it. */
  serverStatuses(): ExposureServerStatus[];
  funnel: Funnel;
  servers(): readonly FunnelServer[];
  rules(): PermissionRules | undefined;
  builtins: readonly ToolDeclaration[];
  /** The live history; the turn appends to it. */
  history: Message[];
  maxToolRounds: number;
  instructionsMaxChars?: number | undefined;
  /** Called for every message appended. */
  onMessage(message: Message): void;
  onModelEvent?(event: ModelStreamEvent): void;
  signal: AbortSignal;
}

/** Live tools of the servers that can take calls now, minus those a deny rule blocks. */
export function liveTools(
  pool: McpPoolApi,
  servers: readonly FunnelServer[],
  rules?: PermissionRules,
): LiveTool[] {
  const out: LiveTool[] = [];
  for (const s of servers) {
    if (s.blockedReason) continue;
    const r = pool.get(s.server.name);
    if (!r || (r.status !== 'connected' && r.status !== 'reconnecting')) continue;
    for (const t of r.tools) {
      const tool: LiveTool = { server: r.name, name: t.name, fullName: fullToolName(r.name, t.name) };
      if (t.description !== undefined) tool.description = t.description;
      if (t.inputSchema !== undefined) tool.inputSchema = t.inputSchema;
      if (t.annotations !== undefined) tool.annotations = t.annotations as { readOnlyHint?: boolean };
      if (rules?.deny && matchRules(rules, tool.fullName).kind === 'deny') continue;
      out.push(tool);
    }
  }
  return out;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    const reason = signal.reason;
    if (reason instanceof AgentError) throw reason;
    throw new AgentError('TURN_ABORTED', 'The turn was aborted.', { cause: reason });
  }
}

/** Run one turn for `text`. Rejects with {@link AgentError} (`TURN_ABORTED`, `MODEL_FAILED`, `AGENT_DESTROYED`). */
export async function runTurn(ctx: TurnContext, text: string): Promise<TurnResult> {
  const added: Message[] = [];
  const push = (m: Message) => {
    ctx.history.push(m);
    added.push(m);
    ctx.onMessage(m);
  };
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };

  // (1) Only a pool with something pending is touched; otherwise the turn awaits nothing for MCP.
  const dials = ctx.pool.hasPendingDials() ? ctx.pool.ensureConnected({ signal: ctx.signal }) : undefined;
  // The turn's own preparation runs while the dials go on.
  push({ role: 'user', content: text });
  if (dials) {
    try {
      await dials;
    } catch {
      throwIfAborted(ctx.signal);
    }
  }
  throwIfAborted(ctx.signal);

  // (2) Instructions delta, before the model call.
  const rules = ctx.rules();
  const states = ctx.servers().map((s) => {
    const r = s.blockedReason ? undefined : ctx.pool.get(s.server.name);
    const available = !!r && (r.status === 'connected' || r.status === 'reconnecting');
    const names = r ? r.tools.map((t) => fullToolName(r.name, t.name)) : [];
    return {
      name: s.server.name,
      available,
      instructions: r?.instructions,
      permitted: !allDenied(rules, names),
    };
  });
  const delta = computeInstructionsDelta(
    ctx.history,
    states,
    ctx.instructionsMaxChars !== undefined ? { maxChars: ctx.instructionsMaxChars } : {},
  );
  if (delta) push(delta);

  let rounds = 0;
  let lastText = '';
  let exposure: Exposure | undefined;
  for (;;) {
    // (3) Declare tools (re-planned each round: a server may have changed its tools).
    const tools = liveTools(ctx.pool, ctx.servers(), rules);
    exposure ??= ctx.chooseExposure(tools);
    const plan = exposure.plan({
      tools,
      currentTools: () => liveTools(ctx.pool, ctx.servers(), rules),
      builtins: ctx.builtins,
      servers: ctx.serverStatuses(),
    });
    // (4) The model.
    let response: ModelResponse;
    try {
      const request: Parameters<ModelAdapter['generate']>[0] = {
        system: ctx.system,
        tools: plan.declarations,
        messages: [...ctx.history],
        signal: ctx.signal,
      };
      if (ctx.onModelEvent) request.onEvent = ctx.onModelEvent;
      response = await ctx.model.generate(request);
    } catch (error) {
      throwIfAborted(ctx.signal);
      if (error instanceof AgentError) throw error;
      throw new AgentError(
        'MODEL_FAILED',
        `The model ${ctx.model.name} failed: ${(error as Error)?.message ?? String(error)}`,
        {
          cause: error,
        },
      );
    }
    throwIfAborted(ctx.signal);
    if (response.usage) {
      usage.inputTokens += response.usage.inputTokens;
      usage.outputTokens += response.usage.outputTokens;
      if (response.usage.cacheReadTokens !== undefined)
        usage.cacheReadTokens = (usage.cacheReadTokens ?? 0) + response.usage.cacheReadTokens;
      if (response.usage.cacheWriteTokens !== undefined)
        usage.cacheWriteTokens = (usage.cacheWriteTokens ?? 0) + response.usage.cacheWriteTokens;
    }
    lastText = response.content;
    const assistant: AssistantMessage = { role: 'assistant', content: response.content };
    if (response.toolCalls.length > 0) assistant.toolCalls = response.toolCalls;
    push(assistant);
    if (response.toolCalls.length === 0) {
      const stopReason: TurnStopReason =
        response.stopReason === 'max_tokens'
          ? 'max_tokens'
          : response.stopReason === 'other'
            ? 'other'
            : 'end';
      return { text: lastText, messages: added, toolRounds: rounds, stopReason, usage };
    }
    rounds += 1;

    // (5) Every call through the funnel: in parallel only when all are read-only.
    const routes = response.toolCalls.map((call) => ({ call, route: plan.route(call) }));
    const readOnly = routes.every(({ route }) =>
      route.kind === 'call' ? ctx.funnel.isReadOnly(route.fullName, route.target) : route.readOnly,
    );
    const runOne = async ({ call, route }: (typeof routes)[number]): Promise<ToolOutcome> => {
      if (call.invalidArguments !== undefined) {
        return {
          content: `Tool ${call.name} was not run: its arguments must be a JSON object, got: ${call.invalidArguments.slice(0, 500)}`,
          isError: true,
          blocked: true,
        };
      }
      if (route.kind === 'call') {
        const opts: Parameters<Funnel['call']>[2] = { signal: ctx.signal, callId: call.id };
        if (route.target) opts.hint = route.target;
        return ctx.funnel.call(route.fullName, route.arguments, opts);
      }
      try {
        return await route.run({
          callTool: (n, a, o) => ctx.funnel.call(n, a, { signal: ctx.signal, ...o }),
          signal: ctx.signal,
        });
      } catch (error) {
        return {
          content: `Tool ${call.name} failed: ${(error as Error)?.message ?? String(error)}`,
          isError: true,
        };
      }
    };
    const outcomes: ToolOutcome[] = [];
    try {
      if (readOnly) outcomes.push(...(await Promise.all(routes.map(runOne))));
      else
        for (const r of routes) {
          if (ctx.signal.aborted) break;
          outcomes.push(await runOne(r));
        }
    } finally {
      // Every call gets an answer, even in a cancelled turn: an assistant
      // message with an unanswered tool call makes the next request invalid.
      for (const [i, { call }] of routes.entries()) push(toolResult(call, outcomes[i] ?? CANCELLED));
    }
    throwIfAborted(ctx.signal);

    // (6) Loop, within the limit.
    if (rounds >= ctx.maxToolRounds) {
      return { text: lastText, messages: added, toolRounds: rounds, stopReason: 'tool_rounds_limit', usage };
    }
  }
}

/** The answer of a call that a cancelled turn did not finish. */
const CANCELLED: ToolOutcome = { content: 'Cancelled by the user before it finished.', isError: true };

function toolResult(call: ToolCall, outcome: ToolOutcome): ToolResultMessage {
  const m: ToolResultMessage = {
    role: 'tool',
    toolCallId: call.id,
    name: call.name,
    content: outcome.content,
  };
  if (outcome.isError) m.isError = true;
  return m;
}
