import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import {
  deferred,
  followAuthorizationRedirect,
  makeTempHome,
  type OAuthFixture,
  startOAuthFixture,
  type TempHome,
} from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock';
import { isMcpPoolError } from '../src/errors';
import type { McpPoolOptions } from '../src/options';
import { McpPool, type PoolSnapshot } from '../src/pool';

const pools: McpPool[] = [];
const fixtures: OAuthFixture[] = [];
const homes: TempHome[] = [];

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const f of fixtures.splice(0)) await f.close();
  for (const h of homes.splice(0)) await h.cleanup();
});

async function setup(fixtureOpts: Parameters<typeof startOAuthFixture>[0] = {}) {
  const f = await startOAuthFixture(fixtureOpts);
  fixtures.push(f);
  const home = await makeTempHome();
  homes.push(home);
  return { f, home };
}

function servers(url: string, extra: Record<string, unknown> = {}): ResolvedServer[] {
  const { servers, issues } = mergeSources(
    [{ source: 'user', servers: { remote: { type: 'http', url, ...extra } } }],
    { workdir: '/tmp/wave-oauth' },
  );
  expect(issues).toEqual([]);
  return servers;
}

/** Everything a pool shows the outside: snapshots, warnings, errors. Tokens must never appear in it. */
function observe(pool: McpPool, sink: string[]) {
  pool.onChange((s: PoolSnapshot) => sink.push(JSON.stringify(s)));
  pool.onLog((e) => sink.push(JSON.stringify(e)));
}

function make(home: string, list: ResolvedServer[], opts: Partial<McpPoolOptions> = {}, sink?: string[]) {
  const pool = McpPool.create({
    servers: list,
    home,
    onWarning: (w) => sink?.push(JSON.stringify(w)),
    ...opts,
  });
  if (sink) observe(pool, sink);
  pools.push(pool);
  return pool;
}

function assertNoSecrets(f: OAuthFixture, texts: string[]) {
  const all = texts.join('\n');
  expect(f.issuedAccessTokens.length).toBeGreaterThan(0);
  for (const t of [...f.issuedAccessTokens, ...f.issuedRefreshTokens]) expect(all).not.toContain(t);
}

const browser = (urls: string[]) => async (url: string) => {
  urls.push(url);
  const status = await followAuthorizationRedirect(url);
  expect(status).toBe(200);
};

