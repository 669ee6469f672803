import { assertConnectable, isKnownTransport, isMcpConfigError, type ResolvedServer } from '@wave/mcp-config';
import type { spawnTracked } from '@wave/proc-reaper';
import { McpPoolError } from './errors';
import { httpHandle } from './http-transport';
import { inheritedEnvironment, resolveStdioCommand } from './stdio-command';
import { stdioHandle, TrackedStdioTransport } from './stdio-transport';
import type { TransportContext, TransportHandle } from './transport';

/**
 * The environment of a stdio server: an allow-list of the host's environment
 * (POSIX: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`; Windows: what
 * programs need to start, such as `SYSTEMROOT`, `APPDATA`, `LOCALAPPDATA`,
 * `PROGRAMFILES`, `TEMP`, `PATHEXT`, `COMSPEC`; see `WINDOWS_INHERITED_ENV`),
 * then the server's own `env` on top. Secrets in the host's environment are
 * not passed on unless the configuration names them.
 */
export function stdioEnvironment(
  server: ResolvedServer,
  platform: NodeJS.Platform = process.platform,
  hostEnv: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  return inheritedEnvironment(platform, hostEnv, server.config.env ?? {});
}

/** The known transports (owned by @wave/mcp-config). Anything else fails at connect time with `TRANSPORT_UNKNOWN`. */
export { KNOWN_TRANSPORTS } from '@wave/mcp-config';

/**
 * Check that a server can be dialed: `@wave/mcp-config`'s `assertConnectable`
 * (unknown type, unresolved variables, invalid entry), then what the pool
 * itself needs (command present, url absolute http(s)). Throws
 * {@link McpPoolError} with `TRANSPORT_UNKNOWN` or `CONFIG_INVALID`.
 */
export function assertDialable(server: ResolvedServer): void {
  try {
    assertConnectable(server);
  } catch (err) {
    if (!isMcpConfigError(err)) throw err;
    throw new McpPoolError(
      err.code === 'TRANSPORT_UNKNOWN' ? 'TRANSPORT_UNKNOWN' : 'CONFIG_INVALID',
      err.message,
      {
        server: server.name,
        cause: err,
      },
    );
  }
  const t = server.transport;
  if (!isKnownTransport(t)) {
    throw new McpPoolError(
      'TRANSPORT_UNKNOWN',
      `MCP server "${server.name}": unknown transport type "${t}"${where(server)}. Use "stdio" (with "command"), "http" or "sse" (with "url"). There is no automatic fallback between http and sse.`,
      { server: server.name },
    );
  }
  if (t === 'stdio') {
    if (typeof server.config.command !== 'string' || server.config.command.trim() === '') {
      throw new McpPoolError(
        'CONFIG_INVALID',
        `MCP server "${server.name}": a stdio server needs a "command"${where(server)}.`,
        { server: server.name },
      );
    }
    return;
  }
  const url = server.config.url;
  let ok = false;
  try {
    const u = new URL(url ?? '');
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new McpPoolError(
      'CONFIG_INVALID',
      `MCP server "${server.name}": "${server.displayUrl ?? url ?? ''}" is not an absolute http(s) URL${where(server)}.`,
      { server: server.name },
    );
  }
}

function where(server: ResolvedServer): string {
  return server.file ? ` (in ${server.file})` : '';
}

/** What the stdio part of the default factory looks at. Injected in tests (no Windows machine needed). */
export interface StdioSpawnHost {
  platform: NodeJS.Platform;
  /** The host's environment (the allow-list is taken from it). */
  env: Readonly<Record<string, string | undefined>>;
  /** @default a `statSync` check */
  isFile?: ((path: string) => boolean) | undefined;
  /** @default spawnTracked from `@wave/proc-reaper` */
  spawn?: typeof spawnTracked | undefined;
}

/**
 * The transport of a stdio server: the environment allow-list of the
 * platform, the command resolved like the platform's shell does (Windows:
 * `PATHEXT`, `.cmd` / `.bat` through `cmd.exe /d /s /c` with verbatim,
 * quoted arguments), spawned through proc-reaper (group leader, marker,
 * ledger). Not started.
 */
export function stdioTransport(
  server: ResolvedServer,
  ctx: TransportContext,
  host: StdioSpawnHost = { platform: process.platform, env: process.env },
): TrackedStdioTransport {
  const env = stdioEnvironment(server, host.platform, host.env);
  // Windows: PATHEXT lookup, and .cmd/.bat (npx) through cmd.exe. POSIX: unchanged.
  const spawnAs = resolveStdioCommand(server.config.command!, server.config.args ?? [], {
    platform: host.platform,
    env,
    cwd: server.config.cwd,
    ...(host.isFile ? { isFile: host.isFile } : {}),
  });
  return new TrackedStdioTransport({
    command: spawnAs.command,
    args: spawnAs.args,
    env,
    cwd: server.config.cwd,
    windowsVerbatimArguments: spawnAs.windowsVerbatimArguments,
    stderrBytes: ctx.stderrBytes,
    killGraceMs: ctx.killGraceMs,
    markerNamespace: ctx.markerNamespace,
    ...(ctx.maxMessageBytes !== undefined ? { maxLineBytes: ctx.maxMessageBytes } : {}),
    ledger: ctx.ledger,
    onLedgerError: ctx.onLedgerError,
    clock: ctx.clock,
    serverName: server.name,
    onSpawn: ctx.onPid,
    ...(host.spawn ? { spawn: host.spawn } : {}),
  });
}

/**
 * The default {@link TransportFactory}: stdio servers through proc-reaper's
 * tracked spawn (process-group leader, marker, whole-tree kill), `http`
 * through the SDK's Streamable HTTP transport, `sse` through its SSE
 * transport, both with the configured headers. No http -> sse fallback.
 */
export function defaultTransportFactory(server: ResolvedServer, ctx: TransportContext): TransportHandle {
  assertDialable(server);
  if (server.transport === 'stdio') return stdioHandle(stdioTransport(server, ctx));
  return httpHandle({
    kind: server.transport === 'sse' ? 'sse' : 'http',
    url: server.config.url!,
    headers: server.config.headers,
    displayUrl: server.displayUrl,
    auth: ctx.auth,
  });
}
