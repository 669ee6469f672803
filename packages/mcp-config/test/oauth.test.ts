import { describe, expect, it } from 'vitest';
import { displayServer, maskOAuth } from '../src/display';
import { fingerprint } from '../src/fingerprint';
import { mergeSources, resolveServer } from '../src/merge';
import type { ConfigSource } from '../src/types';
import { validateServer } from '../src/validate';

const URL = 'https://mcp.example.com/mcp';
const ctx = { source: 'user' as const, file: '/home/u/.wave/mcp.json' };

function codes(entry: unknown, source: ConfigSource = 'user') {
  return validateServer('s', entry, { source }).issues.map((i) => [i.code, i.severity, i.field]);
}

describe('oauth: validation', () => {
  it('accepts every field', () => {
    const v = validateServer(
      's',
      { url: URL, oauth: { clientId: 'app', clientSecret: 'shh', scopes: ['a', 'b:c'], callbackPort: 8123 } },
      ctx,
    );
    expect(v.ok).toBe(true);
    expect(v.issues).toEqual([]);
    expect(v.config.oauth).toEqual({
      clientId: 'app',
      clientSecret: 'shh',
      scopes: ['a', 'b:c'],
      callbackPort: 8123,
    });
  });

  it('an empty object is valid (the client registers itself)', () => {
    expect(validateServer('s', { url: URL, oauth: {} }, ctx).ok).toBe(true);
  });

  it.each([
    ['not an object', 'yes', 'oauth'],
    ['array', [], 'oauth'],
    ['clientId empty', { clientId: '' }, 'oauth.clientId'],
    ['clientId number', { clientId: 5 }, 'oauth.clientId'],
    ['clientId with a line break', { clientId: 'a\nb' }, 'oauth.clientId'],
    ['clientSecret not a string', { clientId: 'a', clientSecret: true }, 'oauth.clientSecret'],
    ['clientSecret without clientId', { clientSecret: 'x' }, 'oauth.clientSecret'],
    ['scopes a string', { scopes: 'a b' }, 'oauth.scopes'],
    ['scope with a space', { scopes: ['a b'] }, 'oauth.scopes'],
    ['scope empty', { scopes: [''] }, 'oauth.scopes'],
    ['port 0', { callbackPort: 0 }, 'oauth.callbackPort'],
    ['port too big', { callbackPort: 70000 }, 'oauth.callbackPort'],
    ['port fraction', { callbackPort: 80.5 }, 'oauth.callbackPort'],
    ['port string', { callbackPort: '8080' }, 'oauth.callbackPort'],
  ])('%s is an error on that field', (_label, oauth, field) => {
    const v = validateServer('s', { url: URL, oauth }, ctx);
    expect(v.ok).toBe(false);
    expect(v.config.oauth).toBeUndefined();
    expect(v.issues.map((i) => [i.code, i.severity, i.field])).toContainEqual([
      'FIELD_INVALID',
      'error',
      field,
    ]);
  });

  it('an unknown key inside oauth is a warning', () => {
    expect(codes({ url: URL, oauth: { clientID: 'x' } })).toEqual([
      ['UNKNOWN_KEY', 'warning', 'oauth.clientID'],
    ]);
  });

  it('oauth on a stdio server is a transport conflict', () => {
    expect(codes({ command: 'srv', oauth: {} })).toContainEqual(['TRANSPORT_CONFLICT', 'error', 'oauth']);
  });

  it('oauth is no longer an unknown key', () => {
    expect(codes({ url: URL, type: 'sse', oauth: { clientId: 'a' } })).toEqual([]);
  });

  it('messages never quote a secret value', () => {
    const v = validateServer('s', { url: URL, oauth: { clientSecret: 'sk-live-123', clientId: 7 } }, ctx);
    for (const i of v.issues) expect(i.message).not.toContain('sk-live-123');
  });
});

