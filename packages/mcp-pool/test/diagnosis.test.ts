import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { callFailure } from '../src/calls';
import {
  type DialAbort,
  type DialFailure,
  dialFailure,
  lossError,
  needsExitStatus,
  notConnectedError,
} from '../src/diagnosis';
import { McpPoolError } from '../src/errors';

const base: DialFailure = {
  name: 's',
  transport: 'stdio',
  maxConnections: 16,
  reason: undefined,
  err: new Error('boom'),
  diag: {},
  at: 7,
};

describe('dialFailure: the most telling cause first', () => {
  it.each<[string, Partial<DialFailure>, string, RegExp]>([
    [
      'no room',
      { reason: { kind: 'limit' } },
      'CONNECTION_LIMIT',
      /16 connections are live.*limits\.maxConnections/,
    ],
    [
      'lost while listing tools',
      { reason: { kind: 'lost', loss: { kind: 'drop', message: 'stream ended', recoverable: true } } },
      'CONNECTION_CLOSED',
      /connection lost while listing its tools: stream ended/,
    ],
    [
      "the transport's own typed error",
      { err: new McpPoolError('SPAWN_FAILED', 'MCP server "s": command not found') },
      'SPAWN_FAILED',
      /command not found/,
    ],
    [
      'exited during start-up',
      { exit: { code: 3, signal: null }, diag: { stderrTail: 'oops' } },
      'SERVER_EXITED',
      /exited with code 3 during start-up\.\nLast stderr lines:\noops/,
    ],
    [
      'killed during start-up',
      { diag: { exit: { code: null, signal: 'SIGKILL' } } },
      'SERVER_EXITED',
      /killed by SIGKILL/,
    ],
    [
      'garbage on stdout, no message',
      { diag: { invalidStdout: { count: 2, samples: ['hello', 'world'] }, messages: 0 } },
      'INVALID_STDOUT',
      /wrote 2 lines on stdout that are not JSON-RPC[\s\S]* {2}hello\n {2}world/,
    ],
    [
      'timeout beats an exit status',
      { reason: { kind: 'timeout', ms: 500 }, exit: { code: 1, signal: null } },
      'CONNECT_TIMEOUT',
      /within 500 ms.*connectTimeoutMs/,
    ],
    [
      'http 401',
      {
        transport: 'http',
        url: 'https://x.test/mcp',
        err: Object.assign(new Error('Unauthorized'), { code: 401 }),
      },
      'CONNECT_FAILED',
      /at https:\/\/x\.test\/mcp \(http\): Unauthorized\. Check the "headers"/,
    ],
    [
      'http 404',
      {
        transport: 'sse',
        url: 'https://x.test/sse',
        err: Object.assign(new Error('Not Found'), { code: 404 }),
      },
      'CONNECT_FAILED',
      /no automatic fallback between http and sse/,
    ],
    [
      'anything else, with the cause',
      { err: new Error('refused', { cause: { code: 'ECONNREFUSED' } }) },
      'CONNECT_FAILED',
      /could not be connected: refused \(ECONNREFUSED\)\.$/,
    ],
  ])('%s', (_what, over, code, message) => {
    const info = dialFailure({ ...base, ...over });
    expect(info.code).toBe(code);
    expect(info.message).toMatch(message);
    expect(info.message).toContain('"s"');
    expect(info.at).toBe(7);
  });

  it.each<[DialAbort | undefined, unknown, boolean]>([
    [undefined, new Error('x'), true],
    [{ kind: 'closed', reason: 'failed' }, new Error('x'), true],
    [undefined, new McpPoolError('SPAWN_FAILED', 'x'), false],
    [{ kind: 'timeout', ms: 1 }, new Error('x'), false],
    [{ kind: 'limit' }, new Error('x'), false],
  ])('needsExitStatus(%o, %s) is %s', (reason, err, expected) => {
    expect(needsExitStatus(reason, err)).toBe(expected);
  });
});