describe('OAuth: sign-in through the pool', () => {
  it('401 -> needs-auth (not dialed again); authorize() runs the flow, stores 0600 tokens, connects', async () => {
    const { f, home } = await setup();
    const sink: string[] = [];
    const pool = make(home.home, servers(f.mcpUrl), {}, sink);
    await pool.ensureConnected();
    const before = pool.get('remote')!;
    expect(before.status).toBe('needs-auth');
    expect(before.error?.code).toBe('AUTH_REQUIRED');
    expect(before.error?.message).toMatch(/sign in/);
    sink.push(JSON.stringify(before));
    // Not dialed again by ensureConnected() until authorized.
    const hits = f.seenBearer.length;
    expect(pool.hasPendingDials()).toBe(false);
    await pool.ensureConnected();
    expect(f.seenBearer.length).toBe(hits);
    const call = await pool.callTool('remote', 'whoami', {}).catch((e: unknown) => e);
    expect(isMcpPoolError(call, 'SERVER_NOT_CONNECTED')).toBe(true);
    expect((call as Error).message).toMatch(/authorize\("remote"\)/);

    const urls: string[] = [];
    const rec = await pool.authorize('remote', { openUrl: browser(urls) });
    expect(rec.status).toBe('connected');
    expect(rec.tools.map((t) => t.name)).toEqual(['whoami']);
    expect(urls).toHaveLength(1);
    const auth = new URL(urls[0]!);
    expect(auth.searchParams.get('resource')).toBe(f.mcpUrl);
    expect(auth.searchParams.get('scope')).toBe('mcp'); // scopes_supported of the resource metadata
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(f.registrations).toBe(1);
    expect(f.codeGrants).toBe(1);

    const result = await pool.callTool('remote', 'whoami', {});
    expect(result.isError).toBeFalsy();

    const dir = join(home.home, 'oauth');
    const files = readdirSync(dir).filter((n) => n.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect(statSync(join(dir, files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, files[0]!), 'utf8')).toContain(f.issuedAccessTokens[0]!);
    // The listener is closed: a second callback finds nobody.
    const redirect = new URL(auth.searchParams.get('redirect_uri')!);
    await expect(fetch(redirect)).rejects.toThrow();

    assertNoSecrets(f, [...sink, JSON.stringify(pool.list())]);
  });

  it('a callback with the wrong state is refused; the right one is then accepted', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl));
    const statuses: number[] = [];
    const rec = await pool.authorize('remote', {
      openUrl: async (url) => {
        statuses.push(
          await followAuthorizationRedirect(url, (loc) => {
            const forged = new URL(loc);
            forged.searchParams.set('state', 'forged');
            return forged;
          }),
        );
        statuses.push(await followAuthorizationRedirect(url));
      },
    });
    expect(statuses).toEqual([400, 200]);
    expect(rec.status).toBe('connected');
  });

  it('headless: the pasted final redirect URL completes the sign-in', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl));
    const pasted = deferred<string>();
    const rec = await pool.authorize('remote', {
      openUrl: async (url) => {
        // The browser runs elsewhere: it cannot reach the listener; the person copies the address bar.
        const res = await fetch(url, { redirect: 'manual' });
        await res.body?.cancel();
        pasted.resolve(res.headers.get('location')!);
      },
      pastedRedirect: pasted.promise,
    });
    expect(rec.status).toBe('connected');
  });

  it('a pasted URL with the wrong state fails the sign-in with AUTH_REQUIRED', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl));
    const err = await pool
      .authorize('remote', {
        openUrl: () => {},
        redirectUrl: 'http://127.0.0.1:9/callback',
        pastedRedirect: Promise.resolve('http://127.0.0.1:9/callback?code=abc&state=wrong'),
      })
      .catch((e: unknown) => e);
    expect(isMcpPoolError(err, 'AUTH_REQUIRED')).toBe(true);
    expect((err as Error).message).toMatch(/state/);
    expect((err as Error).message).not.toContain('abc');
  });

  it('an aborted sign-in rejects and closes its listener', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl));
    const ac = new AbortController();
    let redirect = '';
    const err = await pool
      .authorize('remote', {
        signal: ac.signal,
        openUrl: (url) => {
          redirect = new URL(url).searchParams.get('redirect_uri')!;
          ac.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(isMcpPoolError(err, 'AUTH_REQUIRED')).toBe(true);
    await expect(fetch(redirect)).rejects.toThrow();
  });
});

