import { McpConfigError } from './errors';
import type { ResolvedServer } from './types';
import { describeLocation, isKnownTransport } from './validate';

function origin(server: ResolvedServer): string {
  const ctx: { source: ResolvedServer['source']; file?: string; plugin?: string } = { source: server.source };
  if (server.file !== undefined) ctx.file = server.file;
  if (server.plugin !== undefined) ctx.plugin = server.plugin;
  return describeLocation(ctx);
}

/**
 * Throw when a connect attempt to `server` must fail, with a message a person
 * can act on; return normally otherwise. The pool calls it before dialing.
 *
 * - `SERVER_DISABLED`: the entry says `"disabled": true` (checked first).
 * - `TRANSPORT_UNKNOWN`: `type` is not stdio, http or sse (kept at load, fails here).
 * - `VARIABLE_UNRESOLVED`: a `${VAR}` without default was not set at load.
 * - `SERVER_INVALID`: any other error found at load, or (hand-built servers)
 *   a stdio server without `command` / an http or sse server without `url`.
 */
export function assertConnectable(server: ResolvedServer): void {
  const where = `MCP server "${server.name}" (${origin(server)})`;
  const issues = server.issues ?? [];
  const details = {
    server: server.name,
    issues,
    ...(server.file !== undefined ? { file: server.file } : {}),
  };
  if (server.disabled === true || server.config.disabled === true) {
    throw new McpConfigError(
      'SERVER_DISABLED',
      `${where} is disabled ("disabled": true) and is never connected. Set "disabled" to false or remove it to use the server.`,
      details,
    );
  }
  if (server.unknownType !== undefined || !isKnownTransport(server.transport)) {
    const type = server.unknownType ?? server.transport;
    throw new McpConfigError(
      'TRANSPORT_UNKNOWN',
      `${where} has unknown type ${JSON.stringify(type)} and cannot connect. Set "type" to "stdio", "http" or "sse" (there is no fallback between http and sse).`,
      details,
    );
  }
  const errors = issues.filter((i) => i.severity === 'error');
  const unresolved = errors.filter((i) => i.code === 'VARIABLE_UNRESOLVED');
  if (unresolved.length > 0) {
    throw new McpConfigError(
      'VARIABLE_UNRESOLVED',
      `${where} cannot connect: ${unresolved.map((i) => i.message).join(' ')}`,
      details,
    );
  }
  if (errors.length > 0 || server.connectable === false) {
    const why = errors.length > 0 ? errors.map((i) => i.message).join(' ') : 'its configuration is invalid.';
    throw new McpConfigError('SERVER_INVALID', `${where} cannot connect: ${why}`, details);
  }
  if (server.transport === 'stdio' && typeof server.config.command !== 'string') {
    throw new McpConfigError('SERVER_INVALID', `${where} is a stdio server without "command".`, details);
  }
  if ((server.transport === 'http' || server.transport === 'sse') && typeof server.config.url !== 'string') {
    throw new McpConfigError(
      'SERVER_INVALID',
      `${where} is an ${server.transport} server without "url".`,
      details,
    );
  }
}

/**
 * Does `name` match the glob `pattern`? `*` matches any run of characters
 * (including none), `?` one character; everything else is literal and
 * case-sensitive; the whole name must match. Pure.
 */
export function matchToolGlob(pattern: string, name: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\*?]/g, (c) =>
    c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`,
  );
  return new RegExp(`^${source}$`, 's').test(name);
}

/**
 * True when tool `tool` (its name on the server, without `mcp__<server>__`)
 * needs no approval because the server's `approveTools` matches it. Only the
 * user and constructor sources can grant this; from a project file or a
 * plugin it is never true (their globs are only `requestedApprovals`). Pure.
 */
export function isToolAutoApproved(server: ResolvedServer, tool: string): boolean {
  if (server.source !== 'user' && server.source !== 'constructor') return false;
  return (server.config.approveTools ?? []).some((glob) => matchToolGlob(glob, tool));
}

/**
 * What the server's `readOnlyTools` says about tool `tool` (its name on the
 * server, without `mcp__<server>__`): the value of the first glob that matches,
 * in written order, or undefined when none does (the tool's own
 * `readOnlyHint` decides). Honoured from every source: it only decides which
 * calls may run in parallel, never approval. Pure.
 */
export function toolReadOnlyOverride(server: ResolvedServer, tool: string): boolean | undefined {
  const overrides = server.config.readOnlyTools;
  if (!overrides) return undefined;
  for (const glob of Object.keys(overrides)) {
    if (matchToolGlob(glob, tool)) return overrides[glob];
  }
  return undefined;
}
