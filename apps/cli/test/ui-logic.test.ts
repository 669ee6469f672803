import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { McpSnapshot, UiServer } from '../src/ui/api-types';
import { checkRequest, type RequestFacts, tokenOf } from '../src/ui/security';
import { uiMessage } from '../src/ui/session';
import { actionButton, addPrompt, editPlan, newerSnapshot, relativeTime, serversOfTab } from '../ui/logic';

const TOKEN = 'a'.repeat(64);
const ok: RequestFacts = { host: '127.0.0.1:4000', origin: undefined, fetchSite: undefined, token: TOKEN };

describe('checkRequest', () => {
  it.each<[string, Partial<RequestFacts>, true | string]>([
    ['loopback host and token', {}, true],
    ['localhost host', { host: 'localhost:4000' }, true],
    ['same origin', { origin: 'http://127.0.0.1:4000', fetchSite: 'same-origin' }, true],
    ['no token', { token: undefined }, 'UNAUTHORIZED'],
    ['wrong token of the same length', { token: 'b'.repeat(64) }, 'UNAUTHORIZED'],
    ['shorter token', { token: 'a' }, 'UNAUTHORIZED'],
    ['rebinding host name', { host: 'evil.example:4000' }, 'BAD_HOST'],
    ['other port', { host: '127.0.0.1:4001' }, 'BAD_HOST'],
    ['no host', { host: undefined }, 'BAD_HOST'],
    ['0.0.0.0', { host: '0.0.0.0:4000' }, 'BAD_HOST'],
    ['other origin', { origin: 'http://evil.example' }, 'BAD_ORIGIN'],
    ['other local port as origin', { origin: 'http://127.0.0.1:3000' }, 'BAD_ORIGIN'],
    ['null origin', { origin: 'null' }, 'BAD_ORIGIN'],
    ['cross-site fetch', { fetchSite: 'cross-site' }, 'BAD_ORIGIN'],
  ])('%s', (_, change, expected) => {
    const r = checkRequest({ ...ok, ...change }, { port: 4000, token: TOKEN });
    if (expected === true) expect(r).toEqual({ ok: true });
    else expect(r).toMatchObject({ ok: false, code: expected });
  });

  it('reads the token from the header, the bearer or the query', () => {
    const url = new URL('http://127.0.0.1/x?token=q');
    expect(tokenOf({ authorization: 'Bearer b' }, url)).toBe('b');
    expect(tokenOf({ 'x-wave-token': 'h' }, url)).toBe('h');
    expect(tokenOf({}, url)).toBe('q');
    expect(tokenOf({}, new URL('http://127.0.0.1/x'))).toBeUndefined();
  });
});

function server(change: Partial<UiServer>): UiServer {
  return {
    name: 's',
    source: 'user',
    transport: 'stdio',
    target: 'node s.js',
    status: 'disconnected',
    toolCount: 0,
    fromCache: false,
    readOnly: false,
    ...change,
  };
}

function snapshot(version: number): McpSnapshot {
  return {
    version,
    servers: [],
    files: { user: '/h/mcp.json', project: '/p/.mcp.json' },
    workdir: '/p',
    project: 'p',
  };
}

