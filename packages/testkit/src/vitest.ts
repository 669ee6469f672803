/**
 * Every export here is public API of `@wave/testkit/vitest`: helpers that
 * register their own cleanup with vitest, so they must be called inside a
 * running test. Kept apart from the root entry, which scripts and benches
 * load outside vitest.
 * @packageDocumentation
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';

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

/** How a writer under {@link describeAtomicReplace} treats a directory standing where its file goes. */
export type DirectoryInTheWay = 'throws' | 'moved-aside';

/** Options of {@link describeAtomicReplace}. */
export interface AtomicReplaceContractOptions {
  /**
   * What the writer does when a directory stands where its file goes: fail
   * (and leave the directory as it was), or rename the directory aside (kept,
   * never deleted) and write the file.
   * @default 'throws'
   */
  directoryInTheWay?: DirectoryInTheWay;
  /** Mode bits (`& 0o777`) the written file must have on POSIX. @default 0o600 */
  mode?: number;
}

/**
 * The one contract of every "replace a file atomically" helper in the
 * workspace (each package that may not depend on another keeps its own
 * copy, and each copy runs this): the file ends up with exactly the new text
 * and the mode asked for; a concurrent reader sees the old text or the new
 * one, never a torn file; a failed write leaves the old file and no temp file
 * behind; nothing but the file (and a directory moved aside) is left in the
 * folder. Registers a `describe` block.
 * @param name what is tested, for the test titles
 * @param write replaces `file` by `text`
 */
export function describeAtomicReplace(
  name: string,
  write: (file: string, text: string) => Promise<unknown>,
  opts: AtomicReplaceContractOptions = {},
): void {
  const mode = opts.mode ?? 0o600;
  const inTheWay = opts.directoryInTheWay ?? 'throws';
  describe(`${name}: atomic replace contract`, () => {
    it('writes exactly the text, with the mode asked for, and leaves no temp file', async () => {
      const dir = tempDir('wave-atomic-');
      const file = join(dir, 'target.json');
      await write(file, 'first, and longer than the second\n');
      await write(file, 'second\n');
      expect(readFileSync(file, 'utf8')).toBe('second\n');
      if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(mode);
      expect(readdirSync(dir)).toEqual(['target.json']);
    });

    it('a reader sees the old text or the new one, never a torn file', async () => {
      const dir = tempDir('wave-atomic-');
      const file = join(dir, 'target.json');
      const texts = ['a'.repeat(300_000), 'b'.repeat(200_000), 'c'.repeat(400_000)];
      await write(file, texts[0] as string);
      let writing = true;
      const seen = new Set<string>();
      const reader = (async () => {
        while (writing) {
          const text = await readFile(file, 'utf8');
          seen.add(`${text[0]}:${text.length}`);
          await new Promise((r) => setImmediate(r));
        }
      })();
      try {
        for (let i = 0; i < 30; i++) await write(file, texts[i % texts.length] as string);
      } finally {
        writing = false;
        await reader;
      }
      const whole = new Set(texts.map((t) => `${t[0]}:${t.length}`));
      expect([...seen].filter((s) => !whole.has(s))).toEqual([]);
      expect(readdirSync(dir)).toEqual(['target.json']);
    });

    it(
      inTheWay === 'throws'
        ? 'a directory in the way: fails, keeps the directory, leaves no temp file'
        : 'a directory in the way: moved aside (kept), then the file is written',
      async () => {
        const dir = tempDir('wave-atomic-');
        const file = join(dir, 'target.json');
        mkdirSync(file);
        writeFileSync(join(file, 'inside.txt'), 'keep me');
        if (inTheWay === 'throws') {
          await expect(write(file, 'new\n')).rejects.toThrow();
          expect(readFileSync(join(file, 'inside.txt'), 'utf8')).toBe('keep me');
          expect(readdirSync(dir)).toEqual(['target.json']);
        } else {
          await write(file, 'new\n');
          expect(readFileSync(file, 'utf8')).toBe('new\n');
          const aside = readdirSync(dir).filter((n) => n !== 'target.json');
          expect(aside).toHaveLength(1);
          expect(readFileSync(join(dir, aside[0] as string, 'inside.txt'), 'utf8')).toBe('keep me');
        }
      },
    );

    it('a failed write (no folder to write in) leaves nothing and rejects', async () => {
      const dir = tempDir('wave-atomic-');
      const blocker = join(dir, 'not-a-folder');
      writeFileSync(blocker, 'a file where a folder should be');
      await expect(write(join(blocker, 'target.json'), 'new\n')).rejects.toThrow();
      expect(readdirSync(dir)).toEqual(['not-a-folder']);
      expect(readFileSync(blocker, 'utf8')).toBe('a file where a folder should be');
    });
  });
}
