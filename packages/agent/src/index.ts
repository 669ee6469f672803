// Every export here is public API.

// --- Tool search (also at `@wave/agent/search`) ---
export {
  createToolSearchIndex,
  type SearchableTool,
  searchTools,
  type ToolSearchIndex,
  type ToolSearchOptions,
} from './exposure/search';
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
