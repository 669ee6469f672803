import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temp directory per test; `cleanup()` removes it. */
export function makeTempDir(prefix = 'wave-mcp-cache-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A sleep that records what was asked and only yields to pending I/O (tests never really sleep). */
export function fakeSleep(): { sleep(ms: number): Promise<void>; slept: number[]; total(): number } {
  const slept: number[] = [];
  return {
    slept,
    total: () => slept.reduce((a, b) => a + b, 0),
    sleep: async (ms) => {
      slept.push(ms);
      await new Promise((done) => setImmediate(done));
    },
  };
}
