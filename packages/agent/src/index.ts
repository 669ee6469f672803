// Every export here is public API.

// Tool exposure and output limits (flat names, schema sanitizing, output guard).
export { fullToolName, parseFullToolName } from './exposure/flat';
export { type SanitizeSchemaOptions, sanitizeSchema } from './exposure/schema';
export { DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './guard/truncate';
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