describe('OAuth: tokens over time', () => {
  it('refreshes before expiry, and on a 401, with the new token used at once', async () => {
    const { f, home } = await setup({ expiresIn: 3600 });
    let offset = 0;
    const real = systemClock();
    const clock = { ...real, now: () => real.now() + offset };
    const sink: string[] = [];
    const pool = make(home.home, servers(f.mcpUrl), { clock }, sink);
    await pool.authorize('remote', { openUrl: browser([]) });
    expect(f.refreshGrants).toBe(0);

    // Close to expiry (within the 60 s skew): the next request refreshes first.
    offset = 3600_000 - 30_000;
    await pool.callTool('remote', 'whoami', {});
    expect(f.refreshGrants).toBe(1);
    expect(f.seenBearer.at(-1)).toBe(f.issuedAccessTokens[1]);

    // The server stops accepting the token (revoked, clock skew): 401 -> refresh -> retry.
    f.revokeAccessTokens();
    const r = await pool.callTool('remote', 'whoami', {});
    expect(r.isError).toBeFalsy();
    expect(f.refreshGrants).toBe(2);
    expect(f.seenBearer.at(-1)).toBe(f.issuedAccessTokens[2]);
    expect(pool.get('remote')!.status).toBe('connected');
    assertNoSecrets(f, [...sink, JSON.stringify(pool.list())]);
  });

  it('a refresh that fails -> needs-auth; the tokens are forgotten; authorize() recovers', async () => {
    const { f, home } = await setup();
    const sink: string[] = [];
    const pool = make(home.home, servers(f.mcpUrl), {}, sink);
    await pool.authorize('remote', { openUrl: browser([]) });
    f.failRefresh = true;
    f.revokeAccessTokens();
    const err = await pool.callTool('remote', 'whoami', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    sink.push(String(err), JSON.stringify(err));
    expect(f.refreshGrants).toBe(1);
    const rec = pool.get('remote')!;
    expect(rec.status).toBe('needs-auth');
    expect(rec.error?.code).toBe('AUTH_REQUIRED');
    const dir = join(home.home, 'oauth');
    const file = readdirSync(dir).find((n) => n.endsWith('.json'))!;
    expect(JSON.parse(readFileSync(join(dir, file), 'utf8')).tokens).toBeUndefined();
    // Not dialed again automatically.
    await pool.ensureConnected();
    expect(pool.get('remote')!.status).toBe('needs-auth');

    f.failRefresh = false;
    const again = await pool.authorize('remote', { openUrl: browser([]) });
    expect(again.status).toBe('connected');
    expect(f.codeGrants).toBe(2);
    assertNoSecrets(f, sink);
  });

  it('two pools sharing one home refresh a rotating refresh token exactly once', async () => {
    const { f, home } = await setup();
    const a = make(home.home, servers(f.mcpUrl));
    await a.authorize('remote', { openUrl: browser([]) });
    const b = make(home.home, servers(f.mcpUrl));
    expect((await b.connect('remote')).status).toBe('connected'); // stored tokens, no sign-in
    f.revokeAccessTokens();
    f.refreshDelayMs = 300; // both 401s arrive while the first refresh is under way
    const [ra, rb] = await Promise.all([
      a.callTool('remote', 'whoami', {}),
      b.callTool('remote', 'whoami', {}),
    ]);
    expect(ra.isError).toBeFalsy();
    expect(rb.isError).toBeFalsy();
    expect(f.refreshGrants).toBe(1);
    expect(a.get('remote')!.status).toBe('connected');
    expect(b.get('remote')!.status).toBe('connected');
  });

  it('a needs-auth pool uses the tokens another pool signed in with, on its next connect()', async () => {
    const { f, home } = await setup();
    const b = make(home.home, servers(f.mcpUrl));
    expect((await b.connect('remote')).status).toBe('needs-auth');
    const a = make(home.home, servers(f.mcpUrl));
    await a.authorize('remote', { openUrl: browser([]) });
    expect((await b.connect('remote')).status).toBe('connected');
    expect(f.codeGrants).toBe(1);
  });

  it('logout() deletes the tokens and the server needs a sign-in again', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl));
    await pool.authorize('remote', { openUrl: browser([]) });
    const rec = await pool.logout('remote');
    expect(rec.status).toBe('needs-auth');
    expect(readdirSync(join(home.home, 'oauth')).filter((n) => n.endsWith('.json'))).toEqual([]);
    const other = make(home.home, servers(f.mcpUrl));
    expect((await other.connect('remote')).status).toBe('needs-auth');
  });

  it('a server with its own Authorization header keeps the plain 401 error (no OAuth)', async () => {
    const { f, home } = await setup();
    const pool = make(home.home, servers(f.mcpUrl, { headers: { Authorization: 'Bearer static' } }));
    const rec = await pool.connect('remote');
    expect(rec.status).toBe('error');
    expect(rec.error?.code).toBe('CONNECT_FAILED');
  });
});
