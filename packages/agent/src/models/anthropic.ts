/**
 * The Anthropic Messages wire format. Request building (with cache_control
 * breakpoints) and stream accumulation are pure; the adapter does one POST
 * and reads the SSE stream.
 */
import type {
  ContentBlock,
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
  toStopReason,
} from './shared';

/** Options of {@link anthropic}. */
export interface AnthropicOptions {
  /** Sent as `x-api-key`. */
  apiKey: string;
  /** Model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** @default 'https://api.anthropic.com' */
  baseURL?: string;
  /** Upper bound of output tokens per response (the API requires one). @default 8192 */
  maxTokens?: number;
  /** Stream the response (SSE). @default true */
  stream?: boolean;
  /** Put `cache_control` breakpoints on the system prompt, the last tool and the newest message. @default true */
  cache?: boolean;
  /** Send image blocks as images (otherwise as a short text note). @default true */
  vision?: boolean;
  /** @default none (the API's default) */
  temperature?: number;
  /** `anthropic-version` header. @default '2023-06-01' */
  version?: string;
  /** Extra top-level fields merged into every request body (e.g. `thinking`, `metadata`). @default {} */
  extraBody?: Record<string, unknown>;
  /** Extra HTTP headers (e.g. `anthropic-beta`). @default {} */
  headers?: Record<string, string>;
  /** Retry policy for 408/409/429/5xx (529 overloaded included) and network errors. @default { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30000 } */
  retry?: RetryOptions;
  /** Give up on an attempt when no data arrived for this long (before the response: retried like a network error; mid-stream: final). 0 disables. @default 600000 */
  idleTimeoutMs?: number;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Adapter name in messages and logs. @default `anthropic:<model>` */
  name?: string;
}

type CacheControl = { type: 'ephemeral' };

type WireText = { type: 'text'; text: string; cache_control?: CacheControl };
type WireImage = {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
  cache_control?: CacheControl;
};
type WireToolUse = {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControl;
};
type WireToolResult = {
  type: 'tool_result';
  tool_use_id: string;
  content?: (WireText | WireImage)[];
  is_error?: boolean;
  cache_control?: CacheControl;
};
type WireBlock = WireText | WireImage | WireToolUse | WireToolResult;

export interface WireMessage {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

const EPHEMERAL: CacheControl = { type: 'ephemeral' };

function toBlocks(content: string | ContentBlock[], vision: boolean): (WireText | WireImage)[] {
  const blocks: ContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const out: (WireText | WireImage)[] = [];
  for (const b of blocks) {
    if (b.type === 'image') {
      out.push(
        vision
          ? { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } }
          : { type: 'text', text: imagePlaceholder(b) },
      );
    } else if (b.text.length > 0) {
      // The API rejects empty text blocks.
      out.push({ type: 'text', text: b.text });
    }
  }
  return out;
}

/**
 * Messages API messages for the agent's messages: tool results become
 * `tool_result` blocks of a user message, consecutive messages of one role
 * are merged (tool results first, as the API requires), empty ones dropped.
 */
export function toAnthropicMessages(messages: Message[], vision: boolean): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    let role: WireMessage['role'];
    let content: WireBlock[];
    if (m.role === 'assistant') {
      role = 'assistant';
      content = [
        ...(m.content.length > 0 ? [{ type: 'text' as const, text: m.content }] : []),
        ...(m.toolCalls ?? []).map(
          (c): WireToolUse => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments }),
        ),
      ];
    } else if (m.role === 'tool') {
      role = 'user';
      const inner = toBlocks(m.content, vision);
      content = [
        {
          type: 'tool_result',
          tool_use_id: m.toolCallId,
          ...(inner.length > 0 ? { content: inner } : {}),
          ...(m.isError ? { is_error: true } : {}),
        },
      ];
    } else {
      role = 'user';
      content = toBlocks(m.content, vision);
    }
    if (content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...content);
    else out.push({ role, content });
  }
  for (const m of out) {
    if (m.role !== 'user') continue;
    const results = m.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0) m.content = [...results, ...m.content.filter((b) => b.type !== 'tool_result')];
  }
  return out;
}

