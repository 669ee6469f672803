import { randomUUID } from 'node:crypto';
import type { CacheFs } from './fs';

/** Options of {@link replaceFileAtomic}. */
export interface ReplaceOptions {
  /** fsync the temp file before the rename. */
  fsync: boolean;
  /** Epoch ms, for the name of a directory moved aside. */
  now: () => number;
  /** Told the new name of a directory that stood where the file goes. */
  onMovedAside?: (aside: string) => void;
}

/**
 * Replace `file` by `text` atomically: a temp file in the same directory
 * (created exclusively, mode 0600), then a rename over `file`. A directory
 * standing where the file goes is renamed aside (kept, never deleted). On any
 * failure the temp file is removed and the error rethrown. Resolves with the
 * written file's key ({@link CacheFs.writeFile}).
 *
 * mcp-config's `writeFileAtomic` does the same job; this package depends on
 * nothing of ours, so it keeps this copy, and both run testkit's
 * `describeAtomicReplace` contract.
 */
export async function replaceFileAtomic(
  fs: CacheFs,
  file: string,
  text: string,
  opts: ReplaceOptions,
): Promise<string> {
  const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    const key = await fs.writeFile(temp, text, { exclusive: true, mode: 0o600, fsync: opts.fsync });
    try {
      await fs.rename(temp, file);
    } catch (error) {
      const st = await fs.stat(file).catch(() => undefined);
      if (st?.kind !== 'directory') throw error;
      const aside = `${file}.moved-aside-${opts.now()}-${randomUUID().slice(0, 8)}`;
      await fs.rename(file, aside);
      opts.onMovedAside?.(aside);
      await fs.rename(temp, file);
    }
    return key;
  } catch (error) {
    await fs.unlink(temp).catch(() => {});
    throw error;
  }
}
