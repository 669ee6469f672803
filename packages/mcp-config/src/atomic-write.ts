import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { ConfigFs } from './fs';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the new file (the temp file is created with it). */
  mode: number;
  /**
   * Runs after the temp file is written and synced, just before the rename:
   * set owner or mode, or check that the file did not change meanwhile.
   * Returning false cancels the write (the temp file is removed).
   */
  beforeRename?: (temp: string) => Promise<boolean>;
}

/**
 * Replace `file` by `text` atomically, the one way this package writes a
 * file: a new temp file in the same directory (`.<name>.<pid>.<random>.tmp`,
 * created exclusively with `mode`, written and fsynced), then a rename over
 * `file`. Readers see the old content or the new one, never a torn file. On
 * any failure the temp file is removed, `file` is untouched and the error is
 * rethrown. Resolves false when `beforeRename` cancelled the write.
 */
export async function writeFileAtomic(
  fs: ConfigFs,
  file: string,
  text: string,
  options: AtomicWriteOptions,
): Promise<boolean> {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeNewFile(temp, text, options.mode);
    if (options.beforeRename && !(await options.beforeRename(temp))) {
      await fs.unlink(temp).catch(() => undefined);
      return false;
    }
    await fs.rename(temp, file);
    return true;
  } catch (err) {
    // The name is ours (random, created exclusively): remove whatever is there, even a half-written file.
    await fs.unlink(temp).catch(() => undefined);
    throw err;
  }
}
