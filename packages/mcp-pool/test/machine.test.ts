import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  initialState,
  type MachineEffect,
  type MachineEvent,
  type MachineState,
  type ServerErrorInfo,
  transition,
} from '../src/machine';

const opts = { maxReconnectAttempts: 3 };
const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });
const err = (message = 'boom'): ServerErrorInfo => ({ code: 'CONNECT_FAILED', message, at: 1 });

const fresh = initialState(0);
const connecting: MachineState = { ...fresh, status: 'connecting', generation: 1, dialed: true };
const connected: MachineState = {
  ...connecting,
  status: 'connected',
  tools: [tool('a')],
  toolsDropped: 2,
  instructions: 'use me',
  pid: 42,
  lastConnectedAt: 5,
};
const reconnecting: MachineState = { ...connected, status: 'reconnecting', attempt: 1, pid: undefined };
const errored: MachineState = { ...fresh, status: 'error', generation: 1, dialed: true, error: err() };
const idleClosed: MachineState = { ...fresh, generation: 1 };

type Row = [string, MachineState, MachineEvent, Partial<MachineState> | 'same', MachineEffect[]];

const authErr: ServerErrorInfo = { code: 'AUTH_REQUIRED', message: 'sign in', at: 2 };
const needsAuth: MachineState = {
  ...fresh,
  status: 'needs-auth',
  generation: 1,
  dialed: true,
  error: authErr,
};
const authClose = (generation: number): MachineEffect[] => [
  { type: 'cancelRetry' },
  { type: 'close', generation, reason: 'failed' },
];

