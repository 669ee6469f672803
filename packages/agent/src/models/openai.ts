/**
 * The OpenAI Chat Completions wire format (OpenAI, Ollama, vLLM, llama.cpp,
 * LM Studio, ...). Request building and stream accumulation are pure; the
 * adapter does one POST and reads the SSE stream.
 */
import type {
  ContentBlock,
  ImageBlock,
  Message,
  ModelAdapter,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelUsage,
  ToolCall,
} from '../model';
import { ModelError } from './errors';
import { postWithRetry, type RetryOptions } from './http';
import { readStream } from './read-stream';
import {
  checkOptions,
  imagePlaceholder,
  joinUrl,
  newCallId,
  parseToolArguments,
  textOf,
  toStopReason,
} from './shared';

/** Options of {@link openaiCompatible}. */
export interface OpenAICompatibleOptions {
  /** Base URL of the API, up to and including the version, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Local servers usually need none. @default none */
  apiKey?: string;
  /** Model id, e.g. `gpt-4o-mini` or `qwen2.5:7b`. */
  model: string;
  /** The model accepts images: image blocks are sent as `image_url` parts (tool results: in a user message right after them). Otherwise they become a short text note. @default false */
  vision?: boolean;
  /** Stream the response (SSE). @default true */
  stream?: boolean;
  /** Ask for usage in the stream (`stream_options.include_usage`). Turn off for servers that reject it. @default true */
  includeUsage?: boolean;
  /** Sent as `max_tokens`. @default none (the server's default) */
  maxTokens?: number;
  /** @default none (the server's default) */
  temperature?: number;
  /** Extra top-level fields merged into every request body (e.g. `max_completion_tokens`, `reasoning_effort`). @default {} */
  extraBody?: Record<string, unknown>;
  /** Extra HTTP headers. @default {} */
  headers?: Record<string, string>;
  /** Retry policy for 408/409/429/5xx and network errors. @default { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30000 } */
  retry?: RetryOptions;
  /** Give up on an attempt when no data arrived for this long (before the response: retried like a network error; mid-stream: final). 0 disables. @default 600000 */
  idleTimeoutMs?: number;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Adapter name in messages and logs. @default `openai-compatible:<model>` */
  name?: string;
}

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

const imagePart = (image: ImageBlock): ChatPart => ({
  type: 'image_url',
  image_url: { url: `data:${image.mimeType};base64,${image.data}` },
});

function userContent(content: string | ContentBlock[], vision: boolean): string | ChatPart[] {
  if (typeof content === 'string') return content;
  if (!vision || content.every((b) => b.type === 'text')) return textOf(content);
  return content.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : imagePart(b)));
}

/**
 * Chat Completions messages for the agent's messages. Tool messages take
 * text only, so with vision the images of a run of tool results follow in
 * one user message after the run (the API wants every tool result right
 * after the assistant message that asked for it).
 */
export function toChatMessages(system: string, messages: Message[], vision: boolean): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (system.length > 0) out.push({ role: 'system', content: system });
  let pendingImages: ChatPart[] = [];
  const flushImages = () => {
    if (pendingImages.length > 0) out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const m of messages) {
    if (m.role !== 'tool') flushImages();
    if (m.role === 'user') {
      out.push({ role: 'user', content: userContent(m.content, vision) });
    } else if (m.role === 'assistant') {
      const calls = m.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: m.content.length > 0 || calls.length === 0 ? m.content : null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.invalidArguments ?? JSON.stringify(c.arguments) },
              })),
            }
          : {}),
      });
    } else {
      const blocks: ContentBlock[] =
        typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
      const images = vision ? blocks.filter((b): b is ImageBlock => b.type === 'image') : [];
      const texts = blocks.map((b) => (b.type === 'text' ? b.text : vision ? null : imagePlaceholder(b)));
      let text = texts.filter((t): t is string => t !== null).join('\n');
      if (images.length > 0) {
        text += `${text.length > 0 ? '\n' : ''}[${images.length} image(s) attached in the next message]`;
        pendingImages.push(
          { type: 'text', text: `Image(s) returned by tool call ${m.toolCallId} (${m.name}):` },
          ...images.map(imagePart),
        );
      }
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: text });
    }
  }
  flushImages();
  return out;
}

