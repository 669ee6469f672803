import { isAbsolute, resolve } from 'node:path';
import { maskOAuth, maskSecrets, maskUrl } from './display';
import { expandVars, hasReferences } from './expand';
import { fingerprint } from './fingerprint';
import { serverIdentity } from './identity';
import type {
  ConfigIssue,
  ConfigSource,
  Env,
  MergeResult,
  ResolvedServer,
  ServerConfig,
  SourceLayer,
} from './types';
import {
  describeLocation,
  hasDotDotSegment,
  type IssueContext,
  isKnownTransport,
  MAX_SERVERS,
  makeIssue,
  urlProblem,
  validateServer,
} from './validate';

/** At most this many unresolved variables (and fields with invalid references) are reported per server. */
const MAX_LISTED_VARIABLES = 20;

/** Precedence rank: lower wins. */
export const SOURCE_PRECEDENCE: Readonly<Record<ConfigSource, number>> = {
  constructor: 0,
  project: 1,
  user: 2,
  plugin: 3,
};

/** Sources whose `approveTools` is applied; from the others it is only a hint. */
const TRUSTED_APPROVAL_SOURCES: readonly ConfigSource[] = ['constructor', 'user'];
/** Sources that may hold `oauth.clientSecret` (a repository or plugin file is shared; a secret there leaks). */
const TRUSTED_SECRET_SOURCES: readonly ConfigSource[] = ['constructor', 'user'];

/** Everything {@link resolveServer} needs besides the entry. */
export interface ResolveContext extends IssueContext {
  /** Environment for `${VAR}` expansion. @default {} */
  env?: Env;
  /** Absolute workdir: part of the fingerprint; base of a relative `cwd` (non-plugin servers). @default '' */
  workdir?: string;
  /** Plugin root (plugin source only): replaces `${WAVE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_ROOT}`. */
  pluginRoot?: string;
}

/** Result of {@link resolveServer}. */
export interface ResolveResult {
  /** Absent when the entry is dropped (invalid name). */
  server?: ResolvedServer;
  issues: ConfigIssue[];
}

function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mapRecord(
  record: Readonly<Record<string, string>>,
  fn: (value: string, key: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(record)) setOwn(out, key, fn(record[key] ?? '', key));
  return out;
}

function copyRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(record)) setOwn(out, key, record[key] as T);
  return out;
}

function copyConfig(config: ServerConfig): ServerConfig {
  const out: ServerConfig = { ...config };
  if (config.args) out.args = [...config.args];
  if (config.env) out.env = mapRecord(config.env, (v) => v);
  if (config.headers) out.headers = mapRecord(config.headers, (v) => v);
  if (config.approveTools) out.approveTools = [...config.approveTools];
  if (config.readOnlyTools) out.readOnlyTools = copyRecord(config.readOnlyTools);
  if (config.oauth) {
    out.oauth = { ...config.oauth };
    if (config.oauth.scopes) out.oauth.scopes = [...config.oauth.scopes];
  }
  return out;
}

/**
 * Validate, expand and fingerprint one server entry. Pure.
 *
 * The returned server is kept even when it has errors (`connectable: false`);
 * only an invalid name drops it. For plugin servers the plugin root variables
 * are substituted in command, args, env and cwd, and `WAVE_PLUGIN_ROOT` is
 * added to the env of stdio servers. `approveTools` from project or plugin
 * sources moves to `requestedApprovals`.
 */