const rows: Row[] = [
  // --- OAuth: needs-auth
  [
    'a dial refused for want of a sign-in -> needs-auth',
    connecting,
    { type: 'NEEDS_AUTH', generation: 1, error: authErr },
    { status: 'needs-auth', error: authErr, tools: [] },
    authClose(1),
  ],
  [
    'a live connection whose token is refused (no refresh helped) -> needs-auth, tools gone',
    connected,
    { type: 'NEEDS_AUTH', generation: 1, error: authErr },
    { status: 'needs-auth', tools: [], instructions: undefined, pid: undefined },
    authClose(1),
  ],
  [
    'needs-auth while reconnecting stops the retries',
    reconnecting,
    { type: 'NEEDS_AUTH', generation: 1, error: authErr },
    { status: 'needs-auth', attempt: 0 },
    authClose(1),
  ],
  [
    'a stale NEEDS_AUTH is ignored',
    connected,
    { type: 'NEEDS_AUTH', generation: 0, error: authErr },
    'same',
    [],
  ],
  [
    'NEEDS_AUTH on a closed server is ignored',
    idleClosed,
    { type: 'NEEDS_AUTH', generation: 1, error: authErr },
    'same',
    [],
  ],
  [
    'needs-auth is never dialed automatically',
    needsAuth,
    { type: 'DIAL', mode: 'auto', generation: 2 },
    'same',
    [],
  ],
  [
    'an explicit dial (connect, or after authorize) leaves needs-auth',
    needsAuth,
    { type: 'DIAL', mode: 'explicit', generation: 2 },
    { status: 'connecting', generation: 2, error: undefined },
    [{ type: 'dial', generation: 2 }],
  ],
  [
    'a manual disconnect of a needs-auth server',
    needsAuth,
    { type: 'DISCONNECT' },
    { status: 'disconnected', error: undefined },
    [{ type: 'cancelRetry' }, { type: 'close', generation: 1, reason: 'manual' }],
  ],
  // --- dialing
  [
    'auto dial of a never-dialed server',
    fresh,
    { type: 'DIAL', mode: 'auto', generation: 1 },
    { status: 'connecting', generation: 1, dialed: true },
    [{ type: 'dial', generation: 1 }],
  ],
  [
    'auto dial skipped once dialed (failed)',
    errored,
    { type: 'DIAL', mode: 'auto', generation: 2 },
    'same',
    [],
  ],
  [
    'auto dial skipped after a manual-style disconnect marks dialed',
    { ...fresh, dialed: true },
    { type: 'DIAL', mode: 'auto', generation: 2 },
    'same',
    [],
  ],
  [
    'explicit dial retries a failed server',
    errored,
    { type: 'DIAL', mode: 'explicit', generation: 2 },
    { status: 'connecting', generation: 2, error: undefined },
    [{ type: 'dial', generation: 2 }],
  ],
  [
    'dial while connecting joins it',
    connecting,
    { type: 'DIAL', mode: 'explicit', generation: 2 },
    'same',
    [],
  ],
  [
    'dial while connected is a no-op',
    connected,
    { type: 'DIAL', mode: 'explicit', generation: 2 },
    'same',
    [],
  ],
  [
    'explicit dial while reconnecting cancels the wait and drops a retry in flight',
    reconnecting,
    { type: 'DIAL', mode: 'explicit', generation: 2 },
    { status: 'connecting', generation: 2, attempt: 0 },
    [
      { type: 'cancelRetry' },
      { type: 'close', generation: 1, reason: 'stale' },
      { type: 'dial', generation: 2 },
    ],
  ],
  [
    'auto dial while reconnecting is a no-op',
    reconnecting,
    { type: 'DIAL', mode: 'auto', generation: 2 },
    'same',
    [],
  ],
  [
    'a dial with an old generation is ignored',
    errored,
    { type: 'DIAL', mode: 'explicit', generation: 1 },
    'same',
    [],
  ],
  [
    'auto dial after an idle close dials again',
    idleClosed,
    { type: 'DIAL', mode: 'auto', generation: 2 },
    { status: 'connecting', generation: 2 },
    [{ type: 'dial', generation: 2 }],
  ],
  // --- dial results
  [
    'dial ok',
    connecting,
    {
      type: 'DIAL_OK',
      generation: 1,
      tools: [tool('x')],
      toolsDropped: 0,
      instructions: 'hi',
      pid: 7,
      at: 9,
    },
    { status: 'connected', tools: [tool('x')], instructions: 'hi', pid: 7, lastConnectedAt: 9 },
    [],
  ],
  [
    'dial ok of an old generation closes that connection',
    { ...connecting, generation: 2 },
    { type: 'DIAL_OK', generation: 1, tools: [], toolsDropped: 0, at: 9 },
    'same',
    [{ type: 'close', generation: 1, reason: 'stale' }],
  ],
  [
    'dial ok after a disconnect closes that connection',
    { ...idleClosed },
    { type: 'DIAL_OK', generation: 1, tools: [], toolsDropped: 0, at: 9 },
    'same',
    [{ type: 'close', generation: 1, reason: 'stale' }],
  ],
  [
    'dial fail -> error',
    connecting,
    { type: 'DIAL_FAIL', generation: 1, error: err('nope') },
    { status: 'error', error: err('nope'), tools: [] },
    [{ type: 'close', generation: 1, reason: 'failed' }],
  ],
  [
    'stale dial fail ignored',
    { ...connecting, generation: 2 },
    { type: 'DIAL_FAIL', generation: 1, error: err() },
    'same',
    [],
  ],
  [
    'dial fail during reconnect schedules the next attempt',
    reconnecting,
    { type: 'DIAL_FAIL', generation: 1, error: err('refused') },
    { status: 'reconnecting', attempt: 2, tools: [tool('a')] },
    [
      { type: 'close', generation: 1, reason: 'failed' },
      { type: 'scheduleRetry', generation: 1, attempt: 2 },
    ],
  ],
  [
    'last reconnect attempt fails -> error',
    { ...reconnecting, attempt: 2 },
    { type: 'DIAL_FAIL', generation: 1, error: err('refused') },
    { status: 'error', tools: [], attempt: 0 },
    [{ type: 'close', generation: 1, reason: 'failed' }],
  ],
  // --- pid
  ['pid while connecting', connecting, { type: 'PID', generation: 1, pid: 9 }, { pid: 9 }, []],
  ['stale pid ignored', connecting, { type: 'PID', generation: 0, pid: 9 }, 'same', []],
  ['pid when connected ignored', connected, { type: 'PID', generation: 1, pid: 9 }, 'same', []],
  // --- lost
  [
    'stdio exit -> error, rest of the tree reaped',
    connected,
    { type: 'LOST', generation: 1, error: err('exited with code 3'), recoverable: false },
    { status: 'error', tools: [], pid: undefined, instructions: undefined },
    [{ type: 'close', generation: 1, reason: 'lost' }],
  ],
  [
    'http drop -> reconnecting, tools kept',
    connected,
    { type: 'LOST', generation: 1, error: err('dropped'), recoverable: true },
    { status: 'reconnecting', attempt: 0, tools: [tool('a')], instructions: 'use me', pid: undefined },
    [
      { type: 'close', generation: 1, reason: 'lost' },
      { type: 'scheduleRetry', generation: 1, attempt: 0 },
    ],
  ],
  [
    'http drop with reconnection disabled -> error',
    connected,
    { type: 'LOST', generation: 1, error: err('dropped'), recoverable: true },
    { status: 'error' },
    [{ type: 'close', generation: 1, reason: 'lost' }],
  ],
  [
    'stale lost event ignored',
    { ...connected, generation: 2 },
    { type: 'LOST', generation: 1, error: err(), recoverable: false },
    'same',
    [],
  ],
  [
    'lost while disconnected ignored',
    idleClosed,
    { type: 'LOST', generation: 1, error: err(), recoverable: true },
    'same',
    [],
  ],
  [
    'first dial dropped after the handshake (recoverable) -> reconnecting with backoff, not error',
    connecting,
    { type: 'DIAL_FAIL', generation: 1, error: err(), recoverable: true },
    { status: 'reconnecting', attempt: 0, error: err() },
    [
      { type: 'close', generation: 1, reason: 'failed' },
      { type: 'scheduleRetry', generation: 1, attempt: 0 },
    ],
  ],
  [
    'lost while connecting: kept for the dial (still connecting)',
    connecting,
    { type: 'LOST', generation: 1, error: err(), recoverable: false },
    { status: 'connecting', lostWhileDialing: { generation: 1, error: err(), recoverable: false } },
    [],
  ],
  [
    'lost while connecting, a second report: unchanged',
    { ...connecting, lostWhileDialing: { generation: 1, error: err('first'), recoverable: true } },
    { type: 'LOST', generation: 1, error: err('second'), recoverable: false },
    'same',
    [],
  ],
  [
    'lost while a retry dial runs: kept for that dial',
    { ...reconnecting, generation: 5 },
    { type: 'LOST', generation: 5, error: err(), recoverable: true },
    { status: 'reconnecting', lostWhileDialing: { generation: 5, error: err(), recoverable: true } },
    [],
  ],
  [
    'dial succeeds after a non-recoverable loss while dialing -> error at once, connection closed',
    { ...connecting, lostWhileDialing: { generation: 1, error: err('gone'), recoverable: false } },
    { type: 'DIAL_OK', generation: 1, tools: [tool('x')], toolsDropped: 0, at: 9 },
    { status: 'error', error: { ...err('gone'), at: 9 }, tools: [], lostWhileDialing: undefined },
    [{ type: 'close', generation: 1, reason: 'lost' }],
  ],
  [
    'dial succeeds after a recoverable loss while dialing -> reconnecting with the tools kept',
    { ...connecting, lostWhileDialing: { generation: 1, error: err('dropped'), recoverable: true } },
    { type: 'DIAL_OK', generation: 1, tools: [tool('x')], toolsDropped: 0, at: 9 },
    {
      status: 'reconnecting',
      attempt: 0,
      tools: [tool('x')],
      error: { ...err('dropped'), at: 9 },
      lastConnectedAt: 9,
      lostWhileDialing: undefined,
    },
    [
      { type: 'close', generation: 1, reason: 'lost' },
      { type: 'scheduleRetry', generation: 1, attempt: 0 },
    ],
  ],
  [
    'a loss kept for an older dial does not touch a newer dial',
    { ...connecting, generation: 2, lostWhileDialing: { generation: 1, error: err(), recoverable: false } },
    { type: 'DIAL_OK', generation: 2, tools: [], toolsDropped: 0, at: 9 },
    { status: 'connected', generation: 2, lostWhileDialing: undefined },
    [],
  ],
  // --- no room under the connection limit
  [
    'dial with no room -> error at once, nothing dialed',
    fresh,
    { type: 'DIAL', mode: 'auto', generation: 1, noRoom: { ...err('no room'), code: 'CONNECTION_LIMIT' } },
    { status: 'error', generation: 1, dialed: true, error: { ...err('no room'), code: 'CONNECTION_LIMIT' } },
    [{ type: 'close', generation: 1, reason: 'failed' }],
  ],
  [
    'auto dial with no room of a failed server: nothing happens',
    errored,
    { type: 'DIAL', mode: 'auto', generation: 2, noRoom: err('no room') },
    'same',
    [],
  ],
  [
    'explicit dial with no room while reconnecting -> the wait is cancelled, error',
    reconnecting,
    { type: 'DIAL', mode: 'explicit', generation: 4, noRoom: err('no room') },
    { status: 'error', generation: 4, error: err('no room'), tools: [] },
    [
      { type: 'cancelRetry' },
      { type: 'close', generation: 1, reason: 'stale' },
      { type: 'close', generation: 4, reason: 'failed' },
    ],
  ],
  [
    'retry with no room -> the attempt fails and counts, next retry scheduled',
    reconnecting,
    { type: 'RETRY', generation: 1, next: 5, noRoom: err('no room') },
    { status: 'reconnecting', generation: 5, attempt: 2, error: err('no room') },
    [
      { type: 'close', generation: 5, reason: 'failed' },
      { type: 'scheduleRetry', generation: 5, attempt: 2 },
    ],
  ],
  [
    'retry with no room on the last attempt -> RECONNECT_FAILED',
    { ...reconnecting, attempt: 2 },
    { type: 'RETRY', generation: 1, next: 5, noRoom: err('no room') },
    { status: 'error', generation: 5, error: expect.objectContaining({ code: 'RECONNECT_FAILED' }) },
    [{ type: 'close', generation: 5, reason: 'failed' }],
  ],
  // --- retry
  [
    'retry due -> new generation dialed',
    reconnecting,
    { type: 'RETRY', generation: 1, next: 5 },
    { status: 'reconnecting', generation: 5 },
    [{ type: 'dial', generation: 5 }],
  ],
  [
    'stale retry ignored',
    { ...reconnecting, generation: 3 },
    { type: 'RETRY', generation: 1, next: 5 },
    'same',
    [],
  ],
  [
    'retry after manual disconnect ignored',
    idleClosed,
    { type: 'RETRY', generation: 1, next: 5 },
    'same',
    [],
  ],
  // --- tools
  [
    'tools refreshed',
    connected,
    { type: 'TOOLS', generation: 1, tools: [tool('b'), tool('c')], toolsDropped: 0 },
    { tools: [tool('b'), tool('c')], toolsDropped: 0 },
    [],
  ],
  [
    'stale tools ignored',
    connected,
    { type: 'TOOLS', generation: 0, tools: [], toolsDropped: 0 },
    'same',
    [],
  ],
  // --- idle
  [
    'idle close is not sticky',
    connected,
    { type: 'IDLE', generation: 1, reason: 'idle' },
    { status: 'disconnected', dialed: false, tools: [], pid: undefined },
    [{ type: 'close', generation: 1, reason: 'idle' }],
  ],
  [
    'eviction is not sticky, and not due for an automatic dial (dialed on demand)',
    connected,
    { type: 'IDLE', generation: 1, reason: 'evicted' },
    { status: 'disconnected', dialed: true, evicted: true },
    [{ type: 'close', generation: 1, reason: 'evicted' }],
  ],
  [
    'an evicted slot is skipped by an automatic dial',
    { ...fresh, dialed: true, evicted: true },
    { type: 'DIAL', mode: 'auto', generation: 5 },
    'same',
    [],
  ],
  [
    'an evicted slot dialed on demand: the flag is cleared',
    { ...fresh, dialed: true, evicted: true },
    { type: 'DIAL', mode: 'explicit', generation: 5 },
    { status: 'connecting', generation: 5, dialed: true, evicted: undefined },
    [{ type: 'dial', generation: 5 }],
  ],
  [
    'idle of an old generation ignored',
    connected,
    { type: 'IDLE', generation: 0, reason: 'idle' },
    'same',
    [],
  ],
  // --- release: the last user of the slot let go of it
  [
    'RELEASE while dialing abandons the dial: disconnected, due again for an automatic dial, no error',
    { ...connecting, pid: 7, lostWhileDialing: { generation: 1, error: err(), recoverable: true } },
    { type: 'RELEASE' },
    {
      status: 'disconnected',
      generation: 1,
      dialed: false,
      evicted: undefined,
      error: undefined,
      pid: undefined,
      lostWhileDialing: undefined,
    },
    [{ type: 'close', generation: 1, reason: 'released' }],
  ],
  [
    'RELEASE while reconnecting stops the reconnection and its dial',
    reconnecting,
    { type: 'RELEASE' },
    { status: 'disconnected', dialed: false, error: undefined, tools: [], attempt: 0 },
    [{ type: 'cancelRetry' }, { type: 'close', generation: 1, reason: 'released' }],
  ],
  ['RELEASE of a live connection leaves it to idle out', connected, { type: 'RELEASE' }, 'same', []],
  ['RELEASE of a closed slot', idleClosed, { type: 'RELEASE' }, 'same', []],
  ['RELEASE of a failed slot keeps it as it is', errored, { type: 'RELEASE' }, 'same', []],
  ['RELEASE of a needs-auth slot keeps it as it is', needsAuth, { type: 'RELEASE' }, 'same', []],
  [
    'the dial result of a released dial is closed at once',
    { ...idleClosed, dialed: false },
    { type: 'DIAL_OK', generation: 1, tools: [], toolsDropped: 0, at: 9 },
    'same',
    [{ type: 'close', generation: 1, reason: 'stale' }],
  ],
  [
    'a released dial is due again for an automatic dial',
    { ...idleClosed, dialed: false },
    { type: 'DIAL', mode: 'auto', generation: 2 },
    { status: 'connecting', generation: 2, dialed: true },
    [{ type: 'dial', generation: 2 }],
  ],
  // --- disconnect / reset / destroy from every state
  ...(
    [
      ['disconnected', fresh],
      ['connecting', connecting],
      ['connected', connected],
      ['reconnecting', reconnecting],
      ['error', errored],
    ] as const
  ).flatMap(([label, st]): Row[] =>
    (['DISCONNECT', 'RESET', 'DESTROY'] as const).map(
      (type): Row => [
        `${type} from ${label}`,
        st,
        { type },
        { status: 'disconnected', tools: [], pid: undefined, error: undefined, attempt: 0 },
        [
          { type: 'cancelRetry' },
          {
            type: 'close',
            generation: st.generation,
            reason: type === 'DISCONNECT' ? 'manual' : type === 'RESET' ? 'reset' : 'destroy',
          },
        ],
      ],
    ),
  ),
];

