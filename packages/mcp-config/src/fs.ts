import { constants, promises as fsp } from 'node:fs';

/** The part of a file's status this package uses. */
export interface ConfigFileStat {
  size: number;
  mode: number;
  uid: number;
  gid: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/**
 * The file-system operations this package performs: the only I/O it does.
 * Inject one to simulate failures (the default is {@link nodeConfigFs}).
 * Errors must carry Node's `code` (`ENOENT`, `EACCES`, ...).
 */
export interface ConfigFs {
  readFile(path: string): Promise<string>;
  stat(path: string): Promise<ConfigFileStat>;
  realpath(path: string): Promise<string>;
  /** Reject (EACCES...) when the current user may not write `path`. */
  checkWritable(path: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  /** Create `path` (it must not exist), write `data`, flush it to disk. */
  writeNewFile(path: string, data: string, mode: number): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  chown(path: string, uid: number, gid: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

/** The real file system (node:fs/promises). */
export const nodeConfigFs: ConfigFs = {
  readFile: (path) => fsp.readFile(path, 'utf8'),
  stat: (path) => fsp.stat(path),
  realpath: (path) => fsp.realpath(path),
  checkWritable: (path) => fsp.access(path, constants.W_OK),
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  writeNewFile: async (path, data, mode) => {
    const handle = await fsp.open(path, 'wx', mode);
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
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
