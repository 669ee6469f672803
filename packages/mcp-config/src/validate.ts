import { maskDefaults, maskUrl } from './display';
import { hasReferences } from './expand';
import type {
  ConfigIssue,
  ConfigIssueCode,
  ConfigSource,
  KnownTransport,
  Lifecycle,
  OAuthConfig,
  ServerConfig,
} from './types';

/** Longest server name (UTF-16 code units). */
export const MAX_SERVER_NAME_LENGTH = 128;
/**
 * Server names: any non-empty text without control characters, at most
 * {@link MAX_SERVER_NAME_LENGTH} long (dots and spaces are common in other
 * hosts' files). Tools are addressed through `serverIdentity(name)`.
 */
export const SERVER_NAME_PATTERN: RegExp = /^[^\u0000-\u001f\u007f-\u009f]{1,128}$/;
/** At most this many servers after merge; the rest are reported (`LIMIT_EXCEEDED`) in precedence order. */
export const MAX_SERVERS = 32;
/** Lifecycle used when a server does not say. */
export const DEFAULT_LIFECYCLE: Lifecycle = 'lazy';
/** Idle timeout used when a server does not say (10 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Largest accepted timeout: the largest delay `setTimeout` honours (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The transports a server may declare (`type`); anything else is kept but cannot connect. */
export const KNOWN_TRANSPORTS: readonly KnownTransport[] = Object.freeze(['stdio', 'http', 'sse'] as const);
const LIFECYCLES: readonly string[] = ['lazy', 'eager', 'keep-alive'];
const STDIO_FIELDS = ['command', 'args', 'env', 'cwd'] as const;
const REMOTE_FIELDS = ['url', 'headers', 'oauth'] as const;
const OAUTH_KEYS: readonly string[] = [
  'clientId',
  'clientSecret',
  'scopes',
  'callbackPort',
  'grant',
  'privateKey',
  'signingAlgorithm',
];
const EXTENSION_FIELDS = [
  'disabled',
  'lifecycle',
  'idleTimeoutMs',
  'connectTimeoutMs',
  'callTimeoutMs',
  'approveTools',
  'readOnlyTools',
  'description',
] as const;
const KNOWN_KEYS: ReadonlySet<string> = new Set<string>([
  'type',
  ...STDIO_FIELDS,
  ...REMOTE_FIELDS,
  ...EXTENSION_FIELDS,
]);

/** Hints for keys other hosts use, so the warning says what to write instead. */
const KEY_HINTS: Readonly<Record<string, string>> = {
  idleTimeout: 'did you mean "idleTimeoutMs" (milliseconds)?',
  connectTimeout: 'did you mean "connectTimeoutMs" (milliseconds)?',
  callTimeout: 'did you mean "callTimeoutMs" (milliseconds)?',
  timeout: 'use "callTimeoutMs" or "connectTimeoutMs" (milliseconds)',
  autoApprove: 'use "approveTools" (honoured only in the user file or the constructor option)',
  alwaysAllow: 'use "approveTools" (honoured only in the user file or the constructor option)',
  transport: 'use "type"',
  serverUrl: 'use "url"',
};

const TYPE_HINTS: Readonly<Record<string, string>> = {
  'streamable-http': 'Streamable HTTP is "http"',
  streamablehttp: 'Streamable HTTP is "http"',
  streamable_http: 'Streamable HTTP is "http"',
  'http-stream': 'Streamable HTTP is "http"',
  ws: 'WebSocket servers are not supported, so use "http" or "sse" if the server offers them',
  websocket: 'WebSocket servers are not supported, so use "http" or "sse" if the server offers them',
};

