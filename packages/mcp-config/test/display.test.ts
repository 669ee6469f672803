import { describe, expect, it } from 'vitest';
import { displayServer, maskSecrets, maskUrl, maskValue, mergeSources } from '../src/index';

describe('maskValue', () => {
  it.each([
    ['', ''],
    ['ghp_abc123', '****'],
    ['${TOKEN}', '${TOKEN}'],
    ['${TOKEN:-fallback}', '${TOKEN:-fallback}'],
    ['Bearer ${TOKEN}', 'Bearer ${TOKEN}'],
    ['Bearer abc123', 'Bearer ****'],
    ['bearer abc123', 'bearer ****'],
    ['Basic dXNlcjpwYXNz', 'Basic ****'],
    ['${USER}:${PASS}', '${USER}:${PASS}'],
    ['prefix-${T}', '****${T}'],
    ['${A}secret', '${A}****'],
    ['production', '****'],
  ])('%j -> %j', (value, shown) => {
    expect(maskValue(value)).toBe(shown);
  });

  it('maskSecrets keeps keys, masks values', () => {
    expect(maskSecrets({ API_KEY: 'sk-123', REF: '${REF}', __proto__x: 'v' })).toEqual({
      API_KEY: '****',
      REF: '${REF}',
      __proto__x: '****',
    });
    expect(maskSecrets(undefined)).toBeUndefined();
  });
});

describe('maskUrl', () => {
  it.each([
    ['https://h/mcp', 'https://h/mcp'],
    ['https://${HOST}/mcp', 'https://${HOST}/mcp'],
    ['https://user:pa55@h/mcp', 'https://user:****@h/mcp'],
    ['https://user:${PASS}@h/mcp', 'https://user:${PASS}@h/mcp'],
    ['https://ghp_token@h/mcp', 'https://****@h/mcp'],
    ['https://${TOKEN}@h/mcp', 'https://${TOKEN}@h/mcp'],
    ['https://h/mcp?api_key=abc&x=1', 'https://h/mcp?api_key=****&x=1'],
    ['https://h/mcp?token=${T}&sig=zz#frag', 'https://h/mcp?token=${T}&sig=****#frag'],
    ['https://h/mcp?page=2&Authorization=abc', 'https://h/mcp?page=2&Authorization=****'],
    ['not a url at all', 'not a url at all'],
    // An "@" inside the password: the userinfo ends at the LAST "@" before the host (WHATWG URL).
    ['https://user:p@ss@h/mcp', 'https://user:****@h/mcp'],
    ['https://tok@en@h/mcp', 'https://****@h/mcp'],
    ['https://user:a@b@c@h/mcp?x=1', 'https://user:****@h/mcp?x=1'],
    ['https://h/a@b', 'https://h/a@b'],
    // OAuth implicit flow puts the token in the fragment.
    ['https://h/cb#access_token=abc&state=1', 'https://h/cb#access_token=****&state=1'],
  ])('%s', (url, shown) => {
    expect(maskUrl(url)).toBe(shown);
  });
});

describe('displayServer', () => {
  it('never shows an expanded secret', () => {
    const secret = 'sk-live-very-secret';
    const { servers } = mergeSources(
      [
        {
          source: 'user',
          file: '/h/mcp.json',
          servers: {
            remote: {
              url: 'https://h/mcp?key=${K}',
              headers: { Authorization: 'Bearer ${K}', 'X-Literal': 'lit-secret' },
            },
            local: { command: 'srv', args: ['--verbose'], env: { API_KEY: '${K}', PLAIN: 'lit-secret' } },
          },
        },
      ],
      { env: { K: secret } },
    );
    for (const s of servers) expect(JSON.stringify(s.config)).toContain(secret);
    const shown = servers.map(displayServer);
    const text = JSON.stringify(shown);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('lit-secret');
    expect(shown[0]).toMatchObject({
      name: 'remote',
      source: 'user',
      transport: 'http',
      file: '/h/mcp.json',
      url: 'https://h/mcp?key=${K}',
      headers: { Authorization: 'Bearer ${K}', 'X-Literal': '****' },
      lifecycle: 'lazy',
      connectable: true,
    });
    expect(shown[1]).toMatchObject({
      command: 'srv',
      args: ['--verbose'],
      env: { API_KEY: '${K}', PLAIN: '****' },
    });
  });

  it('works on hand-built servers', () => {
    expect(
      displayServer({
        name: 'x',
        source: 'constructor',
        transport: 'http',
        config: { url: 'https://u:p@h', headers: { A: 'b' } },
        fingerprint: '',
      }),
    ).toMatchObject({
      url: 'https://u:****@h',
      headers: { A: '****' },
      shadowed: [],
      issues: [],
      connectable: true,
    });
  });
});