describe('page logic', () => {
  it('an older or equal snapshot never replaces a newer one', () => {
    const s5 = snapshot(5);
    expect(newerSnapshot(undefined, s5)).toBe(s5);
    expect(newerSnapshot(s5, snapshot(4))).toBe(s5);
    expect(newerSnapshot(s5, snapshot(5))).toBe(s5);
    const s6 = snapshot(6);
    expect(newerSnapshot(s5, s6)).toBe(s6);
  });

  it.each<
    [UiServer['status'], 'connect' | 'disconnect' | 'sign-in' | undefined, string | undefined, boolean]
  >([
    ['disconnected', undefined, 'Connect', false],
    ['error', undefined, 'Reconnect', false],
    ['connected', undefined, 'Disconnect', false],
    ['reconnecting', undefined, 'Disconnect', false],
    ['connecting', undefined, 'Connecting...', true],
    ['disabled', undefined, undefined, false],
    ['connected', 'disconnect', 'Disconnecting...', true],
    ['disconnected', 'connect', 'Connecting...', true],
    ['error', 'connect', 'Connecting...', true],
    ['needs-auth', undefined, 'Sign in', false],
    ['needs-auth', 'sign-in', 'Signing in...', true],
  ])('%s (pending %s): %s', (status, pending, label, disabled) => {
    const b = actionButton(server({ status }), pending);
    if (label === undefined) expect(b).toBeUndefined();
    else expect(b).toMatchObject({ label, disabled });
  });

  it('tabs by source; prompts name the project', () => {
    const list = [
      server({ name: 'u', source: 'user' }),
      server({ name: 'c', source: 'constructor' }),
      server({ name: 'p', source: 'project' }),
      server({ name: 'g', source: 'plugin' }),
    ];
    expect(serversOfTab(list, 'user').map((s) => s.name)).toEqual(['u', 'c']);
    expect(serversOfTab(list, 'project').map((s) => s.name)).toEqual(['p']);
    expect(serversOfTab(list, 'plugin').map((s) => s.name)).toEqual(['g']);
    expect(addPrompt('project', 'shop')).toContain('"shop"');
    expect(addPrompt('user', 'shop')).toMatch(/^\/settings .*user-level/);
  });

  it('Edit: the prompt always; the file only when the server names an absolute path', () => {
    const prompt = 'Help me edit the MCP server "s": change <what> to <new value>';
    expect(editPlan(server({ file: '/home/me/.wave/mcp.json' }))).toEqual({
      prompt,
      file: '/home/me/.wave/mcp.json',
    });
    expect(editPlan(server({ file: 'C:\\Users\\me\\.wave\\mcp.json' })).file).toBe(
      'C:\\Users\\me\\.wave\\mcp.json',
    );
    expect(editPlan(server({}))).toEqual({ prompt });
    expect(editPlan(server({ file: '~/.wave/mcp.json' }))).toEqual({ prompt });
    expect(editPlan(server({ file: '.mcp.json' }))).toEqual({ prompt });
  });

  it('relative times', () => {
    expect(relativeTime(0, 500)).toBe('just now');
    expect(relativeTime(0, 30_000)).toBe('30 seconds ago');
    expect(relativeTime(0, 60_000)).toBe('1 minute ago');
    expect(relativeTime(0, 7_200_000)).toBe('2 hours ago');
    expect(relativeTime(0, 3 * 86_400_000)).toBe('3 days ago');
  });

  it('isMeta messages never reach the page; tool results keep their call id', () => {
    expect(uiMessage({ role: 'user', content: 'note', isMeta: true }, 0)).toBeUndefined();
    expect(uiMessage({ role: 'user', content: [{ type: 'text', text: 'hi' }] }, 1)).toEqual({
      id: 1,
      role: 'user',
      text: 'hi',
    });
    expect(
      uiMessage({ role: 'tool', toolCallId: 'c1', name: 'mcp__a__b', content: 'boom', isError: true }, 2),
    ).toEqual({ id: 2, role: 'tool', text: 'boom', toolCallId: 'c1', name: 'mcp__a__b', isError: true });
  });
});

describe('the README documents the API', () => {
  const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

  it('every error status and code the server can answer with is in the README error table', () => {
    const sources = ['../src/ui/server.ts', '../src/ui/session.ts', '../src/ui/security.ts']
      .map(read)
      .join('\n');
    // Not responses: the model adapter's error and abort reasons end a turn or a sign-in (a `busy` or `signIn` event).
    const notResponses = new Set(['NO_MODEL', 'STOPPED', 'SUPERSEDED']);
    const answered = new Set<string>();
    for (const re of [
      /new UiError\(([^']*)'([A-Z_]+)'[\s\S]*?,\s*(\d{3}),?\s*\)/g,
      /fail\(res, ()(\d{3}), '([A-Z_]+)'/g,
      /status: ()(\d{3}),\s*code: '([A-Z_]+)'/g,
    ]) {
      for (const m of sources.matchAll(re)) {
        const [code, status] = /^\d/.test(m[2] as string) ? [m[3], m[2]] : [m[2], m[3]];
        if (!notResponses.has(code as string)) answered.add(`${status} ${code}`);
      }
    }
    const readme = read('../README.md');
    const section = readme.slice(readme.indexOf('**Errors** are'), readme.indexOf('| method and path |'));
    const documented = new Set(
      [...section.matchAll(/^\| (\d{3}) \| `([A-Z_]+)`/gm)].map((m) => `${m[1]} ${m[2]}`),
    );
    expect(answered.size).toBeGreaterThanOrEqual(15);
    expect([...answered].sort()).toEqual([...documented].sort());
  });
});
