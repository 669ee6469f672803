/**
 * The model contract: the messages the agent keeps, the tools it declares,
 * and the small adapter interface every model backend implements.
 * Provider wire formats live in `models/` and translate to and from these.
 */

/** Plain text. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** An image, base64-encoded. */
export interface ImageBlock {
  type: 'image';
  /** e.g. `image/png`. */
  mimeType: string;
  /** Base64 data, no `data:` prefix. */
  data: string;
}

export type ContentBlock = TextBlock | ImageBlock;

/** One tool call the model asked for. `arguments` is already parsed. */
export interface ToolCall {
  /** Provider's call id (generated when the provider gives none). */
  id: string;
  /** The declared tool name the model used (may be a short form of a full name). */
  name: string;
  arguments: Record<string, unknown>;
  /**
   * Set when the model's argument text was not a JSON object (small local
   * models do this): `arguments` is then `{}` and this holds the raw text, so
   * the caller can answer with an error the model can correct.
   */
  invalidArguments?: string;
}

/** A user message. `isMeta` marks host notices (hidden from UIs, persisted, sent to the model). */
export interface UserMessage {
  role: 'user';
  content: string | ContentBlock[];
  isMeta?: boolean;
  /** Set on instructions-delta messages by `@wave/mcp-instructions`; keep it when persisting. */
  mcpInstructions?: { announced: { server: string; hash: string }[]; retired: string[] };
}

/** What the model said, and the tools it asked for. */
export interface AssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: ToolCall[];
}

/** The result of one tool call, answering `toolCallId`. */
export interface ToolResultMessage {
  role: 'tool';
  toolCallId: string;
  /** The tool name as the model called it. */
  name: string;
  content: string | ContentBlock[];
  /** The call failed, was denied, or the tool reported an error. */
  isError?: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A tool as declared to the model. */
export interface ToolDeclaration {
  name: string;
  description: string;
  /** A JSON Schema object, already sanitized for model APIs. */
  inputSchema: Record<string, unknown>;
}

/** Streaming events an adapter emits while it generates. */
export type ModelStreamEvent = { type: 'text-delta'; text: string } | { type: 'tool-call'; call: ToolCall };

export interface ModelUsage {
  /** Every prompt token of the request, cached ones included (adapters normalize to this). */
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's cache, when reported. */
  cacheWriteTokens?: number;
}

export type StopReason = 'end' | 'tool_calls' | 'max_tokens' | 'other';

export interface ModelRequest {
  /** The system prompt; byte-identical across the turns of a session. */
  system: string;
  tools: ToolDeclaration[];
  messages: Message[];
  /** Aborting it aborts the HTTP request. */
  signal?: AbortSignal;
  /** Streaming: called for every delta as it arrives. */
  onEvent?: (event: ModelStreamEvent) => void;
}

export interface ModelResponse {
  content: string;
  toolCalls: ToolCall[];
  usage?: ModelUsage;
  stopReason: StopReason;
}

/** A model backend. */
export interface ModelAdapter {
  /** For messages and logs, e.g. `openai:gpt-4o-mini`. */
  readonly name: string;
  /** Image blocks in tool results may be sent to it. @default false */
  readonly supportsVision?: boolean;
  generate(request: ModelRequest): Promise<ModelResponse>;
}
