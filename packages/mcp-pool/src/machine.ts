import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PoolErrorCode } from './errors';

/**
 * Connection status of one server.
 *
 * `disconnected` -> `connecting` -> `connected`; `connected` -> `reconnecting`
 * -> `connected` | `error`; any -> `error`; any -> `disconnected` (manual,
 * idle, destroy; a dial or reconnection when its last user is released); a live or dialing connection -> `needs-auth` (the server
 * wants an OAuth sign-in; never dialed automatically, `connect()` or a
 * successful `authorize()` dials it again).
 */
export type ServerStatus =
  | 'disconnected'
  | 'connecting'
  | 'connected'
  | 'reconnecting'
  | 'error'
  | 'needs-auth';

/** Why a server is in `error` (or, while `reconnecting`, why it dropped). */
export interface ServerErrorInfo {
  /** Stable code (see {@link PoolErrorCode}). */
  code: PoolErrorCode;
  /** What happened and what to do, naming the server. */
  message: string;
  /** Exit code of the server process (stdio), when it exited. */
  exitCode?: number | null;
  /** Signal that ended the server process (stdio), when it exited. */
  signal?: string | null;
  /** Last lines of the server's stderr (stdio). */
  stderrTail?: string;
  /** When it happened (epoch ms). */
  at: number;
}

/**
 * State of one connection slot: the pure part the {@link transition} table
 * works on. The runtime keeps transports, timers and counters beside it.
 */
export interface MachineState {
  status: ServerStatus;
  /**
   * Identifies the current connection attempt. Every dial gets a new, larger
   * number; events that carry an older generation are stale and ignored.
   */
  generation: number;
  /**
   * An automatic dial (ensureConnected / warm) is not to happen: the slot was
   * dialed since the last reset. Cleared by an idle close, an eviction, a
   * config reset and a manual disconnect (stickiness of a manual disconnect is
   * kept by the owner's view, not here: in a shared pool another agent may
   * still dial it).
   */
  dialed: boolean;
  /**
   * Closed to make room under the connection limit: not due for an automatic
   * dial (so `ensureConnected()` does not dial it and evict another one), but
   * dialed on demand by a call or `connect()`. Cleared by the next dial.
   */
  evicted?: boolean | undefined;
  /** Reconnection attempts started since the connection dropped (0 otherwise). */
  attempt: number;
  /**
   * Reconnection attempts used by the current run of drops: kept after a
   * reconnection succeeds, so a server that drops every connection soon after
   * it is re-established still ends in `error` after `maxReconnectAttempts`.
   * Forgotten once a connection stays up `stableMs`. 0 when absent.
   */
  streak?: number;
  error?: ServerErrorInfo | undefined;
  /**
   * The connection of `generation` was lost while its dial was still running
   * (e.g. the http event stream failed during `tools/list`): applied as soon
   * as the dial succeeds, so the loss is never missed.
   */
  lostWhileDialing?: { generation: number; error: ServerErrorInfo; recoverable: boolean } | undefined;
  tools: readonly Tool[];
  /** Tools the server listed beyond the per-server limit. */
  toolsDropped: number;
  instructions?: string | undefined;
  lastConnectedAt?: number | undefined;
  pid?: number | undefined;
}

/** How a dial was asked for. `auto` dials are skipped when the slot was already dialed. */
export type DialMode = 'auto' | 'explicit';

/** Why a connection is being closed (for logs and tests). */
export type CloseReason =
  | 'manual'
  | 'idle'
  | 'evicted'
  | 'released'
  | 'lost'
  | 'failed'
  | 'stale'
  | 'reset'
  | 'destroy';