/** `table[key]` only when it is the table's own entry (never `constructor`, `__proto__`...). */
function ownHint(table: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Where an issue applies, for the messages and the issue fields. */
export interface IssueContext {
  source: ConfigSource;
  file?: string;
  plugin?: string;
}

/** Result of {@link validateServer}. */
export interface ServerValidation {
  name: string;
  /** False when the name breaks {@link SERVER_NAME_PATTERN} or has `__`: the entry is dropped. */
  nameValid: boolean;
  /** Normalized transport: the explicit known `type`, else inferred; the written string when unknown; `unknown` when undecidable. */
  transport: string;
  /** The `type` as written when it is a string but not a known transport. */
  unknownType?: string;
  /** The fields that passed validation, as written (unexpanded). Invalid and unknown fields are absent. */
  config: ServerConfig;
  issues: ConfigIssue[];
  /** No `error` issue. */
  ok: boolean;
}

/** Where a server or file is, in words (for messages). */
export function describeLocation(ctx: IssueContext): string {
  if (ctx.source === 'constructor') return 'the mcpServers option';
  if (ctx.source === 'plugin') return `plugin "${ctx.plugin ?? '?'}"`;
  return ctx.file ?? `the ${ctx.source} config file`;
}

/** Build one issue with the context filled in. */
export function makeIssue(
  ctx: IssueContext,
  severity: ConfigIssue['severity'],
  code: ConfigIssueCode,
  message: string,
  extra: { server?: string; field?: string } = {},
): ConfigIssue {
  const issue: ConfigIssue = { severity, code, source: ctx.source, message };
  if (ctx.file !== undefined) issue.file = ctx.file;
  if (ctx.plugin !== undefined) issue.plugin = ctx.plugin;
  if (extra.server !== undefined) issue.server = extra.server;
  if (extra.field !== undefined) issue.field = extra.field;
  return issue;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What kind of value `value` is, for messages. Values are never quoted (a
 * wrong-typed token is still a token), except short strings of fields that
 * hold no secrets when `show` is set (`type`, `lifecycle`).
 */
function typeName(value: unknown, show = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    return show && value.length <= 40 ? `the string ${JSON.stringify(value)}` : 'a string';
  }
  if (typeof value === 'number') return show ? `the number ${value}` : 'a number';
  if (typeof value === 'boolean') return show ? `the boolean ${value}` : 'a boolean';
  if (value === undefined) return 'undefined';
  return `a ${typeof value}`;
}

function hasNul(text: string): boolean {
  return text.includes('\0');
}

/** True when a path has a `..` segment (either separator). Pure. */
export function hasDotDotSegment(path: string): boolean {
  return path.split(/[\\/]/).some((segment) => segment === '..');
}

/** True for text a clean URL never has: white space, control characters, backslashes. */
function hasUnsafeUrlCharacter(url: string): boolean {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x5c || (c >= 0x80 && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * Why `url` is not a clean absolute http(s) URL, or undefined when it is.
 * Pure, linear. Clean means written the way it is read: `http://` or
 * `https://` then the host, no spaces, backslashes or control characters
 * (the lenient forms parsers accept, such as `https:host` or `https:///host`,
 * are refused: they are how a password slips past what people check).
 * A URL with `${VAR}` references is checked after expansion instead.
 */
export function urlProblem(url: string): string | undefined {
  if (hasUnsafeUrlCharacter(url)) {
    return 'has spaces, backslashes or control characters; write it as https://host/path';
  }
  const lower = url.slice(0, 8).toLowerCase();
  const afterScheme = lower.startsWith('https://') ? 8 : lower.startsWith('http://') ? 7 : -1;
  if (afterScheme !== -1 && (url.length === afterScheme || url.charAt(afterScheme) === '/')) {
    return 'has no host after the scheme; write it as https://host/path';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL (write it as https://host/path)';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `uses ${parsed.protocol.replace(/:$/, '')}: only http and https are supported`;
  }
  if (afterScheme === -1) return 'must start with http:// or https:// and the host';
  return undefined;
}

/** Why `name` is not a valid server name, or undefined when it is. Pure. */
export function serverNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_SERVER_NAME_LENGTH)
    return `is ${name.length} characters long, more than ${MAX_SERVER_NAME_LENGTH}`;
  if (!SERVER_NAME_PATTERN.test(name)) return 'contains a control character such as a line break or tab';
  // Hosts keep servers in plain objects keyed by name; this one name would be their prototype.
  if (name === '__proto__') return 'is "__proto__", which cannot be a key of a plain object';
  return undefined;
}

/**
 * Validate one server entry as written. Pure; never throws on plain data.
 *
 * Errors (the server is kept but not connectable, or dropped for a bad name):
 * bad name, non-object entry, transport fields of the wrong shape, stdio and
 * url fields together, missing command/url, `..` in `command`, a url that is
 * not absolute http(s), an unknown `type`. Warnings (ignored, server works):
 * unknown keys, invalid extension fields (`lifecycle`, timeouts,
 * `approveTools`, `readOnlyTools`, `description`).
 */
export function validateServer(name: string, entry: unknown, ctx: IssueContext): ServerValidation {
  const issues: ConfigIssue[] = [];
  const where = `Server "${name}" in ${describeLocation(ctx)}`;
  const add = (severity: ConfigIssue['severity'], code: ConfigIssueCode, message: string, field?: string) => {
    issues.push(
      makeIssue(
        ctx,
        severity,
        code,
        message,
        field === undefined ? { server: name } : { server: name, field },
      ),
    );
  };
  const result = (config: ServerConfig, transport: string, unknownType?: string): ServerValidation => {
    const v: ServerValidation = {
      name,
      nameValid: true,
      transport,
      config,
      issues,
      ok: !issues.some((i) => i.severity === 'error'),
    };
    if (unknownType !== undefined) v.unknownType = unknownType;
    return v;
  };

  const nameProblem = serverNameProblem(name);
  if (nameProblem !== undefined) {
    add(
      'error',
      'NAME_INVALID',
      `Server name ${JSON.stringify(name.slice(0, MAX_SERVER_NAME_LENGTH))}${name.length > MAX_SERVER_NAME_LENGTH ? '...' : ''} in ${describeLocation(ctx)} ${nameProblem}; the server is skipped. Rename it: any text of 1 to ${MAX_SERVER_NAME_LENGTH} characters without control characters.`,
    );
    return { name, nameValid: false, transport: 'unknown', config: {}, issues, ok: false };
  }

  if (!isRecord(entry)) {
    add(
      'error',
      'SERVER_INVALID',
      `${where} is ${typeName(entry)}; it must be an object such as {"command": "npx", "args": ["-y", "pkg"]} or {"url": "https://host/mcp"}.`,
    );
    return result({}, 'unknown');
  }

  const own = (key: string): unknown => (Object.hasOwn(entry, key) ? entry[key] : undefined);
  const has = (key: string): boolean => Object.hasOwn(entry, key) && entry[key] !== undefined;
  const config: ServerConfig = {};

  for (const key of Object.keys(entry)) {
    if (KNOWN_KEYS.has(key)) continue;
    const hint = ownHint(KEY_HINTS, key);
    add(
      'warning',
      'UNKNOWN_KEY',
      `${where}: unknown key ${JSON.stringify(key)} is ignored${hint ? `; ${hint}` : ''}.`,
      key,
    );
  }

  // --- type
  let explicitType: string | undefined;
  let unknownType: string | undefined;
  if (has('type')) {
    const t = own('type');
    if (typeof t !== 'string') {
      add(
        'error',
        'FIELD_INVALID',
        `${where}: "type" is ${typeName(t, true)}; write "stdio", "http" or "sse".`,
        'type',
      );
    } else if ((KNOWN_TRANSPORTS as readonly string[]).includes(t)) {
      explicitType = t;
      config.type = t;
    } else {
      unknownType = t;
      config.type = t;
      const lower = t.toLowerCase();
      const hint =
        ownHint(TYPE_HINTS, lower) ??
        ((KNOWN_TRANSPORTS as readonly string[]).includes(lower)
          ? `write it in lower case, "${lower}"`
          : undefined);
      add(
        'error',
        'TRANSPORT_UNKNOWN',
        `${where}: unknown type ${JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}...` : t)}; connecting to it will fail. Use "stdio", "http" or "sse"${hint ? `; ${hint}` : ''}. There is no automatic fallback between http and sse.`,
        'type',
      );
    }
  }

  // --- stdio fields
  if (has('command')) {
    const c = own('command');
    if (typeof c !== 'string' || c.trim() === '') {
      add(
        'error',
        'FIELD_INVALID',
        `${where}: "command" is ${typeName(c)}; it must be a non-empty string.`,
        'command',
      );
    } else if (hasNul(c)) {
      add('error', 'FIELD_INVALID', `${where}: "command" contains a NUL character.`, 'command');
    } else if (hasDotDotSegment(c)) {
      add(
        'error',
        'COMMAND_INVALID',
        `${where}: "command" ${JSON.stringify(maskDefaults(c))} has a ".." path segment; use an absolute path, a path without "..", or a program on PATH.`,
        'command',
      );
    } else {
      config.command = c;
    }
  }
  if (has('args')) {
    const a = own('args');
    if (!Array.isArray(a)) {
      add(
        'error',
        'FIELD_INVALID',
        `${where}: "args" is ${typeName(a)}; it must be an array of strings, e.g. ["-y", "pkg"].`,
        'args',
      );
    } else {
      const bad = a.findIndex((x) => typeof x !== 'string' || hasNul(x));
      if (bad !== -1) {
        const x: unknown = a[bad];
        add(
          'error',
          'FIELD_INVALID',
          typeof x === 'string'
            ? `${where}: args[${bad}] contains a NUL character.`
            : `${where}: args[${bad}] is ${typeName(x)}; every argument must be a string, so put it in double quotes.`,
          `args[${bad}]`,
        );
      } else {
        config.args = [...(a as string[])];
      }
    }
  }
  const stringMap = (field: 'env' | 'headers'): Record<string, string> | undefined => {
    const m = own(field);
    if (!isRecord(m)) {
      add(
        'error',
        'FIELD_INVALID',
        `${where}: "${field}" is ${typeName(m)}; it must be an object of strings, e.g. {"KEY": "value"}.`,
        field,
      );
      return undefined;
    }
    const out: Record<string, string> = {};
    let ok = true;
    for (const key of Object.keys(m)) {
      const v = m[key];
      const path = `${field}.${key}`;
      if (typeof v !== 'string') {
        add(
          'error',
          'FIELD_INVALID',
          `${where}: ${path} is ${typeName(v)}; values must be strings, so put it in double quotes.`,
          path,
        );
        ok = false;
      } else if (field === 'env' && (key === '' || key.includes('=') || hasNul(key) || hasNul(v))) {
        add(
          'error',
          'FIELD_INVALID',
          `${where}: env key ${JSON.stringify(key)} is not a valid variable name or its value contains a NUL character.`,
          path,
        );
        ok = false;
      } else if (field === 'headers' && !HEADER_NAME.test(key)) {
        add(
          'error',
          'FIELD_INVALID',
          `${where}: ${JSON.stringify(key)} is not a valid HTTP header name.`,
          path,
        );
        ok = false;
      } else if (field === 'headers' && /[\r\n\0]/.test(v)) {
        add(
          'error',
          'FIELD_INVALID',
          `${where}: header ${key} contains a line break or NUL character.`,
          path,
        );
        ok = false;
      } else {
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      }
    }
    return ok ? out : undefined;
  };
  if (has('env')) {
    const env = stringMap('env');
    if (env) config.env = env;
  }
  if (has('cwd')) {
    const c = own('cwd');
    if (typeof c !== 'string' || c.trim() === '' || hasNul(c)) {
      add('error', 'FIELD_INVALID', `${where}: "cwd" is ${typeName(c)}; it must be a directory path.`, 'cwd');
    } else {
      config.cwd = c;
    }
  }

  // --- remote fields
  if (has('url')) {
    const u = own('url');
    if (typeof u !== 'string' || u.trim() === '') {
      add(
        'error',
        'FIELD_INVALID',
        `${where}: "url" is ${typeName(u)}; it must be a string such as "https://host/mcp".`,
        'url',
      );
    } else {
      const problem = hasReferences(u) || unknownType !== undefined ? undefined : urlProblem(u);
      if (problem) {
        add('error', 'URL_INVALID', `${where}: "url" ${JSON.stringify(maskUrl(u))} ${problem}.`, 'url');
      } else {
        config.url = u;
      }
    }
  }
  if (has('headers')) {
    const h = stringMap('headers');
    if (h) config.headers = h;
  }
  if (has('oauth')) {
    const o = validateOAuth(own('oauth'), where, add);
    if (o) config.oauth = o;
  }

  // --- transport consistency
  const stdioKeys = STDIO_FIELDS.filter(has);
  const remoteKeys = REMOTE_FIELDS.filter(has);
  let transport: string;
  if (unknownType !== undefined) {
    transport = unknownType;
  } else {
    transport = explicitType ?? (has('command') ? 'stdio' : has('url') ? 'http' : 'unknown');
    const list = (keys: readonly string[]) => keys.map((k) => `"${k}"`).join(', ');
    if (transport === 'stdio') {
      if (remoteKeys.length > 0) {
        add(
          'error',
          'TRANSPORT_CONFLICT',
          `${where}: a stdio server (it has "command"${explicitType ? ' or type "stdio"' : ''}) cannot also have ${list(remoteKeys)}; keep either command/args/env/cwd or url/headers.`,
          remoteKeys[0],
        );
      }
      if (!has('command')) {
        add(
          'error',
          'SERVER_INVALID',
          `${where}: type "stdio" needs "command" (the program to run).`,
          'command',
        );
      }
    } else if (transport === 'http' || transport === 'sse') {
      if (stdioKeys.length > 0) {
        add(
          'error',
          'TRANSPORT_CONFLICT',
          `${where}: ${explicitType ? `a "${transport}" server` : 'a url server'} cannot also have ${list(stdioKeys)}; keep either command/args/env/cwd or url/headers.`,
          stdioKeys[0],
        );
      }
      if (!has('url')) {
        add(
          'error',
          'SERVER_INVALID',
          `${where}: type "${transport}" needs "url" (https://host/path).`,
          'url',
        );
      }
    } else if (explicitType === undefined && !has('type')) {
      add(
        'error',
        'SERVER_INVALID',
        `${where} has neither "command" (a local stdio server) nor "url" (a remote http server); add one of them.`,
      );
    }
  }

  // --- extension fields: invalid ones are ignored with a warning
  const ignore = (field: string, why: string) =>
    add(
      'warning',
      'FIELD_IGNORED',
      `${where}: "${field}" ${why}; it is ignored and the default applies.`,
      field,
    );
  if (has('disabled')) {
    const d = own('disabled');
    if (d === true) config.disabled = true;
    else if (d !== false) ignore('disabled', `is ${typeName(d, true)}; write true or false`);
  }
  if (has('lifecycle')) {
    const l = own('lifecycle');
    if (typeof l === 'string' && LIFECYCLES.includes(l)) config.lifecycle = l as Lifecycle;
    else ignore('lifecycle', `is ${typeName(l, true)}; write "lazy", "eager" or "keep-alive"`);
  }
  for (const field of ['idleTimeoutMs', 'connectTimeoutMs', 'callTimeoutMs'] as const) {
    if (!has(field)) continue;
    const n = own(field);
    if (typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= MAX_TIMEOUT_MS) config[field] = n;
    else
      ignore(
        field,
        `is ${typeName(n, true)}; it must be a whole number of milliseconds between 1 and ${MAX_TIMEOUT_MS}`,
      );
  }
  if (has('approveTools')) {
    const a = own('approveTools');
    if (Array.isArray(a) && a.every((x) => typeof x === 'string' && x.trim() !== '')) {
      config.approveTools = [...(a as string[])];
    } else {
      add(
        'warning',
        'FIELD_IGNORED',
        `${where}: "approveTools" must be an array of tool-name globs such as ["get_*", "list_*"]; it is ignored, so every tool asks for approval.`,
        'approveTools',
      );
    }
  }
  if (has('readOnlyTools')) {
    const problem = readOnlyToolsProblem(own('readOnlyTools'));
    if (problem === undefined) {
      const r = own('readOnlyTools') as Record<string, boolean>;
      const out: Record<string, boolean> = {};
      // Written order is match order; "__proto__" is a glob like any other.
      for (const key of Object.keys(r)) {
        Object.defineProperty(out, key, {
          value: r[key],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      config.readOnlyTools = out;
    } else {
      add(
        'warning',
        'FIELD_IGNORED',
        `${where}: "readOnlyTools" ${problem}; it is ignored, so each tool's own readOnlyHint decides which calls may run in parallel.`,
        'readOnlyTools',
      );
    }
  }
  if (has('description')) {
    const d = own('description');
    if (typeof d === 'string') config.description = d;
    else ignore('description', `is ${typeName(d)}; it must be a string`);
  }

  return result(config, transport, unknownType);
}

/** Why a `readOnlyTools` value is unusable (as the rest of a sentence), or undefined when it is fine. */
function readOnlyToolsProblem(value: unknown): string | undefined {
  const shape = 'an object of tool-name globs to true or false, such as {"read_*": true, "delete_*": false}';
  if (!isRecord(value)) return `is ${typeName(value)}; it must be ${shape}`;
  for (const key of Object.keys(value)) {
    if (key.trim() === '')
      return `has an empty tool-name glob; every key must be a glob such as "read_*", in ${shape}`;
    const v = value[key];
    if (typeof v !== 'boolean') {
      const glob = JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}...` : key);
      return `maps ${glob} to ${typeName(v, true)}; the values must be true or false (read-only or not)`;
    }
  }
  return undefined;
}

type AddIssue = (
  severity: ConfigIssue['severity'],
  code: ConfigIssueCode,
  message: string,
  field?: string,
) => void;

/**
 * The `oauth` object as written, or undefined when it is unusable (each
 * problem is an error: a sign-in with the wrong client fails in ways a person
 * cannot diagnose). Unknown keys inside it are warnings. Values are never quoted.
 */
function validateOAuth(value: unknown, where: string, add: AddIssue): OAuthConfig | undefined {
  if (!isRecord(value)) {
    add(
      'error',
      'FIELD_INVALID',
      `${where}: "oauth" is ${typeName(value)}; it must be an object such as {"clientId": "my-app", "scopes": ["read"]}.`,
      'oauth',
    );
    return undefined;
  }
  const out: OAuthConfig = {};
  let ok = true;
  const bad = (field: string, message: string) => {
    add('error', 'FIELD_INVALID', `${where}: oauth.${field} ${message}`, `oauth.${field}`);
    ok = false;
  };
  for (const key of Object.keys(value)) {
    if (OAUTH_KEYS.includes(key)) continue;
    add(
      'warning',
      'UNKNOWN_KEY',
      `${where}: unknown key ${JSON.stringify(key.slice(0, 64))} in "oauth" is ignored; the keys are ${OAUTH_KEYS.join(', ')}.`,
      `oauth.${key}`,
    );
  }
  const field = (key: string): unknown => (Object.hasOwn(value, key) ? value[key] : undefined);
  for (const key of ['clientId', 'clientSecret'] as const) {
    const v = field(key);
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '')
      bad(key, `is ${typeName(v)}; it must be a non-empty string.`);
    else if (/[\r\n\0]/.test(v)) bad(key, 'contains a line break or NUL character.');
    else out[key] = v;
  }
  const scopes = field('scopes');
  if (scopes !== undefined) {
    if (
      Array.isArray(scopes) &&
      scopes.every((x) => typeof x === 'string' && x !== '' && !/[\s\0"\\]/.test(x))
    ) {
      out.scopes = [...(scopes as string[])];
    } else {
      bad(
        'scopes',
        `is ${typeName(scopes)} or has an empty scope or one with spaces or quotes; write an array such as ["repo", "read:user"].`,
      );
    }
  }
  const port = field('callbackPort');
  if (port !== undefined) {
    if (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535)
      out.callbackPort = port;
    else bad('callbackPort', `is ${typeName(port, true)}; it must be a port number between 1 and 65535.`);
  }
  const grant = field('grant');
  if (grant !== undefined) {
    if (grant === 'authorization_code' || grant === 'client_credentials') out.grant = grant;
    else bad('grant', `is ${typeName(grant, true)}; write "authorization_code" or "client_credentials".`);
  }
  const key = field('privateKey');
  if (key !== undefined) {
    if (typeof key === 'string' && key.includes('PRIVATE KEY') && !key.includes('\0')) out.privateKey = key;
    else if (typeof key === 'string' && /^\$\{[^}]+\}$/.test(key.trim())) out.privateKey = key;
    else
      bad(
        'privateKey',
        `is ${typeName(key)}; it must be a PEM private key ("-----BEGIN PRIVATE KEY-----...") or a \${VAR} reference to one.`,
      );
  }
  const alg = field('signingAlgorithm');
  if (alg !== undefined) {
    if (typeof alg === 'string' && /^[A-Za-z0-9]{2,16}$/.test(alg)) out.signingAlgorithm = alg;
    else
      bad('signingAlgorithm', `is ${typeName(alg, true)}; write a JWS algorithm such as "RS256" or "ES256".`);
  }
  if (out.grant === 'client_credentials' && ok) {
    if (out.clientId === undefined) bad('clientId', 'is required with grant "client_credentials".');
    else if (out.clientSecret === undefined && out.privateKey === undefined)
      bad('grant', '"client_credentials" needs oauth.clientSecret or oauth.privateKey.');
  }
  if (out.clientSecret !== undefined && out.clientId === undefined && field('clientId') === undefined) {
    bad(
      'clientSecret',
      'is set without oauth.clientId; a client secret belongs to a pre-registered client ID.',
    );
  }
  return ok ? out : undefined;
}

/** True when `transport` is stdio, http or sse. */
export function isKnownTransport(transport: string): transport is KnownTransport {
  return (KNOWN_TRANSPORTS as readonly string[]).includes(transport);
}
