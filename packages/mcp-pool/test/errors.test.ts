import { describe, expect, it } from 'vitest';
import { isMcpPoolError, McpPoolError } from '../src/errors';

/** What another installed copy of this package would throw: same name and code, another class. */
class OtherCopyError extends Error {
  override readonly name = 'McpPoolError';
  constructor(readonly code: string) {
    super('from another copy');
  }
}

describe('isMcpPoolError', () => {
  it.each<[string, unknown, Parameters<typeof isMcpPoolError>[1], boolean]>([
    ['this copy, any code', new McpPoolError('CALL_TIMEOUT', 'x'), undefined, true],
    ['this copy, same code', new McpPoolError('CALL_TIMEOUT', 'x'), 'CALL_TIMEOUT', true],
    ['this copy, other code', new McpPoolError('CALL_TIMEOUT', 'x'), 'CALL_ABORTED', false],
    ['another copy, same code', new OtherCopyError('CALL_TIMEOUT'), 'CALL_TIMEOUT', true],
    ['another copy, other code', new OtherCopyError('CALL_TIMEOUT'), 'UNKNOWN_SERVER', false],
    ['a plain object with name and code', { name: 'McpPoolError', code: 'CALL_TIMEOUT' }, undefined, true],
    ['another error name', Object.assign(new Error('x'), { code: 'CALL_TIMEOUT' }), undefined, false],
    ['name without a string code', { name: 'McpPoolError' }, undefined, false],
    ['a string', 'McpPoolError', undefined, false],
    ['null', null, undefined, false],
    ['undefined', undefined, undefined, false],
  ])('%s', (_what, err, code, expected) => {
    expect(isMcpPoolError(err, code)).toBe(expected);
  });

  it('McpPoolError keeps code, server, cause and a stable name', () => {
    const cause = new Error('root');
    const e = new McpPoolError('SERVER_EXITED', 'MCP server "a" exited', { server: 'a', cause, exitCode: 1 });
    expect(e).toMatchObject({ name: 'McpPoolError', code: 'SERVER_EXITED', server: 'a', exitCode: 1, cause });
  });
});