/** Inputs of the state machine. */
export type MachineEvent =
  /**
   * Start a dial using `generation` (a number larger than any used before).
   * `noRoom`: the connection limit leaves no room, so the dial fails at once
   * with this error and nothing is started.
   */
  | { type: 'DIAL'; mode: DialMode; generation: number; noRoom?: ServerErrorInfo | undefined }
  | {
      type: 'DIAL_OK';
      generation: number;
      tools: readonly Tool[];
      toolsDropped: number;
      instructions?: string | undefined;
      pid?: number | undefined;
      at: number;
    }
  /**
   * The dial failed. `recoverable`: the connection was established and then
   * dropped during the dial (http/sse): the first dial too waits and retries
   * with backoff instead of ending in `error`.
   */
  | { type: 'DIAL_FAIL'; generation: number; error: ServerErrorInfo; recoverable?: boolean }
  /** The process of an in-flight stdio dial started. */
  | { type: 'PID'; generation: number; pid: number }
  /** The transport ended without being asked to: process exit (not recoverable) or http/sse drop (recoverable). */
  | { type: 'LOST'; generation: number; error: ServerErrorInfo; recoverable: boolean }
  /** A backoff wait for `generation` ended: dial again with `next` (`noRoom`: as for `DIAL`; the attempt counts). */
  | { type: 'RETRY'; generation: number; next: number; noRoom?: ServerErrorInfo | undefined }
  | { type: 'TOOLS'; generation: number; tools: readonly Tool[]; toolsDropped: number }
  /** The server refused our OAuth credentials (no refresh helped): stop, wait for a sign-in. */
  | { type: 'NEEDS_AUTH'; generation: number; error: ServerErrorInfo }
  /** Close an unused connection without making it sticky (idle timeout or eviction). */
  | { type: 'IDLE'; generation: number; reason: 'idle' | 'evicted' }
  /** Close at once, by request (manual disconnect, last user gone). Cancels any reconnection. */
  | { type: 'DISCONNECT' }
  /**
   * The last user let go of the slot (a shared pool's lease was released) and
   * it may idle out. A connection still being dialed, or waiting to
   * reconnect, serves nobody: it is abandoned at once (not sticky: a later
   * user dials it again on demand). A live connection is left as it is (the
   * runtime arms its idle timer, so a new user in that window reuses it).
   */
  | { type: 'RELEASE' }
  /** The server's configuration changed or it was removed: close and forget. */
  | { type: 'RESET' }
  | { type: 'DESTROY' };

/** Outputs of the state machine, run by the runtime. */
export type MachineEffect =
  | { type: 'dial'; generation: number }
  | { type: 'close'; generation: number; reason: CloseReason }
  /** Wait `backoffDelay(attempt)` then send `RETRY` for `generation`. */
  | { type: 'scheduleRetry'; generation: number; attempt: number }
  | { type: 'cancelRetry' };

/** Policy knobs the table needs. */
export interface MachineOptions {
  /** Reconnection attempts after an http/sse drop; 0 = none. */
  maxReconnectAttempts: number;
  /**
   * A reconnected connection that stayed up at least this long (ms) has
   * recovered: its next drop starts counting attempts from zero. A drop
   * sooner continues the count. @default 0 (every drop starts from zero)
   */
  stableMs?: number;
}

/** A fresh, never-dialed slot. */
export function initialState(generation = 0): MachineState {
  return { status: 'disconnected', generation, dialed: false, attempt: 0, tools: [], toolsDropped: 0 };
}

type Result = [MachineState, MachineEffect[]];

const same = (s: MachineState): Result => [s, []];

/** Fields that only make sense while a connection is up. */
function down(s: MachineState): MachineState {
  return {
    ...s,
    tools: [],
    toolsDropped: 0,
    instructions: undefined,
    pid: undefined,
    attempt: 0,
    streak: 0,
    lostWhileDialing: undefined,
  };
}

/** A dial of `generation` that failed before it started: its `dial` effect dropped, then `DIAL_FAIL`. */
function failAtOnce(
  started: Result,
  generation: number,
  error: ServerErrorInfo,
  opts: MachineOptions,
): Result {
  const [next, effects] = started;
  const [failed, more] = transition(next, { type: 'DIAL_FAIL', generation, error }, opts);
  return [failed, [...effects.filter((e) => e.type !== 'dial'), ...more]];
}

/**
 * The state machine of one connection slot, as a pure table:
 * `(state, event) -> [next state, effects]`. Never throws; an event that does
 * not apply returns the same state object and no effects (except a dial
 * result that nobody wants any more, which yields a `close` of that
 * generation so its process never outlives it).
 */
