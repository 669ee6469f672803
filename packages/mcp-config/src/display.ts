import { forEachReference } from './references';
import type { ConfigIssue, OAuthConfig, ResolvedServer, ShadowedDefinition } from './types';

/*
 * Every function here is a linear scanner (no backtracking regex runs over
 * the whole input): a repository's config file is untrusted input and is
 * shown in panels, so masking must never freeze the host.
 */

/** What a masked literal is shown as. */
export const MASK = '****';

const AUTH_SCHEME = /^((?:Bearer|Basic|Token|Bot|Digest|ApiKey)[ \t]+)/i;
/** Names of flags, parameters and header-like prefixes that carry a secret. */
const SECRET_NAME = /token|key|secret|pass|pwd|auth|sig|credential|session|cookie|jwt|bearer|private/i;

function isSeparatorsOnly(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (!' \t\r\n:;,./@|=-'.includes(text.charAt(i))) return false;
  }
  return true;
}

function maskLiteral(text: string, first: boolean): string {
  if (isSeparatorsOnly(text)) return text;
  if (first) {
    const scheme = AUTH_SCHEME.exec(text.slice(0, 32));
    if (scheme?.[1]) {
      const rest = text.slice(scheme[1].length);
      return scheme[1] + (rest === '' ? '' : MASK);
    }
  }
  return MASK;
}

/**
 * `text` with the default of every `${NAME:-default}` masked; everything
 * else as written. Pure, linear.
 */
