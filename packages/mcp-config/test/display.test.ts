import { describe, expect, it } from 'vitest';
import { displayServer, maskArgs, maskSecrets, maskUrl, maskValue } from '../src/display';
import { mergeSources } from '../src/merge';

describe('maskValue', () => {
  it.each([
    ['', ''],
    ['ghp_abc123', '****'],
    ['${TOKEN}', '${TOKEN}'],
    ['${TOKEN:-fallback}', '${TOKEN:-****}'],
    ['${TOKEN:-}', '${TOKEN:-}'],
    ['${sk-live-123}', '****'],
    ['Bearer ${sk-live-123}', 'Bearer ****'],
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
    ['https://user:pa55@h/mcp', 'https://****:****@h/mcp'],
    ['https://user:${PASS}@h/mcp', 'https://****:${PASS}@h/mcp'],
    ['https://${USER}:${PASS}@h/mcp', 'https://${USER}:${PASS}@h/mcp'],
    ['https://ghp_token@h/mcp', 'https://****@h/mcp'],
    ['https://${TOKEN}@h/mcp', 'https://${TOKEN}@h/mcp'],
    ['https://h/mcp?api_key=abc&x=1', 'https://h/mcp?api_key=****&x=****'],
    ['https://h/mcp?token=${T}&sig=zz#frag', 'https://h/mcp?token=${T}&sig=****#frag'],
    ['https://h/mcp?page=2&Authorization=abc', 'https://h/mcp?page=****&Authorization=****'],
    ['not a url at all', 'not a url at all'],
    // An "@" inside the password: the userinfo ends at the LAST "@" before the host (WHATWG URL).
    ['https://user:p@ss@h/mcp', 'https://****:****@h/mcp'],
    ['https://tok@en@h/mcp', 'https://****@h/mcp'],
    ['https://user:a@b@c@h/mcp?x=1', 'https://****:****@h/mcp?x=****'],
    ['https://h/a@b', 'https://h/a@b'],
    // Not clean URLs are read the lenient way parsers read them: the password is still masked.
    [' https://me:pw@h', ' https://****:****@h'],
    ['https:me:pw@h', 'https:****:****@h'],
    ['https:\\\\me:pw@h', 'https:\\\\****:****@h'],
    ['https:///me:pw@h', 'https:///****:****@h'],
    ['HTTPS://me:pw@h/x', 'HTTPS://****:****@h/x'],
    // Every query value; other separators; percent-encoded names.
    ['https://h/mcp?jwt=eyJabc', 'https://h/mcp?jwt=****'],
    ['https://h/mcp?a=1;token=abc', 'https://h/mcp?a=****;token=****'],
    ['https://h/mcp?api%5Fkey=abc', 'https://h/mcp?api%5Fkey=****'],
    ['https://h/mcp?sk-abcdef', 'https://h/mcp?****'],
    ['https://h/mcp?t=${T}&u=${U:-secret}', 'https://h/mcp?t=${T}&u=${U:-****}'],
    ['${URL:-https://u:p@h/x}', '${URL:-****}'],
    ['https://${HOST:-internal.example}/mcp', 'https://${HOST:-****}/mcp'],
    ['https://h/x#section', 'https://h/x#section'],
    // OAuth implicit flow puts the token in the fragment.
    ['https://h/cb#access_token=abc&state=1', 'https://h/cb#access_token=****&state=****'],
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

  it('shows readOnlyTools as written, in order, from any source', () => {
    const written = { 'read_and_mark_*': false, 'read_*': true };
    const { servers } = mergeSources([
      { source: 'project', file: '/w/.mcp.json', servers: { db: { command: 'db', readOnlyTools: written } } },
    ]);
    const shown = displayServer(servers[0]!);
    expect(Object.entries(shown.readOnlyTools ?? {})).toEqual(Object.entries(written));
    expect(shown.readOnlyTools).not.toBe(servers[0]!.config.readOnlyTools);
    expect(displayServer({ ...servers[0]!, config: { command: 'db' } }).readOnlyTools).toBeUndefined();
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
      url: 'https://****:****@h',
      headers: { A: '****' },
      shadowed: [],
      issues: [],
      connectable: true,
    });
  });
});

describe('maskArgs', () => {
  it.each([
    [
      ['-y', '@scope/pkg'],
      ['-y', '@scope/pkg'],
    ],
    [
      ['--api-key=sk-123', '--verbose'],
      ['--api-key=****', '--verbose'],
    ],
    [
      ['--token', 'ghp_abc', 'rest'],
      ['--token', '****', 'rest'],
    ],
    [
      ['--token', '${GITHUB_TOKEN}'],
      ['--token', '${GITHUB_TOKEN}'],
    ],
    [
      ['--token', '${GITHUB_TOKEN:-ghp_abc}'],
      ['--token', '${GITHUB_TOKEN:-****}'],
    ],
    [
      ['--password', '--next'],
      ['--password', '--next'],
    ],
    [
      ['--header', 'Authorization: Bearer abc'],
      ['--header', 'Authorization: Bearer ****'],
    ],
    [
      ['API_KEY=sk-123', 'MODE=fast'],
      ['API_KEY=****', 'MODE=fast'],
    ],
    [['https://me:pw@h/x?token=1'], ['https://****:****@h/x?token=****']],
    [['--url=https://me:pw@h/x'], ['--url=https://****:****@h/x']],
    [['${DIR:-/home/me/secret}'], ['${DIR:-****}']],
  ])('%j', (args, shown) => {
    expect(maskArgs(args)).toEqual(shown);
  });

  it('displayServer masks args, and the defaults in command and cwd', () => {
    const shown = displayServer({
      name: 'x',
      source: 'user',
      transport: 'stdio',
      config: { command: '${BIN:-/opt/secret/bin}', args: ['--api-key', 'sk-1'], cwd: '${D:-/srv/hidden}' },
      fingerprint: '',
    });
    expect(shown).toMatchObject({ command: '${BIN:-****}', args: ['--api-key', '****'], cwd: '${D:-****}' });
  });
});
