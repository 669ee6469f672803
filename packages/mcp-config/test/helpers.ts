import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * Register cleanup and return a maker of fresh temp directories (removed
 * after each test). Tests never use the real home.
 */
export function useTempDirs(): (prefix?: string) => string {
  const created: string[] = [];
  afterEach(() => {
    for (const dir of created.splice(0)) {
      try {
        chmodSync(dir, 0o755);
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return (prefix = 'mcp-config-') => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    created.push(dir);
    return dir;
  };
}

/** Deep-freeze a value so a test proves a function does not mutate its input. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
