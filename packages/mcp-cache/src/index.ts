/** Every export here is public API: the per-machine MCP tool-list snapshot cache. Tests import modules directly. */
export { createToolCache, type ToolCache, type ToolCacheOptions } from './cache';
export { isMcpCacheError, McpCacheError, type McpCacheErrorCode } from './errors';
export type { CacheFileStat, CacheFs } from './fs';
export type {
  CachedTool,
  Clock,
  ToolCacheDebugCode,
  ToolCacheDebugEvent,
  ToolSnapshot,
  ToolSnapshotInput,
} from './types';
