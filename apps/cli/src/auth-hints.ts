import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResolvedServer } from '@wave/mcp-config';

/**
 * Remote servers a wave command last found needing a sign-in (`needs-auth`),
 * so that `wave mcp list`, which dials nothing, can say so. A hint only: it
 * holds server URLs and client IDs, never a token.
 */
export const NEEDS_AUTH_FILE = 'mcp-needs-auth.json';

/** The command that signs in to `name`. Pure. */
export function loginCommand(name: string): string {
  return `wave mcp login ${/^[\w.-]+$/.test(name) ? name : JSON.stringify(name)}`;
}

/** What a `needs-auth` server tells the user (the pool's message speaks to programs). Pure. */
export function needsAuthText(name: string): string {
  return `"${name}" needs you to sign in (OAuth): run ${loginCommand(name)}`;
}

/** The key of a server's sign-in: its URL and configured client, as the pool keys its tokens. Pure. */
export function signInKey(s: ResolvedServer): string | undefined {
  if (s.config.url === undefined) return undefined;
  return `${s.config.url}\n${s.config.oauth?.clientId ?? ''}`;
}

/** The keys of servers last seen needing a sign-in (empty when the file is missing or unreadable). */
export async function readNeedsAuth(home: string): Promise<Set<string>> {
  try {
    const parsed = JSON.parse(await readFile(join(home, NEEDS_AUTH_FILE), 'utf8')) as unknown;
    return new Set(Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string') : []);
  } catch {
    return new Set();
  }
}

/**
 * Record what dialing found: `true` = needs a sign-in, `false` = signed in
 * (or not needed). Best effort: a failure to write is ignored.
 */
export async function noteNeedsAuth(
  home: string,
  seen: readonly { server: ResolvedServer; needsAuth: boolean }[],
): Promise<void> {
  const keys = await readNeedsAuth(home);
  let changed = false;
  for (const { server, needsAuth } of seen) {
    const key = signInKey(server);
    if (key === undefined || keys.has(key) === needsAuth) continue;
    if (needsAuth) keys.add(key);
    else keys.delete(key);
    changed = true;
  }
  if (!changed) return;
  const file = join(home, NEEDS_AUTH_FILE);
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify([...keys].sort(), null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, file);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