/** The request body. Pure. */
export function toChatCompletionsBody(
  request: Pick<ModelRequest, 'system' | 'tools' | 'messages'>,
  options: OpenAICompatibleOptions,
): Record<string, unknown> {
  const stream = options.stream ?? true;
  const body: Record<string, unknown> = {
    model: options.model,
    messages: toChatMessages(request.system, request.messages, options.vision ?? false),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (stream) {
    body.stream = true;
    if (options.includeUsage ?? true) body.stream_options = { include_usage: true };
  }
  return { ...body, ...options.extraBody };
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  prompt_cache_hit_tokens?: number;
}

export function toUsage(u: WireUsage | null | undefined): ModelUsage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const usage: ModelUsage = { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 };
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens;
  if (typeof cached === 'number') usage.cacheReadTokens = cached;
  return usage;
}

interface WireToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  choices?: {
    delta?: { content?: string | null; tool_calls?: WireToolCallDelta[] | null };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
  error?: { message?: string; type?: string } | string;
}

/** Accumulates stream chunks into a response. Pure: feed parsed chunks, read the events it returns. */
export function createChatStreamState() {
  let content = '';
  let finish: string | null | undefined;
  let usage: ModelUsage | undefined;
  const slots: { id: string | undefined; name: string; args: string }[] = [];
  const byIndex = new Map<number, number>();

  return {
    /** Text deltas of one chunk. Throws a plain Error for an in-stream error object. */
    feed(chunk: WireChunk): ModelStreamEvent[] {
      const events: ModelStreamEvent[] = [];
      if (chunk.error) {
        const e = chunk.error;
        throw new Error(typeof e === 'string' ? e : (e.message ?? e.type ?? 'unknown error'));
      }
      if (chunk.usage) usage = toUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) return events;
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string' && delta.content.length > 0) {
        content += delta.content;
        events.push({ type: 'text-delta', text: delta.content });
      }
      for (const d of delta.tool_calls ?? []) {
        // Find the call this fragment continues: by index, else by id, else the last one.
        // A new id under a known index is a new call (some servers put every call at index 0).
        let slot = typeof d.index === 'number' ? byIndex.get(d.index) : undefined;
        if (slot !== undefined && d.id && slots[slot]!.id !== undefined && slots[slot]!.id !== d.id) {
          slot = undefined;
        }
        if (slot === undefined && typeof d.index !== 'number') {
          const found = d.id ? slots.findIndex((s) => s.id === d.id) : slots.length - 1;
          if (found >= 0) slot = found;
        }
        if (slot === undefined) {
          slot = slots.push({ id: undefined, name: '', args: '' }) - 1;
          if (typeof d.index === 'number') byIndex.set(d.index, slot);
        }
        const s = slots[slot]!;
        if (d.id) s.id = d.id;
        // Names arrive whole (some servers repeat them on every fragment).
        if (d.function?.name) s.name = d.function.name;
        if (d.function?.arguments) s.args += d.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
      return events;
    },
    /** Whether the model said it was done (a `finish_reason` arrived). */
    get finished(): boolean {
      return finish !== undefined && finish !== null;
    },
    result(): ModelResponse {
      const toolCalls: ToolCall[] = slots
        .filter((s) => s.name.length > 0)
        .map((s) => ({ id: s.id ?? newCallId(), name: s.name, ...parseToolArguments(s.args) }));
      return {
        content,
        toolCalls,
        ...(usage ? { usage } : {}),
        stopReason: toStopReason(finish, toolCalls.length > 0),
      };
    },
  };
}