export function maskDefaults(text: string): string {
  let out = '';
  let last = 0;
  forEachReference(text, (start, end, nameEnd, fallbackStart) => {
    if (fallbackStart === -1 || fallbackStart === end - 1) return;
    out += `${text.slice(last, start)}\${${text.slice(start + 2, nameEnd)}:-${MASK}}`;
    last = end;
  });
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Mask one env or header value for display. Pure, linear. Variable
 * references (`${TOKEN}`) are kept, as they name the secret without showing
 * it (a default, `${TOKEN:-...}`, is masked); every literal run is replaced
 * by `****`, except a leading auth scheme word (`Bearer `, `Basic `,
 * `Token `...) and runs of separators only (`:`, `/`, spaces). Text in braces
 * that is not a variable name (`${sk-...}`) is a literal. The empty string
 * stays empty.
 */
export function maskValue(value: string): string {
  let out = '';
  let last = 0;
  forEachReference(value, (start, end, nameEnd, fallbackStart) => {
    if (nameEnd === -1) return; // not a reference: part of the literal run
    out += maskLiteral(value.slice(last, start), last === 0);
    out +=
      fallbackStart === -1 || fallbackStart === end - 1
        ? value.slice(start, end)
        : `\${${value.slice(start + 2, nameEnd)}:-${MASK}}`;
    last = end;
  });
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

/**
 * `oauth` settings safe to show. Pure. `clientSecret` is masked like a header
 * value ({@link maskValue}: `${VAR}` references kept, literals `****`);
 * `clientId` and scopes are public identifiers, shown with `${X:-default}`
 * defaults masked.
 */
export function maskOAuth(oauth: Readonly<OAuthConfig>): OAuthConfig {
  const out: OAuthConfig = {};
  if (oauth.clientId !== undefined) out.clientId = maskDefaults(oauth.clientId);
  if (oauth.clientSecret !== undefined) out.clientSecret = maskValue(oauth.clientSecret);
  if (oauth.scopes !== undefined) out.scopes = oauth.scopes.map(maskDefaults);
  if (oauth.callbackPort !== undefined) out.callbackPort = oauth.callbackPort;
  if (oauth.grant !== undefined) out.grant = oauth.grant;
  if (oauth.privateKey !== undefined) out.privateKey = maskValue(oauth.privateKey);
  if (oauth.signingAlgorithm !== undefined) out.signingAlgorithm = oauth.signingAlgorithm;
  return out;
}

/** True when `text` is made only of valid variable references (and is not empty). */
function isOnlyReferences(text: string): boolean {
  let at = 0;
  forEachReference(text, (start, end, nameEnd) => {
    if (at === -1) return;
    at = start === at && nameEnd !== -1 ? end : -1;
  });
  return at === text.length && at > 0;
}

/** A secret part shown: kept when empty or only references (defaults masked), else `****`. */
function maskPart(text: string): string {
  if (text === '') return text;
  return isOnlyReferences(text) ? maskDefaults(text) : MASK;
}

const SCHEME = /[A-Za-z][A-Za-z0-9+.-]{0,31}:/y;

/** Mask the values of `k=v` parameters separated by `&` or `;` (and bare items when `bareToo`). Linear. */
function maskParams(text: string, bareToo: boolean): string {
  const parts: string[] = [];
  let copied = 0;
  let nextAmp = text.indexOf('&');
  let nextSemi = text.indexOf(';');
  let nextEq = text.indexOf('=');
  let start = 0;
  while (start <= text.length) {
    if (nextAmp !== -1 && nextAmp < start) nextAmp = text.indexOf('&', start);
    if (nextSemi !== -1 && nextSemi < start) nextSemi = text.indexOf(';', start);
    const end =
      nextAmp === -1
        ? nextSemi === -1
          ? text.length
          : nextSemi
        : nextSemi === -1
          ? nextAmp
          : Math.min(nextAmp, nextSemi);
    if (nextEq !== -1 && nextEq < start) nextEq = text.indexOf('=', start);
    const valueStart = nextEq !== -1 && nextEq < end ? nextEq + 1 : bareToo ? start : -1;
    if (valueStart !== -1 && end > valueStart) {
      const value = text.slice(valueStart, end);
      const shown = maskPart(value);
      if (shown !== value) {
        parts.push(text.slice(copied, valueStart), shown);
        copied = end;
      }
    }
    start = end + 1;
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}

/**
 * A URL as written, safe to show. Pure, linear. Works on unexpanded and on
 * malformed URLs (leading spaces, `https:me:pw@h`, backslashes, extra
 * slashes: they are read the lenient way URL parsers read them). Masked
 * unless they are variable references: the whole user-info part (user and
 * password; it ends at the last `@` before the path), every query value
 * (and a bare query item), fragment parameter values (OAuth's implicit flow
 * puts tokens there), and every `${NAME:-default}` default.
 */
export function maskUrl(url: string): string {
  const text = maskDefaults(url);
  let i = 0;
  while (i < text.length && ' \t\r\n\f'.includes(text.charAt(i))) i++;
  SCHEME.lastIndex = i;
  if (SCHEME.test(text)) i = SCHEME.lastIndex;
  while (i < text.length && (text.charAt(i) === '/' || text.charAt(i) === '\\')) i++;
  const authStart = i;
  while (i < text.length && !'/\\?#'.includes(text.charAt(i))) i++;
  const authEnd = i;
  let out = text.slice(0, authStart);
  const at = text.lastIndexOf('@', authEnd - 1);
  if (at >= authStart) {
    const info = text.slice(authStart, at);
    const colon = info.indexOf(':');
    out +=
      colon === -1 ? maskPart(info) : `${maskPart(info.slice(0, colon))}:${maskPart(info.slice(colon + 1))}`;
    out += text.slice(at, authEnd);
  } else {
    out += text.slice(authStart, authEnd);
  }
  const rest = text.slice(authEnd);
  const hash = rest.indexOf('#');
  const beforeHash = hash === -1 ? rest : rest.slice(0, hash);
  const query = beforeHash.indexOf('?');
  if (query === -1) out += beforeHash;
  else out += `${beforeHash.slice(0, query + 1)}${maskParams(beforeHash.slice(query + 1), true)}`;
  if (hash !== -1) out += `#${maskParams(rest.slice(hash + 1), false)}`;
  return out;
}

function isFlag(arg: string): boolean {
  return arg.length > 1 && arg.charAt(0) === '-';
}

/**
 * Command-line arguments as written, safe to show. Pure, linear. Masks the
 * value of a secret-looking flag (`--api-key=...`, `--token x`, `-p x`
 * is not one: only names with token, key, secret, pass, auth...), of a
 * secret-looking `NAME=value` or `Header: value` argument, the secret parts
 * of URLs (see {@link maskUrl}) and every `${NAME:-default}` default.
 */
export function maskArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext && !isFlag(arg)) {
      out.push(maskValue(arg));
      maskNext = false;
      continue;
    }
    maskNext = false;
    const eq = arg.indexOf('=');
    const colon = arg.indexOf(': ');
    if (isFlag(arg)) {
      const flag = eq === -1 ? arg : arg.slice(0, eq);
      if (flag.length <= 64 && SECRET_NAME.test(flag)) {
        if (eq === -1) maskNext = true;
        else {
          out.push(`${flag}=${maskValue(arg.slice(eq + 1))}`);
          continue;
        }
      }
      out.push(eq === -1 ? maskDefaults(arg) : `${arg.slice(0, eq + 1)}${maskArgValue(arg.slice(eq + 1))}`);
    } else if (arg.includes('://')) {
      out.push(maskUrl(arg));
    } else if (eq > 0 && eq <= 64 && (colon === -1 || eq < colon) && SECRET_NAME.test(arg.slice(0, eq))) {
      out.push(`${arg.slice(0, eq)}=${maskValue(arg.slice(eq + 1))}`);
    } else if (colon > 0 && colon <= 64 && SECRET_NAME.test(arg.slice(0, colon))) {
      out.push(`${arg.slice(0, colon)}: ${maskValue(arg.slice(colon + 2))}`);
    } else {
      out.push(maskDefaults(arg));
    }
  }
  return out;
}