/** The request body. Pure. */
export function toMessagesBody(
  request: Pick<ModelRequest, 'system' | 'tools' | 'messages'>,
  options: AnthropicOptions,
): Record<string, unknown> {
  const cache = options.cache ?? true;
  const messages = toAnthropicMessages(request.messages, options.vision ?? true);
  if (cache) {
    const newest = messages.at(-1)?.content.at(-1);
    if (newest) newest.cache_control = EPHEMERAL;
  }
  const body: Record<string, unknown> = {
    model: options.model,
    max_tokens: options.maxTokens ?? 8192,
  };
  if (request.system.length > 0) {
    body.system = cache ? [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] : request.system;
  }
  body.messages = messages;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
      ...(cache && i === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
  }
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.stream ?? true) body.stream = true;
  return { ...body, ...options.extraBody };
}

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Usage with `inputTokens` counting cached prompt tokens too (the API reports them apart). */
export function toUsage(u: WireUsage | undefined): ModelUsage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const read = u.cache_read_input_tokens ?? 0;
  const write = u.cache_creation_input_tokens ?? 0;
  const usage: ModelUsage = {
    inputTokens: (u.input_tokens ?? 0) + read + write,
    outputTokens: u.output_tokens ?? 0,
  };
  if (u.cache_read_input_tokens != null) usage.cacheReadTokens = read;
  if (u.cache_creation_input_tokens != null) usage.cacheWriteTokens = write;
  return usage;
}

