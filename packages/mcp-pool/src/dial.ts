/**
 * Dialing: one connection attempt of a slot, from the transport factory to
 * `initialize` and the first tool listing, with its connect timeout, and the
 * diagnosis of a dial that failed. The pool's engine ({@link DialHost}) owns
 * the state machine, the transports' lifetimes and the client features.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isAuthRequired } from './auth/http-auth';
import { needsAuthError } from './auth/status';
import type { Clock } from './clock';
import type { Conn, Slot } from './core';
import { type DialAbort, dialFailure, needsExitStatus, withoutUndefined } from './diagnosis';
import { assertDialable } from './factory';
import type { MachineEvent, ServerErrorInfo } from './machine';
import type { ResolvedPoolSettings } from './options';
import { listToolsLeniently } from './tool-list';
import type { TransportHandle } from './transport';
import type { PoolWarning } from './warnings';

/** The SDK's request timeout is disabled in favour of the pool's own timers (max setTimeout value). */
export const NO_SDK_TIMEOUT = 2_147_483_647;
/** How long a failed dial waits for the process's exit status and last stderr lines. */
const EXIT_WAIT_MS = 250;
const MAX_TOOL_PAGES = 100;

/** What a dial needs from the pool's engine. */
export interface DialHost {
  readonly settings: ResolvedPoolSettings;
  readonly clock: Clock;
  dispatch(slot: Slot, event: MachineEvent): void;
  warn(warning: PoolWarning): void;
  /** Create the transport of `conn` (the configured factory, with the pool's context). */
  createTransport(slot: Slot, conn: Conn): TransportHandle | Promise<TransportHandle>;
  /** Terminate a handle, bounded in time; never rejects. */
  terminate(handle: TransportHandle): Promise<unknown>;
  /** Report the loss of `conn`'s transport. */
  onLost(slot: Slot, conn: Conn, loss: Parameters<Parameters<TransportHandle['onLost']>[0]>[0]): void;
  /** A client for `conn`, with the server's client features and notification handlers installed. */
  createClient(slot: Slot, conn: Conn): Client;
  refreshTools(slot: Slot, conn: Conn): Promise<void>;
  closeConn(slot: Slot, conn: Conn, reason: 'failed'): Promise<void>;
}