describe('transition', () => {
  it.each(rows)('%s', (label, state, event, expected, effects) => {
    const o = label.includes('reconnection disabled') ? { maxReconnectAttempts: 0 } : opts;
    const [next, fx] = transition(state, event, o);
    if (expected === 'same') {
      expect(next).toBe(state);
    } else {
      expect(next).toMatchObject(expected);
      for (const [k, v] of Object.entries(expected)) {
        if (v === undefined) expect(next[k as keyof MachineState]).toBeUndefined();
      }
    }
    expect(fx).toEqual(effects);
  });

  it('never mutates its input', () => {
    const frozen = Object.freeze({ ...connected, tools: Object.freeze([tool('a')]) }) as MachineState;
    const events: MachineEvent[] = [
      { type: 'LOST', generation: 1, error: err(), recoverable: true },
      { type: 'IDLE', generation: 1, reason: 'idle' },
      { type: 'DISCONNECT' },
      { type: 'TOOLS', generation: 1, tools: [], toolsDropped: 0 },
    ];
    for (const e of events) expect(() => transition(frozen, e, opts)).not.toThrow();
  });

  it('gives up with RECONNECT_FAILED after exactly maxReconnectAttempts failed dials', () => {
    let s: MachineState = connected;
    let gen = 1;
    [s] = transition(s, { type: 'LOST', generation: gen, error: err('dropped'), recoverable: true }, opts);
    const dials: number[] = [];
    for (;;) {
      const [afterRetry, fx] = transition(s, { type: 'RETRY', generation: gen, next: gen + 1 }, opts);
      if (fx.length === 0) break;
      gen += 1;
      dials.push(gen);
      [s] = transition(afterRetry, { type: 'DIAL_FAIL', generation: gen, error: err('refused') }, opts);
      if (s.status !== 'reconnecting') break;
    }
    expect(dials).toHaveLength(3);
    expect(s.status).toBe('error');
    expect(s.error?.code).toBe('RECONNECT_FAILED');
    expect(s.error?.message).toMatch(/refused.*3 reconnection attempts.*connect\(\)/);
  });

  it('a reconnect that succeeds returns to connected with the new tools', () => {
    let [s] = transition(connected, { type: 'LOST', generation: 1, error: err(), recoverable: true }, opts);
    [s] = transition(s, { type: 'RETRY', generation: 1, next: 2 }, opts);
    [s] = transition(
      s,
      { type: 'DIAL_OK', generation: 2, tools: [tool('z')], toolsDropped: 0, at: 50 },
      opts,
    );
    expect(s).toMatchObject({
      status: 'connected',
      generation: 2,
      attempt: 0,
      tools: [tool('z')],
      lastConnectedAt: 50,
    });
    expect(s.error).toBeUndefined();
  });

  describe('drops soon after a reconnection (stableMs)', () => {
    const flappy = { maxReconnectAttempts: 3, stableMs: 1_000 };
    const lost = (generation: number, at: number): MachineEvent => ({
      type: 'LOST',
      generation,
      error: { ...err('dropped'), at },
      recoverable: true,
    });
    /** Drop, retry and reconnect; the new connection is up at `upAt`. */
    function cycle(s: MachineState, at: number, upAt: number): MachineState {
      const g = s.generation;
      let [n] = transition(s, lost(g, at), flappy);
      if (n.status !== 'reconnecting') return n;
      [n] = transition(n, { type: 'RETRY', generation: g, next: g + 1 }, flappy);
      [n] = transition(
        n,
        { type: 'DIAL_OK', generation: g + 1, tools: [], toolsDropped: 0, at: upAt },
        flappy,
      );
      return n;
    }

    it.each([
      ['up shorter than stableMs: the count goes on', 999, [1, 2, 3], 'error'],
      ['up for stableMs: every drop starts from zero', 1_000, [1, 1, 1], 'connected'],
    ] as const)('%s', (_label, upFor, streaks, final) => {
      let s: MachineState = { ...connected, lastConnectedAt: 0 };
      let t = 10_000;
      const seen: number[] = [];
      for (let i = 0; i < 3; i++) {
        s = cycle(s, t, t + 10);
        seen.push(s.streak ?? 0);
        t += 10 + upFor;
      }
      expect(seen).toEqual(streaks);
      const [last] = transition(s, lost(s.generation, t), flappy);
      expect(last.status).toBe(final === 'error' ? 'error' : 'reconnecting');
      if (final === 'error') {
        expect(last.error?.code).toBe('RECONNECT_FAILED');
        expect(last.error?.message).toMatch(/dropped.*3 reconnection attempts.*connect\(\)/);
      }
    });

    it('the first drop of a fresh connection always starts from zero', () => {
      const [s, fx] = transition({ ...connected, lastConnectedAt: 0 }, lost(1, 1), flappy);
      expect(s).toMatchObject({ status: 'reconnecting', attempt: 0 });
      expect(fx).toContainEqual({ type: 'scheduleRetry', generation: 1, attempt: 0 });
    });

    it('a manual disconnect, an idle close or an explicit dial forgets the streak', () => {
      const streaky: MachineState = { ...connected, streak: 2 };
      for (const e of [
        { type: 'DISCONNECT' },
        { type: 'IDLE', generation: 1, reason: 'idle' },
      ] as MachineEvent[]) {
        expect(transition(streaky, e, flappy)[0].streak).toBe(0);
      }
      const [dialing] = transition(
        { ...errored, streak: 2 },
        { type: 'DIAL', mode: 'explicit', generation: 5 },
        flappy,
      );
      expect(dialing.streak).toBe(0);
    });
  });
});