describe('oauth: sources and expansion', () => {
  const entry = {
    url: URL,
    oauth: { clientId: '${CID}', clientSecret: '${CSECRET}', scopes: ['${SCOPE:-read}'] },
  };
  const env = { CID: 'the-client', CSECRET: 'sk-secret-value' };

  it.each(['user', 'constructor'] as const)('from %s: expanded, connectable', (source) => {
    const { server } = resolveServer('s', entry, { source, env });
    expect(server?.connectable).toBe(true);
    expect(server?.config.oauth).toEqual({
      clientId: 'the-client',
      clientSecret: 'sk-secret-value',
      scopes: ['read'],
    });
    expect(server?.raw?.oauth).toEqual(entry.oauth);
  });

  it.each(['project', 'plugin'] as const)(
    'clientSecret from %s is rejected with an error and dropped',
    (source) => {
      const { server, issues } = resolveServer('s', entry, {
        source,
        env,
        file: '/w/.mcp.json',
        plugin: 'p',
        pluginRoot: '/p',
      });
      const issue = issues.find((i) => i.code === 'SECRET_NOT_TRUSTED');
      expect(issue?.severity).toBe('error');
      expect(issue?.field).toBe('oauth.clientSecret');
      expect(issue?.message).toMatch(/user file|mcpServers option/);
      expect(server?.connectable).toBe(false);
      expect(server?.config.oauth?.clientSecret).toBeUndefined();
      expect(server?.raw?.oauth?.clientSecret).toBeUndefined();
      expect(JSON.stringify(server)).not.toContain('sk-secret-value');
    },
  );

  it('project sources may still give a clientId and scopes', () => {
    const { server, issues } = resolveServer(
      's',
      { url: URL, oauth: { clientId: 'pub', scopes: ['x'] } },
      { source: 'project', file: '/w/.mcp.json' },
    );
    expect(issues).toEqual([]);
    expect(server?.connectable).toBe(true);
    expect(server?.config.oauth).toEqual({ clientId: 'pub', scopes: ['x'] });
  });

  it('an unset variable in clientSecret is VARIABLE_UNRESOLVED on that field', () => {
    const { server, issues } = resolveServer('s', entry, { source: 'user', env: { CID: 'c' } });
    expect(server?.connectable).toBe(false);
    expect(issues.map((i) => [i.code, i.field])).toContainEqual([
      'VARIABLE_UNRESOLVED',
      'oauth.clientSecret',
    ]);
  });

  it('a clientId that expands to empty is an error', () => {
    const { issues } = resolveServer(
      's',
      { url: URL, oauth: { clientId: '${E}' } },
      { source: 'user', env: { E: '' } },
    );
    expect(issues.map((i) => [i.code, i.field])).toContainEqual(['FIELD_INVALID', 'oauth.clientId']);
  });

  it('mergeSources keeps the oauth of the winner whole', () => {
    const { servers } = mergeSources(
      [
        { source: 'user', servers: { s: { url: URL, oauth: { clientId: 'u', clientSecret: 'x' } } } },
        { source: 'constructor', servers: { s: { url: URL, oauth: { scopes: ['k'] } } } },
      ],
      {},
    );
    expect(servers[0]?.config.oauth).toEqual({ scopes: ['k'] });
  });
});

describe('oauth: masking', () => {
  it('maskOAuth masks a literal clientSecret and keeps references', () => {
    expect(maskOAuth({ clientId: 'app', clientSecret: 'sk-123', scopes: ['a'], callbackPort: 9 })).toEqual({
      clientId: 'app',
      clientSecret: '****',
      scopes: ['a'],
      callbackPort: 9,
    });
    expect(maskOAuth({ clientSecret: '${SECRET}' }).clientSecret).toBe('${SECRET}');
    expect(maskOAuth({ clientSecret: '${SECRET:-fallback}' }).clientSecret).toBe('${SECRET:-****}');
    expect(maskOAuth({ clientId: '${ID:-dflt}' }).clientId).toBe('${ID:-****}');
  });

  it('displayServer and displayOauth never show the secret, literal or expanded', () => {
    const { server } = resolveServer(
      's',
      { url: URL, oauth: { clientId: 'app', clientSecret: 'literal-secret' } },
      { source: 'user', env: {} },
    );
    if (!server) throw new Error('no server');
    expect(server.displayOauth).toEqual({ clientId: 'app', clientSecret: '****' });
    const d = displayServer(server);
    expect(d.oauth).toEqual({ clientId: 'app', clientSecret: '****' });
    expect(JSON.stringify(d)).not.toContain('literal-secret');
    const byRef = resolveServer(
      's',
      { url: URL, oauth: { clientId: 'a', clientSecret: '${S}' } },
      { source: 'user', env: { S: 'expanded-secret' } },
    ).server;
    if (!byRef) throw new Error('no server');
    expect(JSON.stringify(displayServer(byRef))).not.toContain('expanded-secret');
    // A hand-built server without displayOauth is masked too.
    const hand = displayServer({ ...server, displayOauth: undefined } as never);
    expect(hand.oauth?.clientSecret).toBe('****');
  });
});

