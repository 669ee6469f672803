import { randomUUID } from 'node:crypto';

/** Name of the environment variable that marks every process of a tracked tree. */
export const MARKER_ENV = 'WAVE_REAPER_ID';

/**
 * Namespace of new markers: the spawn option, else `WAVE_REAPER_NAMESPACE`
 * from the given environment, else `'wave'`. Pure.
 */
export function resolveMarkerNamespace(
  option: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (option !== undefined && option !== '') return option;
  const fromEnv = env.WAVE_REAPER_NAMESPACE;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return 'wave';
}

/** A fresh marker value `<namespace>:<uuid>`. */
export function createMarker(namespace: string): string {
  return `${namespace}:${randomUUID()}`;
}