export function transition(state: MachineState, event: MachineEvent, opts: MachineOptions): Result {
  const s = state;
  switch (event.type) {
    case 'DIAL': {
      if (event.noRoom) {
        const started = transition(s, { type: 'DIAL', mode: event.mode, generation: event.generation }, opts);
        if (started[0] === s) return started;
        return failAtOnce(started, event.generation, event.noRoom, opts);
      }
      if (event.generation <= s.generation) return same(s);
      if (s.status === 'connected' || s.status === 'connecting') return same(s);
      if (event.mode === 'auto' && (s.dialed || s.status !== 'disconnected')) return same(s);
      const effects: MachineEffect[] = [];
      if (s.status === 'reconnecting') {
        // An explicit connect while waiting to reconnect: stop waiting, drop any retry dial in flight.
        effects.push({ type: 'cancelRetry' }, { type: 'close', generation: s.generation, reason: 'stale' });
      }
      effects.push({ type: 'dial', generation: event.generation });
      return [
        {
          ...s,
          status: 'connecting',
          generation: event.generation,
          dialed: true,
          evicted: undefined,
          attempt: 0,
          streak: 0,
          error: undefined,
          pid: undefined,
          lostWhileDialing: undefined,
        },
        effects,
      ];
    }

    case 'DIAL_OK': {
      const live = s.status === 'connecting' || s.status === 'reconnecting';
      if (event.generation !== s.generation || !live) {
        // Nobody wants this connection any more (disconnect, destroy, newer dial): close it at once.
        return [s, [{ type: 'close', generation: event.generation, reason: 'stale' }]];
      }
      const lost = s.lostWhileDialing;
      const connected: Result = [
        {
          ...s,
          status: 'connected',
          attempt: 0,
          // A reconnection: remember the attempts it took until the connection proves stable.
          streak: s.status === 'reconnecting' ? s.attempt + 1 : 0,
          error: undefined,
          tools: event.tools,
          toolsDropped: event.toolsDropped,
          instructions: event.instructions,
          pid: event.pid,
          lastConnectedAt: event.at,
          lostWhileDialing: undefined,
        },
        [],
      ];
      if (lost?.generation !== event.generation) return connected;
      // Lost while dialing: connected, then lost at once (the loss dated now, as if it came next).
      const error = { ...lost.error, at: event.at };
      return transition(
        connected[0],
        { type: 'LOST', generation: event.generation, error, recoverable: lost.recoverable },
        opts,
      );
    }

    case 'DIAL_FAIL': {
      if (event.generation !== s.generation) return same(s);
      if (s.status === 'connecting' && event.recoverable === true && opts.maxReconnectAttempts > 0) {
        return [
          { ...down(s), status: 'reconnecting', attempt: 0, error: event.error },
          [
            { type: 'close', generation: event.generation, reason: 'failed' },
            { type: 'scheduleRetry', generation: event.generation, attempt: 0 },
          ],
        ];
      }
      if (s.status === 'connecting') {
        return [
          { ...down(s), status: 'error', error: event.error },
          [{ type: 'close', generation: event.generation, reason: 'failed' }],
        ];
      }
      if (s.status === 'reconnecting') {
        const used = s.attempt + 1;
        if (used >= opts.maxReconnectAttempts) {
          const error = {
            ...event.error,
            code: 'RECONNECT_FAILED' as const,
            message: `${event.error.message} (gave up after ${used} reconnection attempt${used === 1 ? '' : 's'}; use connect() to try again)`,
          };
          return [
            { ...down(s), status: 'error', error },
            [{ type: 'close', generation: event.generation, reason: 'failed' }],
          ];
        }
        return [
          { ...s, attempt: used, error: event.error, pid: undefined },
          [
            { type: 'close', generation: event.generation, reason: 'failed' },
            { type: 'scheduleRetry', generation: event.generation, attempt: used },
          ],
        ];
      }
      return same(s);
    }

    case 'PID': {
      if (event.generation !== s.generation) return same(s);
      if (s.status !== 'connecting' && s.status !== 'reconnecting') return same(s);
      if (s.pid === event.pid) return same(s);
      return [{ ...s, pid: event.pid }, []];
    }

    case 'LOST': {
      if (event.generation !== s.generation) return same(s);
      if (s.status === 'connecting' || s.status === 'reconnecting') {
        // The dial of this generation is still running: remember the loss for its DIAL_OK.
        if (s.lostWhileDialing?.generation === event.generation) return same(s);
        const { error, recoverable } = event;
        return [{ ...s, lostWhileDialing: { generation: event.generation, error, recoverable } }, []];
      }
      if (s.status !== 'connected') return same(s);
      if (event.recoverable && opts.maxReconnectAttempts > 0) {
        const streak = s.streak ?? 0;
        const upFor = event.error.at - (s.lastConnectedAt ?? Number.NEGATIVE_INFINITY);
        const attempt = streak > 0 && upFor < (opts.stableMs ?? 0) ? streak : 0;
        if (attempt >= opts.maxReconnectAttempts) {
          const error = {
            ...event.error,
            code: 'RECONNECT_FAILED' as const,
            message: `${event.error.message} (gave up after ${attempt} reconnection attempt${attempt === 1 ? '' : 's'}: the connection kept dropping soon after it was re-established; use connect() to try again)`,
          };
          return [
            { ...down(s), status: 'error', error },
            [{ type: 'close', generation: event.generation, reason: 'lost' }],
          ];
        }
        // Keep the last tools and instructions: the server is expected back.
        return [
          { ...s, status: 'reconnecting', attempt, error: event.error, pid: undefined },
          [
            { type: 'close', generation: event.generation, reason: 'lost' },
            { type: 'scheduleRetry', generation: event.generation, attempt },
          ],
        ];
      }
      return [
        { ...down(s), status: 'error', error: event.error },
        [{ type: 'close', generation: event.generation, reason: 'lost' }],
      ];
    }

    case 'RETRY': {
      if (event.generation !== s.generation || s.status !== 'reconnecting') return same(s);
      if (event.next <= s.generation) return same(s);
      const started: Result = [
        { ...s, generation: event.next, pid: undefined, lostWhileDialing: undefined },
        [{ type: 'dial', generation: event.next }],
      ];
      return event.noRoom ? failAtOnce(started, event.next, event.noRoom, opts) : started;
    }

    case 'NEEDS_AUTH': {
      if (event.generation !== s.generation) return same(s);
      if (s.status !== 'connecting' && s.status !== 'connected' && s.status !== 'reconnecting')
        return same(s);
      return [
        { ...down(s), status: 'needs-auth', error: event.error },
        [{ type: 'cancelRetry' }, { type: 'close', generation: event.generation, reason: 'failed' }],
      ];
    }

    case 'TOOLS': {
      if (event.generation !== s.generation || s.status !== 'connected') return same(s);
      return [{ ...s, tools: event.tools, toolsDropped: event.toolsDropped }, []];
    }

    case 'IDLE': {
      if (event.generation !== s.generation || s.status !== 'connected') return same(s);
      const evicted = event.reason === 'evicted';
      return [
        {
          ...down(s),
          status: 'disconnected',
          dialed: evicted,
          evicted: evicted || undefined,
          error: undefined,
        },
        [{ type: 'close', generation: s.generation, reason: event.reason }],
      ];
    }

    case 'RELEASE': {
      if (s.status !== 'connecting' && s.status !== 'reconnecting') return same(s);
      const effects: MachineEffect[] = [];
      if (s.status === 'reconnecting') effects.push({ type: 'cancelRetry' });
      effects.push({ type: 'close', generation: s.generation, reason: 'released' });
      return [
        { ...down(s), status: 'disconnected', dialed: false, evicted: undefined, error: undefined },
        effects,
      ];
    }

    case 'DISCONNECT':
    case 'RESET':
    case 'DESTROY': {
      const reason: CloseReason =
        event.type === 'DISCONNECT' ? 'manual' : event.type === 'RESET' ? 'reset' : 'destroy';
      // Always close the current generation (idempotent at the runtime), even if
      // the state looks closed: a disconnect must kill whatever may be running.
      return [
        { ...down(s), status: 'disconnected', dialed: false, evicted: undefined, error: undefined },
        [{ type: 'cancelRetry' }, { type: 'close', generation: s.generation, reason }],
      ];
    }
  }
}
