import { describe, expect, it } from 'vitest';
import { isMcpConfigError, McpConfigError } from '../src/errors';
import * as api from '../src/index';

describe('public API', () => {
  it('exports exactly these runtime names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'DEFAULT_IDLE_TIMEOUT_MS',
      'DEFAULT_LIFECYCLE',
      'KNOWN_TRANSPORTS',
      'McpConfigError',
      'addServer',
      'assertConnectable',
      'createConfigEditor',
      'discoverPlugins',
      'displayServer',
      'isKnownTransport',
      'isLocallyDisabled',
      'isMcpConfigError',
      'isServerTrusted',
      'isToolAutoApproved',
      'loadMcpConfig',
      'maskArgs',
      'maskOAuth',
      'maskSecrets',
      'maskUrl',
      'matchToolGlob',
      'mergeSources',
      'nodeConfigFs',
      'pluginsDir',
      'projectConfigPath',
      'readConfigLayer',
      'readLocalState',
      'readPlugin',
      'referencedVariables',
      'removeServer',
      'resolveHome',
      'serverIdentity',
      'setServerDisabled',
      'toolReadOnlyOverride',
      'trustServer',
      'userConfigPath',
      'writeFileAtomic',
    ]);
  });

  it('KNOWN_TRANSPORTS is frozen', () => {
    expect(api.KNOWN_TRANSPORTS).toEqual(['stdio', 'http', 'sse']);
    expect(Object.isFrozen(api.KNOWN_TRANSPORTS)).toBe(true);
    expect(['stdio', 'http', 'sse', 'ws', 'HTTP'].filter(api.isKnownTransport)).toEqual([
      'stdio',
      'http',
      'sse',
    ]);
  });
});

describe('isMcpConfigError', () => {
  it('recognises the error by name and code, also from another copy of the package', () => {
    const own = new McpConfigError('SERVER_EXISTS', 'x');
    const foreign = Object.assign(new Error('x'), { name: 'McpConfigError', code: 'CONFIG_IO' });
    expect(isMcpConfigError(own)).toBe(true);
    expect(isMcpConfigError(own, 'SERVER_EXISTS')).toBe(true);
    expect(isMcpConfigError(own, 'CONFIG_IO')).toBe(false);
    expect(isMcpConfigError(foreign, 'CONFIG_IO')).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an unknown code', Object.assign(new Error('x'), { name: 'McpConfigError', code: 'NOPE' })],
    ['a look-alike object', { name: 'McpConfigError', code: 'CONFIG_IO', message: 'x' }],
    ['a string', 'McpConfigError'],
  ])('rejects %s', (_label, value) => {
    expect(isMcpConfigError(value)).toBe(false);
  });
});
