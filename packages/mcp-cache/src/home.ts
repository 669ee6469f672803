import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The wave home: the `home` option, else `$WAVE_HOME` (an empty value counts
 * as unset), else `~/.wave`. Same rule as @wave/mcp-config; kept local (three
 * lines) because this package depends on no other @wave package.
 */
export function resolveWaveHome(home: string | undefined, env: Record<string, string | undefined>): string {
  return home ?? (env.WAVE_HOME || join(homedir(), '.wave'));
}