describe('lossError and notConnectedError', () => {
  it('a process exit names the exit and says how to restart; a drop says what dropped', () => {
    expect(
      lossError(
        's',
        { kind: 'exit', message: 'process exited with code 1', exitCode: 1, recoverable: false },
        1,
      ),
    ).toEqual({
      code: 'SERVER_EXITED',
      message: 'MCP server "s" exited with code 1 unexpectedly. Use connect() to start it again.',
      exitCode: 1,
      at: 1,
    });
    expect(lossError('s', { kind: 'drop', message: 'stream ended', recoverable: true }, 2)).toEqual({
      code: 'CONNECTION_CLOSED',
      message: 'MCP server "s" connection lost: stream ended.',
      at: 2,
    });
  });

  it.each<[string, Parameters<typeof notConnectedError>[1], RegExp]>([
    [
      'error',
      { status: 'error', error: { code: 'CONNECT_FAILED', message: 'no\nmore', at: 0 } },
      /It failed: no Use connect\("s"\)/,
    ],
    ['reconnecting', { status: 'reconnecting' }, /try again shortly/],
    ['connecting', { status: 'connecting' }, /await ensureConnected\(\)/],
    ['disconnected', { status: 'disconnected' }, /Use ensureConnected\(\) or connect\("s"\) first/],
  ])('%s', (_s, state, message) => {
    const e = notConnectedError('s', state, 't');
    expect(e.code).toBe('SERVER_NOT_CONNECTED');
    expect(e.message).toMatch(message);
  });
});

describe('callFailure: what a failed call rejects with', () => {
  const call = { timedOut: false, timeoutMs: 100, deadline: 1_000 };
  const open = { lost: undefined, closing: false, transportGone: false };
  it.each<[string, Parameters<typeof callFailure>, string, RegExp]>([
    [
      'timed out',
      ['s', 't', new Error('x'), { ...call, timedOut: true }, false, open],
      'CALL_TIMEOUT',
      /within 100 ms/,
    ],
    [
      'no progress for the idle limit',
      [
        's',
        't',
        new Error('x'),
        { ...call, timedOut: true, idle: { maxAt: 5_000, maxMs: 5_000 } },
        false,
        open,
      ],
      'CALL_TIMEOUT',
      /no progress on "t" for 100 ms/,
    ],
    [
      'over the total limit',
      [
        's',
        't',
        new Error('x'),
        { ...call, timedOut: true, idle: { maxAt: 1_000, maxMs: 900 } },
        false,
        open,
      ],
      'CALL_TIMEOUT',
      /within 900 ms in all/,
    ],
    ['aborted by the caller', ['s', 't', new Error('x'), call, true, open], 'CALL_ABORTED', /was aborted/],
    [
      'connection closed (SDK)',
      ['s', 't', new McpError(ErrorCode.ConnectionClosed, 'closed'), call, false, open],
      'CONNECTION_CLOSED',
      /the connection was closed/,
    ],
    [
      'process exited',
      [
        's',
        't',
        new Error('x'),
        call,
        false,
        { ...open, lost: { kind: 'exit', message: 'process exited with code 2', recoverable: false } },
      ],
      'CONNECTION_CLOSED',
      /the server process exited with code 2/,
    ],
    [
      'broken pipe',
      ['s', 't', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), call, false, open],
      'CONNECTION_CLOSED',
      /failed/,
    ],
    [
      'transport gone',
      ['s', 't', new Error('Not connected'), call, false, { ...open, transportGone: true }],
      'CONNECTION_CLOSED',
      /closed/,
    ],
    [
      'a JSON-RPC error, prefix said once',
      ['s', 't', new McpError(-32602, 'MCP error -32602: bad args'), call, false, open],
      'SERVER_ERROR',
      /failed "t": MCP error -32602: bad args$/,
    ],
  ])('%s', (_what, args, code, message) => {
    const e = callFailure(...args);
    expect(e.code).toBe(code);
    expect(e.server).toBe('s');
    expect(e.message).toMatch(message);
  });
});