export function resolveServer(name: string, entry: unknown, ctx: ResolveContext): ResolveResult {
  const env = ctx.env ?? {};
  const workdir = ctx.workdir ?? '';
  const validation = validateServer(name, entry, ctx);
  if (!validation.nameValid) return { issues: validation.issues };
  const issues = [...validation.issues];
  const where = `Server "${name}" in ${describeLocation(ctx)}`;
  const written = validation.config;
  const transport = validation.transport;

  const root = ctx.source === 'plugin' ? ctx.pluginRoot : undefined;
  const rootVars: Record<string, string> | undefined =
    root === undefined ? undefined : { WAVE_PLUGIN_ROOT: root, CLAUDE_PLUGIN_ROOT: root };
  const stdioEnv: Env = rootVars ? { ...env, ...rootVars } : env;

  // raw: as written, plugin root substituted (it decides what runs and is no secret).
  const raw = copyConfig(written);
  if (rootVars) {
    const sub = (text: string) => expandVars(text, rootVars, { partial: true }).value;
    if (raw.command !== undefined) raw.command = sub(raw.command);
    if (raw.args) raw.args = raw.args.map(sub);
    if (raw.env) raw.env = mapRecord(raw.env, sub);
    if (raw.cwd !== undefined) raw.cwd = sub(raw.cwd);
    if (transport === 'stdio' && root !== undefined) {
      raw.env = raw.env ?? {};
      setOwn(raw.env, 'WAVE_PLUGIN_ROOT', root);
    }
  }

  let requestedApprovals: string[] | undefined;
  if (raw.approveTools && !TRUSTED_APPROVAL_SOURCES.includes(ctx.source)) {
    requestedApprovals = raw.approveTools;
    delete raw.approveTools;
    issues.push(
      makeIssue(
        ctx,
        'warning',
        'APPROVALS_NOT_TRUSTED',
        `${where}: "approveTools" is not applied from ${ctx.source === 'project' ? 'a project file' : 'a plugin'} (a repository must not exempt its own tools from approval); it is shown as a request in approval prompts. Put it in the user file to apply it.`,
        { server: name, field: 'approveTools' },
      ),
    );
  }

  const secretFields = (['clientSecret', 'privateKey'] as const).filter((k) => raw.oauth?.[k] !== undefined);
  if (raw.oauth && secretFields.length > 0 && !TRUSTED_SECRET_SOURCES.includes(ctx.source)) {
    for (const k of secretFields) delete raw.oauth[k];
    issues.push(
      makeIssue(
        ctx,
        'error',
        'SECRET_NOT_TRUSTED',
        `${where}: ${secretFields.map((k) => `"oauth.${k}"`).join(' and ')} ${secretFields.length > 1 ? 'are' : 'is'} not accepted from ${ctx.source === 'project' ? 'a project file' : 'a plugin'} (a shared file must not hold a client secret, nor send your environment's secrets to a server it names); the server cannot connect. Move "oauth" with its clientSecret to the user file (mcp.json in the wave home, ~/.wave/mcp.json by default) or the mcpServers option, or remove it.`,
        { server: name, field: `oauth.${secretFields[0]}` },
      ),
    );
  }

  // config: expanded values.
  const missing = new Map<string, string>();
  /** Fields with references that are not variable names (never quoted: a secret typed in braces lands here). */
  const invalid = new Set<string>();
  let moreMissing = false;
  const expand = (text: string, field: string, from: Env): string => {
    const r = expandVars(text, from, { limit: MAX_LISTED_VARIABLES + 1 });
    if (r.truncated && r.missing.length > MAX_LISTED_VARIABLES) moreMissing = true;
    for (const m of r.missing) if (!missing.has(m)) missing.set(m, field);
    if (r.invalid.length > 0) invalid.add(field);
    return r.value;
  };
  const config: ServerConfig = isKnownTransport(transport)
    ? { type: transport, ...copyConfig(written) }
    : copyConfig(written);
  if (isKnownTransport(transport)) config.type = transport;
  if (requestedApprovals) delete config.approveTools;
  if (config.oauth && raw.oauth) {
    if (raw.oauth.clientSecret === undefined) delete config.oauth.clientSecret;
    if (raw.oauth.privateKey === undefined) delete config.oauth.privateKey;
  }
  if (config.command !== undefined) config.command = expand(config.command, 'command', stdioEnv);
  if (config.args) config.args = config.args.map((a, i) => expand(a, `args[${i}]`, stdioEnv));
  if (config.env) config.env = mapRecord(config.env, (v, k) => expand(v, `env.${k}`, stdioEnv));
  if (config.cwd !== undefined) config.cwd = expand(config.cwd, 'cwd', stdioEnv);
  if (config.url !== undefined) config.url = expand(config.url, 'url', env);
  if (config.headers) config.headers = mapRecord(config.headers, (v, k) => expand(v, `headers.${k}`, env));
  if (config.oauth) {
    const o = config.oauth;
    if (o.clientId !== undefined) o.clientId = expand(o.clientId, 'oauth.clientId', env);
    if (o.clientSecret !== undefined) o.clientSecret = expand(o.clientSecret, 'oauth.clientSecret', env);
    if (o.privateKey !== undefined) o.privateKey = expand(o.privateKey, 'oauth.privateKey', env);
    if (o.scopes) o.scopes = o.scopes.map((x, i) => expand(x, `oauth.scopes[${i}]`, env));
  }
  if (transport === 'stdio' && root !== undefined) {
    config.env = config.env ?? {};
    setOwn(config.env, 'WAVE_PLUGIN_ROOT', root);
  }

  let listed = 0;
  for (const [variable, field] of missing) {
    if (listed++ === MAX_LISTED_VARIABLES) {
      const more = moreMissing ? 'More' : `${missing.size - MAX_LISTED_VARIABLES} more`;
      issues.push(
        makeIssue(
          ctx,
          'error',
          'VARIABLE_UNRESOLVED',
          `${where}: ${more} variables are not set and have no default; the server cannot connect.`,
          { server: name },
        ),
      );
      break;
    }
    issues.push(
      makeIssue(
        ctx,
        'error',
        'VARIABLE_UNRESOLVED',
        `${where}: \${${variable}} (in ${field}) is not set and has no default; the server cannot connect. Set ${variable} in the environment or write \${${variable}:-default}.`,
        { server: name, field },
      ),
    );
  }
  for (const field of [...invalid].slice(0, MAX_LISTED_VARIABLES)) {
    issues.push(
      makeIssue(
        ctx,
        'warning',
        'VARIABLE_INVALID',
        `${where}: ${field} has a \${...} whose name is not a variable name (letters, digits and "_", not starting with a digit); it is kept as written, not expanded.`,
        { server: name, field },
      ),
    );
  }

  // Checks that depend on the expanded values (only where a reference was written).
  if (missing.size === 0) {
    const fieldError = (
      field: string,
      code: 'FIELD_INVALID' | 'COMMAND_INVALID' | 'URL_INVALID',
      msg: string,
    ) => issues.push(makeIssue(ctx, 'error', code, `${where}: ${msg}`, { server: name, field }));
    if (written.command !== undefined && hasReferences(written.command) && config.command !== undefined) {
      if (config.command.trim() === '')
        fieldError('command', 'FIELD_INVALID', '"command" expands to an empty string.');
      else if (hasDotDotSegment(config.command))
        fieldError('command', 'COMMAND_INVALID', `"command" expands to a path with a ".." segment.`);
    }
    if (
      isKnownTransport(transport) &&
      written.url !== undefined &&
      hasReferences(written.url) &&
      config.url !== undefined
    ) {
      const problem = urlProblem(config.url);
      if (problem)
        fieldError(
          'url',
          'URL_INVALID',
          `"url" ${JSON.stringify(maskUrl(written.url))} after expansion ${problem}.`,
        );
    }
    const nul = [config.command, config.cwd, ...(config.args ?? []), ...Object.values(config.env ?? {})].some(
      (v) => v?.includes('\0'),
    );
    if (nul) fieldError('env', 'FIELD_INVALID', 'a value expands to text with a NUL character.');
    const o = config.oauth;
    for (const key of ['clientId', 'clientSecret'] as const) {
      const v = o?.[key];
      if (v !== undefined && (v.trim() === '' || /[\r\n\0]/.test(v)))
        fieldError(
          `oauth.${key}`,
          'FIELD_INVALID',
          `oauth.${key} expands to an empty value or one with a line break.`,
        );
    }
    if (o?.scopes?.some((x) => x === '' || /[\s\0"\\]/.test(x)))
      fieldError(
        'oauth.scopes',
        'FIELD_INVALID',
        'a scope expands to an empty value or one with spaces or quotes.',
      );
    if (Object.values(config.headers ?? {}).some((v) => /[\r\n\0]/.test(v))) {
      fieldError(
        'headers',
        'FIELD_INVALID',
        'a header value expands to text with a line break or NUL character.',
      );
    }
  }

  if (config.cwd !== undefined && !isAbsolute(config.cwd)) {
    const base = root ?? (isAbsolute(workdir) ? workdir : undefined);
    if (base !== undefined) config.cwd = resolve(base, config.cwd);
  }

  const disabled = written.disabled === true;
  const connectable = !disabled && !issues.some((i) => i.severity === 'error') && isKnownTransport(transport);
  const server: ResolvedServer = {
    name,
    source: ctx.source,
    transport,
    config,
    fingerprint: fingerprint(raw, workdir),
    raw,
    connectable,
    issues,
    shadowed: [],
  };
  if (disabled) server.disabled = true;
  if (ctx.file !== undefined) server.file = ctx.file;
  if (ctx.plugin !== undefined) server.plugin = ctx.plugin;
  if (root !== undefined) server.pluginRoot = root;
  if (validation.unknownType !== undefined) server.unknownType = validation.unknownType;
  if (requestedApprovals) server.requestedApprovals = requestedApprovals;
  if (raw.url !== undefined) server.displayUrl = maskUrl(raw.url);
  if (raw.env !== undefined) {
    server.displayEnv = maskSecrets(raw.env);
    if (root !== undefined && transport === 'stdio') setOwn(server.displayEnv, 'WAVE_PLUGIN_ROOT', root);
  }
  if (raw.headers !== undefined) server.displayHeaders = maskSecrets(raw.headers);
  if (raw.oauth !== undefined) server.displayOauth = maskOAuth(raw.oauth);
  return { server, issues };
}

/** Options of {@link mergeSources}. */
export interface MergeOptions {
  /** Environment for `${VAR}` expansion. Pure by default: no `process.env`. @default {} */
  env?: Env;
  /** Absolute workdir (fingerprints, relative `cwd`). @default '' */
  workdir?: string;
  /** @default 32 */
  maxServers?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Merge source layers into one server list. Pure.
 *
 * Precedence: constructor > project > user > plugin (layers of the same
 * source: earlier wins). A higher definition replaces a lower one of the same
 * name whole (never deep-merged); the hidden ones are listed in the winner's
 * `shadowed`. Servers come out in precedence order, document order within a
 * layer; past `maxServers` the rest are dropped with a `LIMIT_EXCEEDED` error
 * each, in that order. Never throws on bad entries.
 */
export function mergeSources(layers: readonly SourceLayer[], options: MergeOptions = {}): MergeResult {
  const maxServers = options.maxServers ?? MAX_SERVERS;
  const ordered = layers
    .map((layer, index) => ({ layer, index }))
    .sort(
      (a, b) => SOURCE_PRECEDENCE[a.layer.source] - SOURCE_PRECEDENCE[b.layer.source] || a.index - b.index,
    )
    .map((x) => x.layer);

  const issues: ConfigIssue[] = [];
  const winners = new Map<string, ResolvedServer>();
  /** Tool identity (`serverIdentity`) -> the name that holds it. */
  const identities = new Map<string, string>();
  const list: ResolvedServer[] = [];

  for (const layer of ordered) {
    const ctx: ResolveContext = { source: layer.source };
    if (layer.file !== undefined) ctx.file = layer.file;
    if (layer.plugin !== undefined) ctx.plugin = layer.plugin;
    if (layer.pluginRoot !== undefined) ctx.pluginRoot = layer.pluginRoot;
    if (options.env !== undefined) ctx.env = options.env;
    if (options.workdir !== undefined) ctx.workdir = options.workdir;
    if (layer.issues) issues.push(...layer.issues);
    if (!isRecord(layer.servers)) {
      issues.push(
        makeIssue(
          ctx,
          'error',
          'CONFIG_MALFORMED',
          `The servers of ${describeLocation(ctx)} are not an object of name -> server; that source is skipped.`,
        ),
      );
      continue;
    }
    for (const name of Object.keys(layer.servers)) {
      let result: ResolveResult;
      try {
        result = resolveServer(name, layer.servers[name], ctx);
      } catch (err) {
        issues.push(
          makeIssue(
            ctx,
            'error',
            'SERVER_INVALID',
            `Server "${name}" in ${describeLocation(ctx)} could not be read (${err instanceof Error ? err.message : String(err)}); it is skipped.`,
            { server: name },
          ),
        );
        continue;
      }
      issues.push(...result.issues);
      const server = result.server;
      if (!server) continue;
      const winner = winners.get(name);
      if (winner) {
        const hidden: NonNullable<ResolvedServer['shadowed']>[number] = {
          source: server.source,
          fingerprint: server.fingerprint,
        };
        if (server.file !== undefined) hidden.file = server.file;
        if (server.plugin !== undefined) hidden.plugin = server.plugin;
        winner.shadowed?.push(hidden);
        if (winner.source === 'plugin' && server.source === 'plugin') {
          const conflict = makeIssue(
            ctx,
            'warning',
            'PLUGIN_CONFLICT',
            `Plugins "${winner.plugin ?? '?'}" and "${server.plugin ?? '?'}" both define server "${name}"; the one from "${winner.plugin ?? '?'}" is used.`,
            { server: name },
          );
          issues.push(conflict);
        }
        continue;
      }
      const identity = serverIdentity(name);
      const holder = identities.get(identity);
      if (holder !== undefined) {
        issues.push(
          makeIssue(
            ctx,
            'error',
            'NAME_CONFLICT',
            `Server "${name}" in ${describeLocation(ctx)} is skipped: its tools would be named like those of server "${holder}" (both become mcp__${identity}__<tool>). Rename one of them.`,
            { server: name },
          ),
        );
        continue;
      }
      identities.set(identity, name);
      winners.set(name, server);
      list.push(server);
    }
  }

  const kept = list.slice(0, Math.max(0, maxServers));
  for (const dropped of list.slice(kept.length)) {
    const ctx: IssueContext = { source: dropped.source };
    if (dropped.file !== undefined) ctx.file = dropped.file;
    if (dropped.plugin !== undefined) ctx.plugin = dropped.plugin;
    issues.push(
      makeIssue(
        ctx,
        'error',
        'LIMIT_EXCEEDED',
        `Server "${dropped.name}" from ${describeLocation(ctx)} is skipped: at most ${maxServers} servers are loaded (constructor, then project, user, plugin). Remove servers you do not use.`,
        { server: dropped.name },
      ),
    );
  }
  return { servers: kept, issues };
}