function maskArgValue(value: string): string {
  return value.includes('://') ? maskUrl(value) : maskDefaults(value);
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
  /** OAuth settings, `clientSecret` masked. */
  oauth?: OAuthConfig;
  description?: string;
  lifecycle: string;
  connectable: boolean;
  /** Present (true) when the server is configured with `"disabled": true`. */
  disabled?: boolean;
  approveTools?: string[];
  /** Tool-name globs -> read-only, as written (first match wins). */
  readOnlyTools?: Record<string, boolean>;
  requestedApprovals?: string[];
  shadowed: ShadowedDefinition[];
  issues: ConfigIssue[];
}

/**
 * The display form of a server. Pure. Uses the unexpanded `raw` config, so
 * no expanded value (secret) is ever shown; env and header values are masked
 * with {@link maskValue}, the URL with {@link maskUrl}, `args` with
 * {@link maskArgs}; `command` and `cwd` as written but for `${X:-default}`
 * defaults.
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
  if (server.disabled === true) d.disabled = true;
  if (server.file !== undefined) d.file = server.file;
  if (server.plugin !== undefined) d.plugin = server.plugin;
  if (raw.command !== undefined) d.command = maskDefaults(raw.command);
  if (raw.args !== undefined) d.args = maskArgs(raw.args);
  if (raw.cwd !== undefined) d.cwd = maskDefaults(raw.cwd);
  if (raw.url !== undefined) d.url = server.displayUrl ?? maskUrl(raw.url);
  if (raw.env !== undefined) d.env = server.displayEnv ?? maskSecrets(raw.env);
  if (raw.headers !== undefined) d.headers = server.displayHeaders ?? maskSecrets(raw.headers);
  if (raw.oauth !== undefined) d.oauth = server.displayOauth ?? maskOAuth(raw.oauth);
  if (raw.description !== undefined) d.description = raw.description;
  if (server.config.approveTools !== undefined) d.approveTools = [...server.config.approveTools];
  const readOnly = server.config.readOnlyTools;
  if (readOnly !== undefined) {
    const copy: Record<string, boolean> = {};
    for (const glob of Object.keys(readOnly)) {
      Object.defineProperty(copy, glob, {
        value: readOnly[glob],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    d.readOnlyTools = copy;
  }
  if (server.requestedApprovals !== undefined) d.requestedApprovals = [...server.requestedApprovals];
  return d;
}
