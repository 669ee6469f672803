import { promises as fsp } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from './atomic-write';
import { McpConfigError } from './errors';
import { nodeConfigFs } from './fs';
import { acquireConfigLock, type ConfigLock, ConfigLockTimeout } from './lock';
import type { ResolvedServer } from './types';

/**
 * Per-machine MCP switches, kept in the wave home and never in a shared config
 * file: which servers this user turned off (`disabled`), and which project or
 * plugin servers this user trusted to run here (`trusted`, bound to the
 * server's fingerprint so a changed command or URL asks again).
 */
export interface LocalState {
  /** Keys of {@link localServerKey} turned off on this machine. */
  disabled: string[];
  /** Key of {@link localServerKey} -> the fingerprint that was trusted. */
  trusted: Record<string, string>;
}

/** The file under the wave home that holds {@link LocalState}. */
export const LOCAL_STATE_FILE = 'mcp-local-state.json';

/** Where the local state of `home` lives. */
export function localStatePath(home: string): string {
  return join(home, LOCAL_STATE_FILE);
}

/** The part of a server that identifies it across loads. */
export type LocalServerRef = Pick<ResolvedServer, 'name' | 'source' | 'file' | 'plugin'>;

/**
 * A stable key for a configured server: its source and name, plus the file
 * (project servers of different repositories are different servers) or the
 * plugin that defines it. Pure.
 */
export function localServerKey(server: LocalServerRef): string {
  switch (server.source) {
    case 'project':
      return `project:${server.file ?? ''}#${server.name}`;
    case 'plugin':
      return `plugin:${server.plugin ?? ''}#${server.name}`;
    default:
      return `${server.source}:${server.name}`;
  }
}

function emptyState(): LocalState {
  return { disabled: [], trusted: {} };
}

/** Coerce whatever the file holds into a {@link LocalState}, dropping what is malformed. Pure. */
export function normalizeLocalState(value: unknown): LocalState {
  const out = emptyState();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.disabled)) {
    out.disabled = [...new Set(v.disabled.filter((k): k is string => typeof k === 'string'))].sort();
  }
  if (typeof v.trusted === 'object' && v.trusted !== null && !Array.isArray(v.trusted)) {
    for (const [k, fp] of Object.entries(v.trusted as Record<string, unknown>)) {
      if (typeof fp === 'string')
        Object.defineProperty(out.trusted, k, {
          value: fp,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
  }
  return out;
}

const MAX_STATE_BYTES = 4 * 1024 * 1024;

/**
 * Read the local state of `home`. A missing, unreadable, oversized or corrupt
 * file reads as empty: every server enabled, nothing trusted. Never throws.
 */
export async function readLocalState(home: string): Promise<LocalState> {
  const file = localStatePath(home);
  try {
    const st = await fsp.stat(file);
    if (!st.isFile() || st.size > MAX_STATE_BYTES) return emptyState();
    return normalizeLocalState(JSON.parse(await fsp.readFile(file, 'utf8')));
  } catch {
    return emptyState();
  }
}

/** How long a local-state write waits for the lock, and when a lock counts as abandoned. */
const LOCK_MS = 10_000;

async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  let lock: ConfigLock;
  try {
    lock = await acquireConfigLock({
      fs: nodeConfigFs,
      lockPath: `${file}.lock`,
      timeoutMs: LOCK_MS,
      staleMs: LOCK_MS,
    });
  } catch (err) {
    if (err instanceof ConfigLockTimeout) {
      throw new McpConfigError(
        'CONFIG_CONFLICT',
        `Timed out waiting for the lock ${err.lockPath} (${err.reason}); remove it if no wave process is running.`,
        { file, cause: err },
      );
    }
    throw err;
  }
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

/**
 * Change the local state of `home`: read, apply `change`, write atomically
 * (temp file + rename, mode 0600), under a lock file so concurrent wave
 * processes never lose each other's switches. Returns the new state.
 */
export async function updateLocalState(
  home: string,
  change: (state: LocalState) => void,
): Promise<LocalState> {
  const file = localStatePath(home);
  await fsp.mkdir(dirname(file), { recursive: true });
  return withLock(file, async () => {
    const state = await readLocalState(home);
    change(state);
    const next = normalizeLocalState(state);
    await writeFileAtomic(nodeConfigFs, file, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    return next;
  });
}

/** Turn a server off (or back on) on this machine. */
export function setServerDisabled(
  home: string,
  server: LocalServerRef,
  disabled: boolean,
): Promise<LocalState> {
  const key = localServerKey(server);
  return updateLocalState(home, (s) => {
    s.disabled = s.disabled.filter((k) => k !== key);
    if (disabled) s.disabled.push(key);
  });
}

/** Is the server turned off on this machine? Pure. */
export function isLocallyDisabled(state: LocalState, server: LocalServerRef): boolean {
  return state.disabled.includes(localServerKey(server));
}

/** Trust a project or plugin server to run on this machine, as configured now (its fingerprint). */
export function trustServer(
  home: string,
  server: LocalServerRef & { fingerprint: string },
): Promise<LocalState> {
  const key = localServerKey(server);
  return updateLocalState(home, (s) => {
    Object.defineProperty(s.trusted, key, {
      value: server.fingerprint,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
}

/**
 * Does the server need no trust decision, or was it trusted as configured
 * now? User and constructor servers are the user's own; project and plugin
 * servers need trust bound to their current fingerprint. Pure.
 */
export function isServerTrusted(
  state: LocalState,
  server: LocalServerRef & { fingerprint: string },
): boolean {
  if (server.source !== 'project' && server.source !== 'plugin') return true;
  return (
    Object.hasOwn(state.trusted, localServerKey(server)) &&
    state.trusted[localServerKey(server)] === server.fingerprint
  );
}
