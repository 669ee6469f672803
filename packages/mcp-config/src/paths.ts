import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Env } from './types';

/** Name of the user-level config file inside the wave home. */
export const USER_CONFIG_FILE = 'mcp.json';
/** Name of the project config file inside the workdir. */
export const PROJECT_CONFIG_FILE = '.mcp.json';

/** Options of {@link resolveHome}. */
export interface ResolveHomeOptions {
  /** Explicit wave home; wins over everything. */
  home?: string;
  /** Environment to read `WAVE_HOME` from. @default process.env */
  env?: Env;
}

function expandTilde(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * The wave home directory, absolute: the `home` option if given, else
 * `$WAVE_HOME` (when set and not empty), else `~/.wave`. A leading `~/` is
 * expanded. Touches no file.
 */
export function resolveHome(options: ResolveHomeOptions = {}): string {
  const env = options.env ?? process.env;
  const fromEnv = Object.hasOwn(env, 'WAVE_HOME') ? env.WAVE_HOME : undefined;
  const chosen =
    options.home !== undefined && options.home !== ''
      ? options.home
      : fromEnv !== undefined && fromEnv !== ''
        ? fromEnv
        : join(homedir(), '.wave');
  const expanded = expandTilde(chosen);
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

/** `<home>/mcp.json`: the user-level config file. Pure. */
export function userConfigPath(home: string): string {
  return join(home, USER_CONFIG_FILE);
}

/** `<workdir>/.mcp.json`: the project config file. Pure. */
export function projectConfigPath(workdir: string): string {
  return join(workdir, PROJECT_CONFIG_FILE);
}
