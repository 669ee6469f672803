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
