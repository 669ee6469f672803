import { describe, expect, test } from 'vitest';
import * as api from '../src/index';

describe('public API', () => {
  test('the root entry exports exactly these runtime names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toEqual([
      'AuthorizeError',
      'DEFAULT_RECONNECT',
      'McpPool',
      'McpPoolError',
      'defaultTransportFactory',
      'isMcpPoolError',
      'systemClock',
    ]);
  });
});
