/**
 * Every export here is public API: the MCP-first agent, its host, model
 * adapters and the types they take and return. Tool search is at
 * `@wave/agent/search`, Exec at `@wave/agent/exec`, test doubles at
 * `@wave/agent/testing`. Tests import modules directly.
 * @packageDocumentation
 */
export {
  Agent,
  type AgentEvents,
  type AgentOptions,
  type AgentWarning,
  DEFAULT_SYSTEM_PROMPT,
  type McpServerView,
  type ToolMode,
} from './agent';
export type { BuiltinContext, BuiltinResult, BuiltinTool } from './builtins/types';
export { AgentError, type AgentErrorCode, isAgentError } from './errors';
// Tool exposure and output limits (flat names, schema sanitizing, output guard).
export { fullToolName, parseFullToolName } from './exposure/flat';
export { type SanitizeSchemaOptions, sanitizeSchema } from './exposure/schema';
export type { ApprovalAnswer, ApprovalRequest } from './funnel';
export { DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './guard/truncate';
export { AgentHost, type AgentHostOptions, type HostAgentOptions, type PendingReclaim } from './host';
export type {
  AssistantMessage,
  ContentBlock,
  ImageBlock,
  Message,
  ModelAdapter,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelUsage,
  StopReason,
  TextBlock,
  ToolCall,
  ToolDeclaration,
  ToolResultMessage,
  UserMessage,
} from './model';
export { type AnthropicOptions, anthropic } from './models/anthropic';
export { isModelError, ModelError, type ModelErrorCode } from './models/errors';
export type { RetryOptions } from './models/http';
export { type OpenAICompatibleOptions, openaiCompatible } from './models/openai';
export { type AskReason, type PermissionRules, toolDefinitionHash } from './permissions';
export { createJsonlSessionStore, type JsonlSessionStoreOptions } from './sessions/jsonl';
export type { LoadedSession, SessionInfo, SessionStore } from './sessions/types';
export type { TurnResult, TurnStopReason } from './turn';
