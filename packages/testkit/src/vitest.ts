/**
 * Every export here is public API of `@wave/testkit/vitest`: helpers that
 * register their own cleanup with vitest, so they must be called inside a
 * running test. Kept apart from the root entry, which scripts and benches
 * load outside vitest.
 * @packageDocumentation
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * Creates a fresh directory under the OS temp dir and removes it (with
 * everything in it) when the current test finishes, passed or failed. A
 * directory the test made unreadable is made readable again first. Call it
 * inside a test (or a `beforeEach`).
 * @param prefix start of the directory name. @default 'wave-test-'
 */
export function tempDir(prefix = 'wave-test-'): string {
  const path = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => {
    try {
      chmodSync(path, 0o755);
    } catch {
      // already gone
    }
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  });
  return path;
}
