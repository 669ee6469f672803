import type { AgentEvents, Message, TurnResult } from '@wave/agent';
import { type AgentCommandOptions, openAgentSession, repairHistory } from './agent-session';
import { contentText, formatArgs } from './chat/format';
import { printJson } from './commands/config';
import type { GlobalOptions } from './context';
import { CliError, type Io } from './io';

/**
 * One tool call of `wave run --json`. Stable: fields are only ever added.
 */
export interface RunToolCall {
  /** The model's call id (absent for calls made inside another tool). */
  id?: string;
  /** The `id` of the tool (Exec, the gateway) this call was made from. */
  parent?: string;
  /** Full tool name, `mcp__<server>__<tool>` (or a built-in's name). */
  name: string;
  arguments: Record<string, unknown>;
  /** The tool reported an error, or the call was refused. */
  isError: boolean;
  /** Refused by a rule or by the non-interactive default (no `--allow` matched). */
  blocked: boolean;
  ms: number;
  /** The result as the model saw it (text; images as `[image <type>]`). Absent for calls made inside another tool. */
  output?: string;
}

/**
 * What `wave run --json` prints. Stable: fields are only ever added.
 */
export interface RunJson {
  /** Resume with `wave chat --resume <sessionId>` or `wave run --resume <sessionId>`. */
  sessionId: string;
  /** The model adapter, e.g. `openai-compatible:llama3.1`. */
  model: string;
  /** The model's last text. */
  text: string;
  /** `end`, `max_tokens`, `tool_rounds_limit`, `other`; `aborted` (Ctrl-C / SIGTERM) or `error` with `error` set. */
  stopReason: TurnResult['stopReason'] | 'aborted' | 'error';
  toolCalls: RunToolCall[];
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };
  error?: { code: string; message: string };
}

export interface RunOptions extends AgentCommandOptions {
  json?: boolean;
  allow?: string[];
  deny?: string[];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `wave run "<prompt>"`: one turn, no questions asked; tool calls not allowed by a rule are denied. */
export async function runPrompt(
  io: Io,
  globals: GlobalOptions,
  promptArg: string,
  opts: RunOptions,
): Promise<number> {
  const prompt = promptArg === '-' ? await readStdin() : promptArg;
  if (prompt.trim() === '')
    throw new CliError('The prompt is empty. Example: wave run "list the files in this project"', 2);
  const session = await openAgentSession(io, globals, opts, {
    ask: false,
    permissions: { allow: opts.allow ?? [], deny: opts.deny ?? [] },
  });
  const { agent } = session;
  const calls: RunToolCall[] = [];
  const byId = new Map<string, { call: RunToolCall; started: number }>();
  agent.on('warning', (w) => io.err(`wave: warning: ${w.message}\n`));
  agent.on('message', (m: Message) => {
    if (m.role === 'assistant') {
      for (const tc of m.toolCalls ?? []) {
        const call: RunToolCall = {
          id: tc.id,
          name: tc.name,
          arguments: tc.arguments,
          isError: false,
          blocked: false,
          ms: 0,
          output: '',
        };
        calls.push(call);
        byId.set(tc.id, { call, started: performance.now() });
      }
      return;
    }
    if (m.role !== 'tool') return;
    const entry = byId.get(m.toolCallId);
    if (!entry) return;
    const { call } = entry;
    call.output = contentText(m.content);
    call.isError = m.isError === true;
    if (!Number.isNaN(entry.started)) call.ms = Math.round(performance.now() - entry.started);
    entry.started = Number.NaN;
    if (!opts.json) report(call);
  });
  agent.on('toolCall', (e: AgentEvents['toolCall']) => {
    const own = e.callId !== undefined ? byId.get(e.callId) : undefined;
    if (own) {
      own.call.name = e.fullName;
      own.call.blocked = e.blocked;
      own.call.ms = Math.round(e.ms);
      own.started = Number.NaN;
      return;
    }
    // A call made inside another tool (an Exec script, the gateway's `call`): its
    // result went to that tool, not to the model.
    const running = [...byId.values()].filter((x) => !Number.isNaN(x.started));
    const call: RunToolCall = {
      name: e.fullName,
      arguments: e.arguments,
      isError: e.isError,
      blocked: e.blocked,
      ms: Math.round(e.ms),
    };
    if (running.length === 1 && running[0]?.call.id !== undefined) call.parent = running[0].call.id;
    calls.push(call);
    if (!opts.json) report(call);
  });
  const report = (call: RunToolCall) => {
    const mark = call.blocked ? 'denied' : call.isError ? 'failed' : 'ok';
    io.err(
      `wave: tool ${call.parent !== undefined ? '  ' : ''}${call.name} ${formatArgs(call.arguments, 80)}: ${mark} (${call.ms} ms)\n`,
    );
    if (call.blocked && call.output) io.err(`      ${call.output.split('\n')[0]}\n`);
  };

  const controller = new AbortController();
  let aborted = false;
  const onSignal = () => {
    aborted = true;
    controller.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: TurnResult | undefined;
  let error: { code: string; message: string } | undefined;
  try {
    result = await agent.sendMessage(prompt, { signal: controller.signal });
  } catch (err) {
    error = {
      code: (err as { code?: string }).code ?? 'UNEXPECTED',
      message: (err as Error)?.message ?? String(err),
    };
  } finally {
    if (aborted) repairHistory(agent);
    await agent.destroy();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const out: RunJson = {
    sessionId: agent.sessionId,
    model: session.model.name,
    text: result?.text ?? '',
    stopReason: result ? result.stopReason : aborted ? 'aborted' : 'error',
    toolCalls: calls,
    usage: result?.usage ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (error && !aborted) out.error = error;
  if (opts.json) printJson(io, out);
  else {
    if (out.text !== '') io.out(out.text.endsWith('\n') ? out.text : `${out.text}\n`);
    if (error && !aborted) io.err(`wave: ${error.message}\n`);
    if (aborted) io.err('wave: cancelled.\n');
  }
  if (aborted) return 130;
  return error ? 1 : 0;
}
