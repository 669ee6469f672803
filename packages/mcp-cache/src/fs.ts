/**
 * The thin file-system adapter. Everything the cache does to disk goes
 * through {@link CacheFs}, so tests (and unusual hosts) can substitute it.
 */
import { constants } from 'node:fs';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';

/** What the cache needs to know about a path (symlinks followed). */
export interface CacheFileStat {
  kind: 'file' | 'directory' | 'other';
  /** Identity of this version of the file (device, inode, size, mtime): equal keys mean unchanged content. */
  key: string;
  mtimeMs: number;
}

/** File operations used by the cache. Errors are Node-style (`code: 'ENOENT'`, ...). */
export interface CacheFs {
  stat(path: string): Promise<CacheFileStat>;
  /**
   * Reads a regular file. Must not block on FIFOs or devices: a path that is
   * not a regular file fails with code `EWAVENOTFILE`. With `maxBytes`, a
   * file larger than that fails with code `EFBIG`, counted while reading.
   */
  readFile(path: string, maxBytes?: number): Promise<{ data: Uint8Array; key: string }>;
  /**
   * Creates (`exclusive`: fails with `EEXIST` if the path exists) or
   * truncates `path`, writes `data`, optionally fsyncs, and returns the
   * written file's key (as {@link CacheFileStat.key}). When an exclusive
   * create fails after the file was created (disk full), the file is removed:
   * an empty lock file must never be left behind.
   */
  writeFile(
    path: string,
    data: string,
    opts: { exclusive: boolean; mode: number; fsync: boolean },
  ): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Creates a directory and its parents; no error if it exists. */
  mkdir(path: string): Promise<void>;
}

interface BigStat {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  mtimeMs: bigint;
  isFile(): boolean;
  isDirectory(): boolean;
}

const keyOf = (s: BigStat): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;

const kindOf = (s: BigStat): CacheFileStat['kind'] =>
  s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other';

function notAFile(path: string): Error {
  return Object.assign(new Error(`${path} is not a regular file`), { code: 'EWAVENOTFILE', path });
}

/** The real file system (node:fs/promises). */
export function nodeCacheFs(): CacheFs {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  const readFlags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
  return {
    async stat(path) {
      const s = (await stat(path, { bigint: true })) as BigStat;
      return { kind: kindOf(s), key: keyOf(s), mtimeMs: Number(s.mtimeMs) };
    },
    async readFile(path, maxBytes) {
      const handle = await open(path, readFlags);
      try {
        const s = (await handle.stat({ bigint: true })) as BigStat;
        if (!s.isFile()) throw notAFile(path);
        if (maxBytes === undefined) return { data: await handle.readFile(), key: keyOf(s) };
        const chunks: Buffer[] = [];
        let total = 0;
        for (;;) {
          const buffer = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
          if (bytesRead === 0) break;
          chunks.push(buffer.subarray(0, bytesRead));
          total += bytesRead;
          if (total > maxBytes) {
            throw Object.assign(new Error(`${path} is larger than ${maxBytes} bytes`), {
              code: 'EFBIG',
              path,
            });
          }
        }
        return { data: Buffer.concat(chunks, total), key: keyOf(s) };
      } finally {
        await handle.close();
      }
    },
    async writeFile(path, data, opts) {
      const handle = await open(path, opts.exclusive ? 'wx' : 'w', opts.mode);
      try {
        await handle.writeFile(data, 'utf8');
        if (opts.fsync) await handle.sync();
        return keyOf((await handle.stat({ bigint: true })) as BigStat);
      } catch (error) {
        // Created by this call (exclusive), so ours to remove: a half-written lock would block others.
        if (opts.exclusive) await unlink(path).catch(() => {});
        throw error;
      } finally {
        await handle.close();
      }
    },
    rename: (from, to) => rename(from, to),
    unlink: (path) => unlink(path),
    async mkdir(path) {
      await mkdir(path, { recursive: true });
    },
  };
}
