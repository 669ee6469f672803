import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { ResolvedServer, ServerConfig } from './types';

/** The fields a fingerprint covers: what would run (or be dialed), not how it is managed. */
export type FingerprintInput = Pick<
  ServerConfig,
  'type' | 'command' | 'args' | 'env' | 'cwd' | 'url' | 'headers' | 'oauth'
>;

function isResolved(input: ServerConfig | ResolvedServer): input is ResolvedServer {
  return 'name' in input && 'config' in input && typeof (input as ResolvedServer).config === 'object';
}

function nonEmptyRecord(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.keys(value).length > 0 ? (value as Record<string, unknown>) : undefined;
}

/**
 * The normalized object a fingerprint hashes. Pure. `type` is inferred when
 * absent (`command` = stdio, `url` = http); empty `args` / `env` / `headers`
 * count as absent (so `"env": {}` does not change it). `oauth` (which client signs in)
 * is included when not empty, so fingerprints of servers without it are unchanged. Lifecycle, timeouts,
 * `approveTools`, `readOnlyTools` and `description` are not part of it.
 */
export function fingerprintPayload(input: FingerprintInput, workdir: string): Record<string, unknown> {
  const type =
    typeof input.type === 'string'
      ? input.type
      : typeof input.command === 'string'
        ? 'stdio'
        : typeof input.url === 'string'
          ? 'http'
          : undefined;
  return {
    type,
    command: input.command,
    args: Array.isArray(input.args) && input.args.length > 0 ? input.args : undefined,
    env: nonEmptyRecord(input.env),
    cwd: input.cwd,
    url: input.url,
    headers: nonEmptyRecord(input.headers),
    oauth: nonEmptyRecord(input.oauth),
    workdir,
  };
}

/**
 * `sha256(stable-stringify({type, command, args, env, cwd, url, headers, workdir}))`
 * as 64 hex characters, over the *unexpanded* values. Pure.
 *
 * Given a {@link ResolvedServer}, hashes its `raw` (unexpanded) configuration,
 * or its `config` when it was built by hand without `raw`. It changes whenever
 * what the server would run changes, and differs per workdir. Pass the workdir
 * as an absolute path (`loadMcpConfig` does).
 */
export function fingerprint(input: ServerConfig | ResolvedServer, workdir: string): string {
  const config: FingerprintInput = isResolved(input) ? (input.raw ?? input.config) : input;
  return createHash('sha256')
    .update(stableStringify(fingerprintPayload(config, workdir)))
    .digest('hex');
}
