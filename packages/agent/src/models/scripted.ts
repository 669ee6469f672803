import type { ModelAdapter, ModelRequest, ModelResponse, ModelUsage, StopReason, ToolCall } from '../model';

/** One scripted reply: text, tool calls, or both. */
export interface ScriptedReply {
  text?: string;
  /** Tool calls; `id` defaults to `call_<n>`, `arguments` to `{}`. */
  toolCalls?: { name: string; arguments?: Record<string, unknown>; id?: string }[];
  usage?: ModelUsage;
  /** @default 'tool_calls' when there are tool calls, else 'end' */
  stopReason?: StopReason;
}

/** A step: a fixed reply, or a function of the request (to answer with what the agent declared or sent). */
export type ScriptedStep =
  | ScriptedReply
  | ((request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>);

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /** @default 'scripted' */
  name?: string;
  /** @default false */
  supportsVision?: boolean;
  /** What to do when every step was used: throw, or answer with empty text. @default 'throw' */
  whenExhausted?: 'throw' | 'end';
}

/** A model that plays back `steps` in order. It records every request it got. */
export interface ScriptedModel extends ModelAdapter {
  /** Every request, in order (messages and tools copied at call time). */
  readonly requests: ModelRequest[];
  /** Steps not yet used. */
  readonly remaining: number;
}

/**
 * A deterministic {@link ModelAdapter} for tests and examples: each
 * `generate()` uses the next step. Streams the text as one delta and each tool
 * call as an event. Honours the abort signal.
 *
 * @example
 * ```ts
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'hi' } }] },
 *   { text: 'The server said hi.' },
 * ]);
 * ```
 */
export function scriptedModel(
  steps: readonly ScriptedStep[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const queue = [...steps];
  const requests: ModelRequest[] = [];
  let calls = 0;
  return {
    name: options.name ?? 'scripted',
    supportsVision: options.supportsVision ?? false,
    requests,
    get remaining() {
      return queue.length;
    },
    async generate(request: ModelRequest): Promise<ModelResponse> {
      if (request.signal?.aborted) throw request.signal.reason;
      requests.push({ ...request, messages: structuredClone(request.messages), tools: [...request.tools] });
      const step = queue.shift();
      if (step === undefined) {
        if (options.whenExhausted === 'end') return { content: '', toolCalls: [], stopReason: 'end' };
        throw new Error(
          `scriptedModel: no step left for request ${requests.length} (${steps.length} scripted).`,
        );
      }
      const reply = typeof step === 'function' ? await step(request) : step;
      if (request.signal?.aborted) throw request.signal.reason;
      const toolCalls: ToolCall[] = (reply.toolCalls ?? []).map((c) => {
        calls += 1;
        return { id: c.id ?? `call_${calls}`, name: c.name, arguments: c.arguments ?? {} };
      });
      const content = reply.text ?? '';
      if (content) request.onEvent?.({ type: 'text-delta', text: content });
      for (const call of toolCalls) request.onEvent?.({ type: 'tool-call', call });
      const response: ModelResponse = {
        content,
        toolCalls,
        stopReason: reply.stopReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'end'),
      };
      if (reply.usage) response.usage = reply.usage;
      return response;
    },
  };
}