/** Race `p` against `signal`; the loser's rejection is swallowed. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Resolve with `p`'s value, or `undefined` after `ms`. Clears its timer. */
export function within<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    const timer = clock.setTimeout(() => resolve(undefined), ms);
    p.then(
      (v) => {
        clock.clearTimeout(timer);
        resolve(v);
      },
      () => {
        clock.clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

/** The server's tools, each checked on its own (a malformed one is dropped with a warning), at most the limit. */
export async function listTools(
  host: Pick<DialHost, 'settings' | 'warn'>,
  slot: Slot,
  client: Client,
  signal: AbortSignal,
): Promise<{ tools: Tool[]; dropped: number }> {
  if (!client.getServerCapabilities()?.tools) return { tools: [], dropped: 0 };
  // Each tool is checked on its own: one malformed tool never takes the server down.
  const checked = await listToolsLeniently(client, { signal, timeout: NO_SDK_TIMEOUT }, MAX_TOOL_PAGES);
  const name = slot.server.name;
  for (const d of checked.dropped) {
    host.warn({
      code: 'TOOL_DROPPED',
      server: name,
      tool: d.tool,
      message: `MCP server "${name}": tool "${d.tool}" is not usable and was left out (${d.reason}). The server's other tools are available; report this to the server's authors.`,
    });
  }
  const all: Tool[] = checked.tools;
  const max = host.settings.maxToolsPerServer;
  return { tools: all.slice(0, max), dropped: Math.max(0, all.length - max) };
}

/** Gather what is known about a failed dial (waiting briefly for an exit status) and diagnose it. */
async function describeDialFailure(
  host: DialHost,
  slot: Slot,
  conn: Conn,
  err: unknown,
): Promise<ServerErrorInfo> {
  const reason = conn.abort.signal.aborted ? (conn.abort.signal.reason as DialAbort | undefined) : undefined;
  if (reason?.kind !== 'limit' && reason?.kind !== 'lost' && isAuthRequired(err))
    return needsAuthError(slot.server, (err as Error).message, host.clock.now());
  const handle = conn.handle;
  // A process that exited explains more than "connection closed": wait briefly for its status.
  const exit =
    handle?.exited && needsExitStatus(reason, err)
      ? await within(host.clock, handle.exited(), EXIT_WAIT_MS)
      : undefined;
  return dialFailure({
    name: slot.server.name,
    transport: slot.server.transport,
    url: slot.server.displayUrl ?? slot.server.config.url,
    maxConnections: host.settings.maxConnections,
    reason,
    err,
    exit,
    diag: handle?.diagnostics() ?? {},
    at: host.clock.now(),
  });
}

/**
 * Run the dial of `conn`: transport, handshake, first tool listing, within
 * the connect timeout. Ends with `DIAL_OK` or `DIAL_FAIL` (nothing for a dial
 * abandoned on purpose); a failed dial's connection is closed. Never rejects.
 */
export async function runDial(host: DialHost, slot: Slot, conn: Conn): Promise<void> {
  const server = slot.server;
  const { generation, abort } = conn;
  const signal = abort.signal;
  const timeoutMs = server.config.connectTimeoutMs ?? host.settings.connectMs;
  const timer = host.clock.setTimeout(() => {
    if (!signal.aborted) abort.abort({ kind: 'timeout', ms: timeoutMs } satisfies DialAbort);
  }, timeoutMs);
  try {
    if (signal.aborted) throw signal.reason;
    assertDialable(server);
    const created = Promise.resolve().then(() => host.createTransport(slot, conn));
    // A factory that answers after the dial was abandoned: close what it made.
    created.then(
      (h) => {
        if (signal.aborted && conn.handle !== h) void host.terminate(h);
      },
      () => {},
    );
    const handle = await raceAbort(created, signal);
    conn.handle = handle;
    if (conn.closing) {
      // Closed while the factory ran: the close did not see this handle.
      await host.terminate(handle);
      throw signal.reason ?? { kind: 'closed', reason: 'stale' };
    }
    handle.onLost((loss) => host.onLost(slot, conn, loss));
    if (signal.aborted) throw signal.reason;
    const client = host.createClient(slot, conn);
    conn.client = client;
    await raceAbort(client.connect(handle.transport, { signal, timeout: NO_SDK_TIMEOUT }), signal);
    conn.handshaken = true;
    if (conn.lost?.recoverable && !signal.aborted)
      abort.abort({ kind: 'lost', loss: conn.lost } satisfies DialAbort);
    const listed = await raceAbort(listTools(host, slot, client, signal), signal);
    host.dispatch(
      slot,
      withoutUndefined({
        type: 'DIAL_OK',
        generation,
        tools: listed.tools,
        toolsDropped: listed.dropped,
        instructions: client.getInstructions(),
        pid: handle.pid(),
        at: host.clock.now(),
      }) as MachineEvent,
    );
    // (A loss reported while dialing was kept by the machine and applied with DIAL_OK.)
    // The list changed while it was being read: what we have may be stale (or a mix of pages).
    if (!conn.lost && conn.refreshAfterDial) void host.refreshTools(slot, conn);
  } catch (err) {
    const stale = slot.state.generation !== generation || slot.conns.get(generation) !== conn;
    const reason = signal.aborted ? (signal.reason as DialAbort | undefined) : undefined;
    // A dial abandoned on purpose (disconnect, destroy, newer dial) has nothing to report.
    const error =
      stale || reason?.kind === 'closed' ? undefined : await describeDialFailure(host, slot, conn, err);
    if (!signal.aborted) abort.abort({ kind: 'closed', reason: 'failed' } satisfies DialAbort);
    if (error?.code === 'AUTH_REQUIRED') {
      host.dispatch(slot, { type: 'NEEDS_AUTH', generation, error });
    } else if (error) {
      const recoverable = reason?.kind === 'lost';
      host.dispatch(slot, {
        type: 'DIAL_FAIL',
        generation,
        error,
        ...(recoverable ? { recoverable } : {}),
      });
    }
    await host.closeConn(slot, conn, 'failed');
  } finally {
    host.clock.clearTimeout(timer);
  }
}
