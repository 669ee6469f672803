import { constants, promises as fsp } from 'node:fs';

/** The part of a file's status this package uses. */
export interface ConfigFileStat {
  size: number;
  mode: number;
  uid: number;
  gid: number;
  /** Last modification, epoch ms (judging abandoned lock files). */
  mtimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/** Options of {@link ConfigFs.readFile}. */
export interface ReadFileOptions {
  /** Fail with code `EFBIG` once more than this many bytes were read. @default unlimited */
  maxBytes?: number;
  /** Fail with code `EILSEQ` when the bytes are not valid UTF-8 (else they decode with U+FFFD). @default false */
  strictUtf8?: boolean;
}

/**
 * The file-system operations this package performs: the only I/O it does.
 * Inject one to simulate failures (the default is {@link nodeConfigFs}).
 * Errors must carry Node's `code` (`ENOENT`, `EACCES`, ...).
 */
export interface ConfigFs {
  /**
   * Read a regular file as text. Must not block on FIFOs or devices: a path
   * that is not a regular file (after following links) fails with code
   * `EWAVENOTFILE`; `maxBytes` is enforced while reading (`EFBIG`).
   */
  readFile(path: string, options?: ReadFileOptions): Promise<string>;
  stat(path: string): Promise<ConfigFileStat>;
  realpath(path: string): Promise<string>;
  /** The target of a symbolic link as written; fails with `EINVAL` when `path` is not a link. */
  readlink(path: string): Promise<string>;
  /**
   * Reject (EACCES...) when the current user may not write `path`. Root is
   * not exempt: a file or directory without any write bit is refused.
   */
  checkWritable(path: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  /** Create `path` (it must not exist), write `data`, flush it to disk; on failure nothing is left at `path`. */
  writeNewFile(path: string, data: string, mode: number): Promise<void>;
  /** Hard-link `existing` to `newPath`; fails with `EEXIST` when `newPath` exists (an atomic create). */
  link(existing: string, newPath: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  chown(path: string, uid: number, gid: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

function fsError(code: string, message: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${message}, ${path}`), { code, path });
}

/** Read at most `maxBytes + 1` bytes of a regular file, never blocking on a FIFO or device. */
async function readRegularFile(path: string, options: ReadFileOptions = {}): Promise<string> {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after).
  const handle = await fsp.open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw fsError('EWAVENOTFILE', 'not a regular file', path);
    const limit = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const chunks: Buffer[] = [];
    let total = 0;
    // The size from fstat is only a hint for the first read (the file may grow): the cap is counted as read.
    let want = stat.size + 1;
    for (;;) {
      const size = Math.max(1, Math.min(want, 1024 * 1024, limit + 1 - total));
      want = 64 * 1024;
      if (size <= 0) throw fsError('EFBIG', `larger than ${limit} bytes`, path);
      const buffer = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(buffer, 0, size, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) throw fsError('EFBIG', `larger than ${limit} bytes`, path);
    }
    const bytes = Buffer.concat(chunks, total);
    if (!options.strictUtf8) return bytes.toString('utf8');
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw fsError('EILSEQ', 'not valid UTF-8', path);
    }
  } finally {
    await handle.close();
  }
}

/** The real file system (node:fs/promises). */
export const nodeConfigFs: ConfigFs = {
  readFile: readRegularFile,
  stat: (path) => fsp.stat(path),
  realpath: (path) => fsp.realpath(path),
  readlink: (path) => fsp.readlink(path),
  checkWritable: async (path) => {
    await fsp.access(path, constants.W_OK);
    // access() always succeeds for root: honour the mode bits anyway.
    if (((await fsp.stat(path)).mode & 0o222) === 0) {
      throw fsError('EACCES', 'permission denied (no write bit is set)', path);
    }
  },
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  writeNewFile: async (path, data, mode) => {
    const handle = await fsp.open(path, 'wx', mode);
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fsp.unlink(path).catch(() => undefined);
      throw err;
    }
    await handle.close();
  },
  link: (existing, newPath) => fsp.link(existing, newPath),
  chmod: (path, mode) => fsp.chmod(path, mode),
  chown: (path, uid, gid) => fsp.chown(path, uid, gid),
  rename: (path, to) => fsp.rename(path, to),
  unlink: (path) => fsp.unlink(path),
};

/** The `code` of a Node file-system error, if any. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** True for the codes that mean "not allowed". */
export function isPermissionCode(code: string | undefined): boolean {
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}
