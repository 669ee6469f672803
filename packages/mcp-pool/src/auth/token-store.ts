import { createHash, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { join } from 'node:path';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthProtectedResourceMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { resolveHome } from '@wave/mcp-config';

/** Folder of the token files under the wave home. */
export const OAUTH_DIR = 'oauth';

/**
 * What is stored for one (server URL, client) pair. Secrets live only here:
 * never in logs, errors, events or snapshots.
 */
export interface StoredAuth {
  /** The normalized server URL (see {@link normalizeServerUrl}). */
  serverUrl: string;
  /** The configured client ID the key was made with (absent: a self-registered client). */
  configuredClientId?: string;
  /** Tokens, with `expiresAt` (epoch ms) computed from `expires_in` when they were saved. */
  tokens?: OAuthTokens & { expiresAt?: number };
  /** A dynamically registered (or metadata-document) client, reused by the next sign-in and by refresh. */
  client?: OAuthClientInformationMixed;
  /** Discovery results, needed to refresh without a new discovery. */
  discovery?: {
    authorizationServerUrl: string;
    resourceMetadataUrl?: string;
    resourceMetadata?: OAuthProtectedResourceMetadata;
    authorizationServerMetadata?: AuthorizationServerMetadata;
  };
  /** The RFC 8707 resource indicator sent with the sign-in (sent again on refresh). */
  resource?: string;
  /** Scope a server asked for with `insufficient_scope`; the next sign-in asks for it. */
  stepUpScope?: string;
}

/**
 * The server URL as a key: scheme and host lower-cased (the URL parser does
 * that), default port dropped, no credentials, no fragment; path and query kept.
 */
export function normalizeServerUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.hash = '';
  return u.href;
}

/** File name of the tokens of one server URL + configured client ID. Pure. */
export function tokenFileName(serverUrl: string, clientId: string | undefined): string {
  const key = `${normalizeServerUrl(serverUrl)}\n${clientId ?? ''}`;
  return `${createHash('sha256').update(key).digest('hex')}.json`;
}

/** Options of {@link TokenStore}. */
export interface TokenStoreOptions {
  /** The wave home. @default `$WAVE_HOME`, else `~/.wave` */
  home?: string | undefined;
  /** Milliseconds since the epoch (lock staleness). @default Date.now */
  now?: () => number;
  /** A lock older than this is stale (its holder died or hung). @default 30000 */
  staleLockMs?: number;
  /** Longest wait for a lock before giving up. @default 20000 */
  lockWaitMs?: number;
}

/** A lock that could not be taken in time. */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    (t as { unref?: () => void }).unref?.();
  });

/**
 * Token files under `<home>/oauth/`: one JSON file per server URL + client,
 * mode 0600 in a 0700 folder, written atomically (temp file, fsync, rename).
 * A lock file (`O_EXCL`, with the holder's pid and time; stale when the pid
 * is gone or it is older than `staleLockMs`) serializes refreshes across
 * every pool and process of the user.
 */
export class TokenStore {
  readonly dir: string;
  private readonly now: () => number;
  private readonly staleLockMs: number;
  private readonly lockWaitMs: number;

  constructor(opts: TokenStoreOptions = {}) {
    this.dir = join(resolveHome(opts.home !== undefined ? { home: opts.home } : {}), OAUTH_DIR);
    this.now = opts.now ?? Date.now;
    this.staleLockMs = opts.staleLockMs ?? 30_000;
    this.lockWaitMs = opts.lockWaitMs ?? 20_000;
  }

  /** Full path of the file of `serverUrl` + `clientId`. */
  path(serverUrl: string, clientId: string | undefined): string {
    return join(this.dir, tokenFileName(serverUrl, clientId));
  }

  /** The stored record, or undefined (missing, unreadable or corrupt reads as nothing). */
  async read(file: string): Promise<StoredAuth | undefined> {
    try {
      const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
      return typeof parsed === 'object' && parsed !== null ? (parsed as StoredAuth) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Replace the record atomically; the file is 0600 from its first byte. */
  async write(file: string, record: StoredAuth): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(record)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  /** Delete the record (a missing file is fine). */
  async remove(file: string): Promise<void> {
    await fs.rm(file, { force: true });
  }

  /**
   * Run `fn` holding the lock of `file` (`<file>.lock`). Waits for another
   * holder (polling), takes over a stale lock, and always releases.
   * Rejects with {@link LockTimeoutError} after `lockWaitMs`.
   */
  async withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
    // The wait counts from the call, not from when the directory exists.
    const started = this.now();
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const lock = `${file}.lock`;
    let delay = 10;
    for (;;) {
      try {
        const h = await fs.open(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
        try {
          await h.writeFile(JSON.stringify({ pid: process.pid, at: this.now() }));
        } finally {
          await h.close();
        }
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (await this.isStale(lock)) {
        // Two waiters may both see it stale: rename is atomic, so only one removes it.
        const aside = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}.stale`;
        await fs.rename(lock, aside).then(
          () => fs.rm(aside, { force: true }),
          () => {},
        );
        continue;
      }
      if (this.now() - started > this.lockWaitMs) {
        throw new LockTimeoutError(
          `Timed out after ${this.lockWaitMs} ms waiting for the token lock ${lock}.`,
        );
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
    }
    try {
      return await fn();
    } finally {
      await fs.rm(lock, { force: true });
    }
  }

  private async isStale(lock: string): Promise<boolean> {
    try {
      const text = await fs.readFile(lock, 'utf8');
      const { pid, at } = JSON.parse(text) as { pid?: unknown; at?: unknown };
      if (typeof pid === 'number' && pid !== process.pid && !isAlive(pid)) return true;
      return typeof at === 'number' && this.now() - at > this.staleLockMs;
    } catch (err) {
      // Gone already (try again at once), or written halfway (give its writer a moment).
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      try {
        const st = await fs.stat(lock);
        return this.now() - st.mtimeMs > this.staleLockMs;
      } catch {
        return false;
      }
    }
  }
}
