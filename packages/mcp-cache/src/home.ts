import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

function expandTilde(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * The wave home, absolute: the `home` option (an empty string counts as
 * unset), else `$WAVE_HOME` (likewise), else `~/.wave`; a leading `~/` is the
 * user's home directory. A copy of `resolveHome` of @wave/mcp-config (the
 * owner of this rule), so the cache sits beside `mcp.json`; kept local because
 * this package depends on no other @wave package at run time.
 * `test/core.test.ts` asserts the two agree. Touches no file.
 */
export function resolveWaveHome(home: string | undefined, env: Record<string, string | undefined>): string {
  const fromEnv = Object.hasOwn(env, 'WAVE_HOME') ? env.WAVE_HOME : undefined;
  const chosen =
    home !== undefined && home !== ''
      ? home
      : fromEnv !== undefined && fromEnv !== ''
        ? fromEnv
        : join(homedir(), '.wave');
  const expanded = expandTilde(chosen);
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}