interface WireEvent {
  type?: string;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: { type?: string; id?: string; name?: string; text?: string; input?: unknown };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

/** Accumulates stream events into a response. Pure. */
export function createMessagesStreamState() {
  let content = '';
  let stop: string | null | undefined;
  let wireUsage: WireUsage | undefined;
  let stopped = false;
  const blocks = new Map<
    number,
    { kind: 'text' } | { kind: 'tool'; id: string; name: string; json: string }
  >();
  const toolCalls: ToolCall[] = [];

  return {
    /** Events of one SSE event. Throws a plain Error for an `error` event. */
    feed(e: WireEvent): ModelStreamEvent[] {
      const events: ModelStreamEvent[] = [];
      switch (e.type) {
        case 'message_start':
          wireUsage = { ...e.message?.usage };
          break;
        case 'content_block_start': {
          const b = e.content_block;
          if (b?.type === 'tool_use') {
            blocks.set(e.index ?? 0, { kind: 'tool', id: b.id ?? newCallId(), name: b.name ?? '', json: '' });
          } else if (b?.type === 'text') {
            blocks.set(e.index ?? 0, { kind: 'text' });
            if (b.text) {
              content += b.text;
              events.push({ type: 'text-delta', text: b.text });
            }
          }
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(e.index ?? 0);
          if (e.delta?.type === 'text_delta' && block?.kind === 'text' && e.delta.text) {
            content += e.delta.text;
            events.push({ type: 'text-delta', text: e.delta.text });
          } else if (e.delta?.type === 'input_json_delta' && block?.kind === 'tool') {
            block.json += e.delta.partial_json ?? '';
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(e.index ?? 0);
          if (block?.kind === 'tool') {
            const call: ToolCall = { id: block.id, name: block.name, ...parseToolArguments(block.json) };
            toolCalls.push(call);
            events.push({ type: 'tool-call', call });
          }
          blocks.delete(e.index ?? 0);
          break;
        }
        case 'message_delta':
          if (e.delta?.stop_reason !== undefined) stop = e.delta.stop_reason;
          if (e.usage) wireUsage = { ...wireUsage, ...e.usage };
          break;
        case 'message_stop':
          stopped = true;
          break;
        case 'error':
          throw new Error(`${e.error?.type ?? 'error'}: ${e.error?.message ?? 'unknown error'}`);
        default:
          // ping and future event types
          break;
      }
      return events;
    },
    get stopped(): boolean {
      return stopped;
    },
    result(): ModelResponse {
      const usage = toUsage(wireUsage);
      return {
        content,
        toolCalls: [...toolCalls],
        ...(usage ? { usage } : {}),
        stopReason: toStopReason(stop, toolCalls.length > 0),
      };
    },
  };
}

interface WireResponse {
  type?: string;
  content?: { type?: string; text?: string; id?: string; name?: string; input?: unknown }[];
  stop_reason?: string | null;
  usage?: WireUsage;
}

/** A non-streamed Messages response. `undefined` when it is not one. Pure. */
export function fromMessagesResponse(json: WireResponse): ModelResponse | undefined {
  if (!Array.isArray(json.content)) return undefined;
  let content = '';
  const toolCalls: ToolCall[] = [];
  for (const b of json.content) {
    if (b.type === 'text' && b.text) content += b.text;
    if (b.type === 'tool_use' && b.name) {
      const input = b.input;
      toolCalls.push(
        input !== null && typeof input === 'object' && !Array.isArray(input)
          ? { id: b.id ?? newCallId(), name: b.name, arguments: input as Record<string, unknown> }
          : { id: b.id ?? newCallId(), name: b.name, ...parseToolArguments(JSON.stringify(input ?? {})) },
      );
    }
  }
  const usage = toUsage(json.usage);
  return {
    content,
    toolCalls,
    ...(usage ? { usage } : {}),
    stopReason: toStopReason(json.stop_reason, toolCalls.length > 0),
  };
}

/**
 * A Claude model through the Anthropic Messages API. Throws `MODEL_CONFIG`
 * at once for a missing model or API key, or a baseURL that is not http(s).
 */
export function anthropic(options: AnthropicOptions): ModelAdapter {
  checkOptions('anthropic', options);
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
    throw new ModelError(
      'MODEL_CONFIG',
      'anthropic: the apiKey option is empty; pass the key, e.g. { apiKey: process.env.ANTHROPIC_API_KEY }',
    );
  }
  const name = options.name ?? `anthropic:${options.model}`;
  const url = joinUrl(options.baseURL ?? 'https://api.anthropic.com', '/v1/messages');
  return {
    name,
    supportsVision: options.vision ?? true,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const body = toMessagesBody(request, options);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        'x-api-key': options.apiKey,
        'anthropic-version': options.version ?? '2023-06-01',
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
          'Check the apiKey option (usually from ANTHROPIC_API_KEY); the key was rejected or lacks access to this model.',
      });
      const state = createMessagesStreamState();
      const streamed = await readStream(
        response,
        { name, url, attempts, signal: request.signal, secret: options.apiKey, watchdog, idleTimeoutMs },
        {
          onEvent(data, event) {
            let parsed: WireEvent;
            try {
              parsed = JSON.parse(data) as WireEvent;
            } catch (error) {
              throw new ModelError(
                'MODEL_BAD_RESPONSE',
                `${name}: a stream event from ${url} is not JSON: ${data.slice(0, 200)}`,
                { model: name, attempts, cause: error },
              );
            }
            if (parsed.type === undefined) parsed.type = event;
            let events: ModelStreamEvent[];
            try {
              events = state.feed(parsed);
            } catch (error) {
              throw new ModelError(
                'MODEL_STREAM',
                `${name}: the provider reported an error mid-stream (${(error as Error).message}). The request was not retried because output had started; send it again.`,
                { model: name, attempts, cause: error },
              );
            }
            for (const e of events) request.onEvent?.(e);
            return state.stopped ? 'stop' : 'continue';
          },
          onJson(json) {
            const result = fromMessagesResponse(json as WireResponse);
            if (!result) {
              throw new ModelError(
                'MODEL_BAD_RESPONSE',
                `${name}: the response from ${url} is not a Messages response (no content array)`,
                { model: name, attempts },
              );
            }
            if (result.content.length > 0) request.onEvent?.({ type: 'text-delta', text: result.content });
            for (const call of result.toolCalls) request.onEvent?.({ type: 'tool-call', call });
            return result;
          },
        },
      );
      if (streamed !== undefined) return streamed;
      if (!state.stopped) {
        throw new ModelError(
          'MODEL_NETWORK',
          `${name}: the stream from ${url} ended before message_stop; send the request again.`,
          { model: name, attempts },
        );
      }
      return state.result();
    },
  };
}