interface WireCompletion {
  choices?: {
    message?: {
      content?: string | null;
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[] | null;
    };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
}

/** A non-streamed completion as a response; `undefined` when it has no choice. Pure. */
export function fromChatCompletion(json: WireCompletion): ModelResponse | undefined {
  const choice = json.choices?.[0];
  if (!choice?.message) return undefined;
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? [])
    .filter((c) => c.function?.name)
    .map((c) => ({
      id: c.id ?? newCallId(),
      name: c.function!.name!,
      ...parseToolArguments(c.function?.arguments ?? ''),
    }));
  const usage = toUsage(json.usage);
  return {
    content: choice.message.content ?? '',
    toolCalls,
    ...(usage ? { usage } : {}),
    stopReason: toStopReason(choice.finish_reason, toolCalls.length > 0),
  };
}

/**
 * A model behind an OpenAI-compatible Chat Completions endpoint: OpenAI,
 * Ollama, vLLM, llama.cpp, LM Studio and others. Throws `MODEL_CONFIG`
 * at once for a missing model or a baseURL that is not an http(s) URL.
 */
export function openaiCompatible(options: OpenAICompatibleOptions): ModelAdapter {
  checkOptions('openaiCompatible', { model: options.model, baseURL: options.baseURL ?? '' });
  const name = options.name ?? `openai-compatible:${options.model}`;
  const url = joinUrl(options.baseURL, '/chat/completions');
  return {
    name,
    supportsVision: options.vision ?? false,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const body = toChatCompletionsBody(request, options);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        ...options.headers,
      };
      const idleTimeoutMs = options.idleTimeoutMs ?? 600_000;
      const { response, attempts, watchdog } = await postWithRetry({
        url,
        headers,
        body,
        signal: request.signal,
        retry: options.retry,
        fetch: options.fetch,
        model: name,
        secret: options.apiKey,
        idleTimeoutMs,
        authHint:
          'Check the apiKey option (for OpenAI, the key from OPENAI_API_KEY); the key was rejected or lacks access to this model.',
      });
      const ctx = {
        name,
        url,
        attempts,
        signal: request.signal,
        secret: options.apiKey,
        watchdog,
        idleTimeoutMs,
      };
      const state = createChatStreamState();
      let done = false;
      const streamed = await readStream(response, ctx, {
        onEvent(data) {
          if (data === '[DONE]') {
            done = true;
            return 'stop';
          }
          let chunk: WireChunk;
          try {
            chunk = JSON.parse(data) as WireChunk;
          } catch (error) {
            throw new ModelError(
              'MODEL_BAD_RESPONSE',
              `${name}: a stream chunk from ${url} is not JSON: ${data.slice(0, 200)}`,
              { model: name, attempts, cause: error },
            );
          }
          let events: ModelStreamEvent[];
          try {
            events = state.feed(chunk);
          } catch (error) {
            throw new ModelError(
              'MODEL_STREAM',
              `${name}: the provider reported an error mid-stream: ${(error as Error).message}. The request was not retried because output had started; send it again.`,
              { model: name, attempts, cause: error },
            );
          }
          for (const e of events) request.onEvent?.(e);
          return 'continue';
        },
        onJson(json) {
          const result = fromChatCompletion(json as WireCompletion);
          if (!result) {
            throw new ModelError(
              'MODEL_BAD_RESPONSE',
              `${name}: the response from ${url} has no choices[0].message`,
              { model: name, attempts },
            );
          }
          if (result.content.length > 0) request.onEvent?.({ type: 'text-delta', text: result.content });
          for (const call of result.toolCalls) request.onEvent?.({ type: 'tool-call', call });
          return result;
        },
      });
      if (streamed !== undefined) return streamed;
      if (!done && !state.finished) {
        throw new ModelError(
          'MODEL_NETWORK',
          `${name}: the stream from ${url} ended before the model finished (no finish_reason, no [DONE]); send the request again.`,
          { model: name, attempts },
        );
      }
      const result = state.result();
      for (const call of result.toolCalls) request.onEvent?.({ type: 'tool-call', call });
      return result;
    },
  };
}
