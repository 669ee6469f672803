export { createToolCache, type ToolCache, type ToolCacheOptions } from './cache';
export {
  CACHE_FILE_NAME,
  CACHE_FORMAT_VERSION,
  DEFAULT_TTL_MS,
  isExpired,
  mergeSnapshots,
  type ParsedCache,
  parseCacheText,
  serializeCache,
  type WritePlan,
} from './core';
export { ToolCacheError, type ToolCacheErrorCode } from './errors';
export { type CacheFileStat, type CacheFs, nodeCacheFs } from './fs';
export { resolveWaveHome } from './home';
export type {
  CachedTool,
  Clock,
  ToolCacheDebugCode,
  ToolCacheDebugEvent,
  ToolSnapshot,
  ToolSnapshotInput,
} from './types';
