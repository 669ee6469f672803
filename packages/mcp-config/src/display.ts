import type { ConfigIssue, ResolvedServer, ShadowedDefinition } from './types';

/** What a masked literal is shown as. */
export const MASK = '****';

const REFERENCE = /\$\{[^}]*\}/g;
const AUTH_SCHEME = /^((?:Bearer|Basic|Token|Bot|Digest|ApiKey)\s+)/i;
const SEPARATORS_ONLY = /^[\s:;,./@|=-]*$/;
const SECRET_PARAM = /token|key|secret|pass|pwd|auth|sig|credential|session|code/i;

function maskLiteral(text: string, first: boolean): string {
  if (SEPARATORS_ONLY.test(text)) return text;
  if (first) {
    const scheme = AUTH_SCHEME.exec(text);
    if (scheme) {
      const rest = text.slice(scheme[0].length);
      return scheme[1] + (rest === '' ? '' : MASK);
    }
  }
  return MASK;
}

/**
 * Mask one env or header value for display. Pure. Variable references
 * (`${TOKEN}`) are kept, as they name the secret without showing it; every
 * literal run is replaced by `****`, except a leading auth scheme word
 * (`Bearer `, `Basic `, `Token `...) and runs of separators only (`:`, `/`, spaces). The empty string stays empty.
 */
export function maskValue(value: string): string {
  let out = '';
  let last = 0;
  for (const m of value.matchAll(REFERENCE)) {
    out += maskLiteral(value.slice(last, m.index), last === 0) + m[0];
    last = m.index + m[0].length;
  }
  return out + maskLiteral(value.slice(last), last === 0);
}

/** {@link maskValue} over every value of a map (keys are kept). Pure. */
export function maskSecrets(values: Readonly<Record<string, string>>): Record<string, string>;
export function maskSecrets(
  values: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined;
export function maskSecrets(
  values: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const key of Object.keys(values)) {
    Object.defineProperty(out, key, {
      value: maskValue(values[key] ?? ''),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function isOnlyReferences(text: string): boolean {
  return text.replace(REFERENCE, '') === '';
}

/**
 * A URL as written, safe to show. Pure. Works on unexpanded URLs (which may
 * not parse): a password (or a bare token) in the user-info part (which ends
 * at the last `@` before the path, as URL parsers read it) and the values of
 * secret-looking query or fragment parameters (`token`, `api_key`, `sig`,
 * `access_token`...) are masked unless they are variable references.
 */
export function maskUrl(url: string): string {
  // The user-info part ends at the LAST "@" before the path (a password may contain "@").
  let out = url.replace(
    /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)@/,
    (whole, scheme: string, info: string) => {
      const colon = info.indexOf(':');
      if (colon === -1) return isOnlyReferences(info) ? whole : `${scheme}${MASK}@`;
      const password = info.slice(colon + 1);
      return isOnlyReferences(password) ? whole : `${scheme}${info.slice(0, colon)}:${MASK}@`;
    },
  );
  // Query parameters, and fragment parameters (OAuth's implicit flow puts tokens there).
  out = out.replace(/([?&#])([^=&#]*)=([^&#]*)/g, (whole, sep: string, key: string, value: string) =>
    SECRET_PARAM.test(key) && value !== '' && !isOnlyReferences(value) ? `${sep}${key}=${MASK}` : whole,
  );
  return out;
}

/** A server as a person should see it (`wave mcp get`, settings pages): unexpanded, secrets masked. */
export interface ServerDisplay {
  name: string;
  source: ResolvedServer['source'];
  transport: string;
  file?: string;
  plugin?: string;
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  env?: Record<string, string>;
  headers?: Record<string, string>;
  description?: string;
  lifecycle: string;
  connectable: boolean;
  approveTools?: string[];
  requestedApprovals?: string[];
  shadowed: ShadowedDefinition[];
  issues: ConfigIssue[];
}

/**
 * The display form of a server. Pure. Uses the unexpanded `raw` config, so
 * no expanded value (secret) is ever shown; env and header values are masked
 * with {@link maskValue}, the URL with {@link maskUrl}. `args` and `command`
 * are shown as written.
 */
export function displayServer(server: ResolvedServer): ServerDisplay {
  const raw = server.raw ?? server.config;
  const d: ServerDisplay = {
    name: server.name,
    source: server.source,
    transport: server.transport,
    lifecycle: server.config.lifecycle ?? 'lazy',
    connectable: server.connectable ?? true,
    shadowed: server.shadowed ?? [],
    issues: server.issues ?? [],
  };
  if (server.file !== undefined) d.file = server.file;
  if (server.plugin !== undefined) d.plugin = server.plugin;
  if (raw.command !== undefined) d.command = raw.command;
  if (raw.args !== undefined) d.args = [...raw.args];
  if (raw.cwd !== undefined) d.cwd = raw.cwd;
  if (raw.url !== undefined) d.url = server.displayUrl ?? maskUrl(raw.url);
  if (raw.env !== undefined) d.env = server.displayEnv ?? maskSecrets(raw.env);
  if (raw.headers !== undefined) d.headers = server.displayHeaders ?? maskSecrets(raw.headers);
  if (raw.description !== undefined) d.description = raw.description;
  if (server.config.approveTools !== undefined) d.approveTools = [...server.config.approveTools];
  if (server.requestedApprovals !== undefined) d.requestedApprovals = [...server.requestedApprovals];
  return d;
}
