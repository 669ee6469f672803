/** Small pieces both wire formats share. */
import { randomUUID } from 'node:crypto';
import type { ContentBlock, ImageBlock, StopReason, ToolCall } from '../model';
import { ModelError } from './errors';

/** Parses a tool call's argument text. Not a JSON object: `{}` plus the raw text in `invalidArguments`. */
export function parseToolArguments(
  raw: string,
): Pick<ToolCall, 'arguments'> & Partial<Pick<ToolCall, 'invalidArguments'>> {
  if (raw.trim() === '') return { arguments: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return { arguments: value as Record<string, unknown> };
    }
  } catch {
    // fall through
  }
  return { arguments: {}, invalidArguments: raw };
}

/** A call id for providers that send none. */
export function newCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** What a model without vision reads in place of an image. */
export function imagePlaceholder(image: ImageBlock): string {
  const bytes = Math.floor((image.data.length * 3) / 4);
  return `[image ${image.mimeType}, ${bytes} bytes: not shown, this model does not accept images]`;
}

/** The text of content blocks (images as placeholders), joined by newlines. */
export function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : imagePlaceholder(b))).join('\n');
}

/** Matches the "prompt too long" errors of OpenAI, Anthropic, llama.cpp, Ollama and vLLM. */
export function isContextLengthMessage(message: string): boolean {
  return /context[ _]length|maximum context|context size|context window|prompt is too long|too many tokens/i.test(
    message,
  );
}

export function toStopReason(value: string | null | undefined, hasToolCalls: boolean): StopReason {
  switch (value) {
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls';
    case 'length':
    case 'max_tokens':
      return 'max_tokens';
    case 'stop':
    case 'end_turn':
    case 'stop_sequence':
    case null:
    case undefined:
      return hasToolCalls ? 'tool_calls' : 'end';
    default:
      return hasToolCalls ? 'tool_calls' : 'other';
  }
}

/** `baseURL` without trailing slashes, plus `path`. */
export function joinUrl(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, '')}${path}`;
}

/** Throws `MODEL_CONFIG` unless `model` is a non-empty string and `baseURL` an http(s) URL. */
export function checkOptions(adapter: string, options: { model?: unknown; baseURL?: unknown }): void {
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new ModelError(
      'MODEL_CONFIG',
      `${adapter}: the model option is missing; pass the model id, e.g. { model: 'gpt-4o-mini' }`,
    );
  }
  if (options.baseURL === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(String(options.baseURL));
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ModelError(
      'MODEL_CONFIG',
      `${adapter}: baseURL "${String(options.baseURL)}" is not an http(s) URL; write it like http://127.0.0.1:11434/v1`,
    );
  }
}
