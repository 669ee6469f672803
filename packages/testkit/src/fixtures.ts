import { fileURLToPath } from 'node:url';
import { TestkitError } from './errors';

/** Names of the fixture servers in `fixtures/<name>.mjs`. */
export const FIXTURE_NAMES = [
  'hello',
  'spawner',
  'crashy',
  'slow-init',
  'hang',
  'noisy-stdout',
  'http',
] as const;

/** A fixture server name. */
export type FixtureName = (typeof FIXTURE_NAMES)[number];

/** How to start a stdio server: fits a `.mcp.json` entry and `StdioClientTransport`. */
export interface StdioServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Absolute path of `fixtures/<name>.mjs`. Throws `UNKNOWN_FIXTURE` for other names. */
export function fixturePath(name: FixtureName): string {
  if (!(FIXTURE_NAMES as readonly string[]).includes(name)) {
    throw new TestkitError(
      'UNKNOWN_FIXTURE',
      `unknown fixture "${String(name)}"; use one of ${FIXTURE_NAMES.join(', ')}`,
    );
  }
  return fileURLToPath(new URL(`../fixtures/${name}.mjs`, import.meta.url));
}

/**
 * `{ command: process.execPath, args: [fixturePath(name)], env }`: a fixture
 * run by the current node binary. `env` holds only what you pass (the
 * fixture's own variables, a `WAVE_REAPER_ID` marker, ...); callers merge it
 * with whatever base environment their spawner uses.
 */
export function fixtureServer(name: FixtureName, env: Record<string, string> = {}): StdioServerSpec {
  return { command: process.execPath, args: [fixturePath(name)], env: { ...env } };
}
