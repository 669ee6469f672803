import { randomUUID } from 'node:crypto';
import { findProcessesByMarker, isPidAlive, killPids, MARKER_ENV } from './procfs';
import { waitFor } from './wait';

/**
 * A fresh marker `<namespace>:<uuid>` for `WAVE_REAPER_ID`. The namespace is
 * `namespace`, else `WAVE_REAPER_NAMESPACE` (set per test run by the leak
 * check), else `wave`, as in proc-reaper.
 */
export function makeMarker(namespace?: string): string {
  return `${namespace ?? process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:${randomUUID()}`;
}

/** `{ WAVE_REAPER_ID: marker }`, to spread into a spawned process's env. */
export function markerEnv(marker: string): Record<string, string> {
  return { [MARKER_ENV]: marker };
}

/**
 * SIGKILLs every process carrying the marker (exact value or `prefix:`),
 * repeating until none is left (a dying parent may spawn more), and resolves
 * with every pid it killed. Rejects with `WAIT_TIMEOUT` if some survive `timeoutMs`. Linux only.
 * @param options.timeoutMs @default 5000
 */
export async function killMarked(
  prefixOrValue: string,
  options: { timeoutMs?: number } = {},
): Promise<number[]> {
  const killed = new Set<number>();
  await waitFor(
    () => {
      const alive = findProcessesByMarker(prefixOrValue).filter(isPidAlive);
      for (const pid of killPids(alive)) killed.add(pid);
      return alive.length === 0;
    },
    {
      timeoutMs: options.timeoutMs ?? 5000,
      intervalMs: 20,
      message: `processes marked ${prefixOrValue} to die`,
    },
  );
  return [...killed];
}
