// Every export here is public API.
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