describe('oauth: fingerprint', () => {
  it('servers without oauth keep their fingerprint; oauth changes it', () => {
    const base = { url: URL };
    const plain = fingerprint(base, '/w');
    expect(fingerprint({ ...base, oauth: {} }, '/w')).toBe(plain);
    expect(fingerprint({ ...base, oauth: { clientId: 'a' } }, '/w')).not.toBe(plain);
    expect(fingerprint({ ...base, oauth: { clientId: 'a' } }, '/w')).not.toBe(
      fingerprint({ ...base, oauth: { clientId: 'b' } }, '/w'),
    );
  });
});

describe('oauth: client credentials (machine to machine)', () => {
  const PEM = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMG\n-----END PRIVATE KEY-----\n';

  it('accepts client_credentials with a secret or a private key', () => {
    for (const extra of [{ clientSecret: 's' }, { privateKey: PEM, signingAlgorithm: 'ES256' }]) {
      const v = validateServer(
        's',
        { url: URL, oauth: { grant: 'client_credentials', clientId: 'm2m', ...extra } },
        ctx,
      );
      expect(v.issues).toEqual([]);
      expect(v.config.oauth?.grant).toBe('client_credentials');
    }
  });

  it.each([
    ['unknown grant', { grant: 'password' }, 'oauth.grant'],
    [
      'client_credentials without a client ID',
      { grant: 'client_credentials', clientSecret: 'x' },
      'oauth.clientId',
    ],
    [
      'client_credentials without a secret or key',
      { grant: 'client_credentials', clientId: 'c' },
      'oauth.grant',
    ],
    ['a private key that is not PEM', { clientId: 'c', privateKey: 'abc' }, 'oauth.privateKey'],
    ['a bad algorithm', { signingAlgorithm: 'RS 256' }, 'oauth.signingAlgorithm'],
  ])('%s is an error', (_label, oauth, field) => {
    const v = validateServer('s', { url: URL, oauth }, ctx);
    expect(v.issues.map((i) => [i.code, i.field])).toContainEqual(['FIELD_INVALID', field]);
  });

  it('privateKey: trusted sources only, expanded, masked', () => {
    const entry = { url: URL, oauth: { grant: 'client_credentials', clientId: 'c', privateKey: '${KEY}' } };
    const user = resolveServer('s', entry, { source: 'user', env: { KEY: PEM } }).server;
    expect(user?.config.oauth?.privateKey).toBe(PEM);
    expect(user?.displayOauth?.privateKey).toBe('${KEY}');
    const literal = resolveServer(
      's',
      { ...entry, oauth: { ...entry.oauth, privateKey: PEM } },
      { source: 'user' },
    );
    expect(JSON.stringify(displayServer(literal.server!))).not.toContain('MIGHAgEAMBMG');
    const project = resolveServer('s', entry, { source: 'project', file: '/w/.mcp.json', env: { KEY: PEM } });
    expect(project.issues.map((i) => [i.code, i.field])).toContainEqual([
      'SECRET_NOT_TRUSTED',
      'oauth.privateKey',
    ]);
    expect(project.server?.connectable).toBe(false);
    expect(JSON.stringify(project.server)).not.toContain('MIGHAgEAMBMG');
  });
});
