import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { makeTempHome, type TempHome } from '@wave/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CallbackError,
  parsePastedRedirect,
  parseRedirect,
  startLoopbackListener,
} from '../src/auth/loopback';
import { normalizeServerUrl, TokenStore, tokenFileName } from '../src/auth/token-store';

const homes: TempHome[] = [];
afterEach(async () => {
  for (const h of homes.splice(0)) await h.cleanup();
});

async function store(opts: Partial<ConstructorParameters<typeof TokenStore>[0]> = {}) {
  const h = await makeTempHome();
  homes.push(h);
  return new TokenStore({ home: h.home, ...opts });
}

describe('token file keys', () => {
  it.each([
    ['https://Example.COM:443/mcp', 'https://example.com/mcp'],
    ['https://u:p@example.com/mcp#frag', 'https://example.com/mcp'],
    ['http://127.0.0.1:8080/mcp?x=1', 'http://127.0.0.1:8080/mcp?x=1'],
  ])('%s normalizes to %s', (input, out) => {
    expect(normalizeServerUrl(input)).toBe(out);
  });

  it('one file per normalized URL + client ID', () => {
    const a = tokenFileName('https://Example.com/mcp', undefined);
    expect(tokenFileName('https://example.com:443/mcp', undefined)).toBe(a);
    expect(tokenFileName('https://example.com/mcp', 'client')).not.toBe(a);
    expect(tokenFileName('https://example.com/other', undefined)).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}\.json$/);
  });
});

describe('TokenStore', () => {
  it('writes 0600 files atomically (no temp file left) and reads them back', async () => {
    const s = await store();
    const file = s.path('https://example.com/mcp', undefined);
    await s.write(file, { serverUrl: 'https://example.com/mcp' });
    await s.write(file, { serverUrl: 'https://example.com/mcp', resource: 'r' });
    expect(await s.read(file)).toEqual({ serverUrl: 'https://example.com/mcp', resource: 'r' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(s.dir)).toEqual([file.slice(s.dir.length + 1)]);
    await s.remove(file);
    expect(await s.read(file)).toBeUndefined();
  });

  it('a corrupt file reads as nothing', async () => {
    const s = await store();
    const file = s.path('https://example.com/mcp', undefined);
    await s.write(file, { serverUrl: 'x' });
    writeFileSync(file, '{not json');
    expect(await s.read(file)).toBeUndefined();
  });

  it('withLock serializes holders', async () => {
    const s = await store();
    const file = s.path('https://example.com/mcp', undefined);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const first = s.withLock(file, async () => {
      order.push('a:start');
      await held;
      order.push('a:end');
    });
    // Wait for the first holder to own the lock before the second asks.
    for (let i = 0; i < 200 && !order.includes('a:start'); i++) await new Promise((r) => setTimeout(r, 5));
    const second = s.withLock(file, async () => {
      order.push('b');
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual(['a:start']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['a:start', 'a:end', 'b']);
  });

  it('a lock left by a dead process is taken over at once', async () => {
    const s = await store();
    const file = s.path('https://example.com/mcp', undefined);
    await s.write(file, { serverUrl: 'x' });
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: Number(dead), at: Date.now() }));
    const t0 = Date.now();
    expect(await s.withLock(file, async () => 'ran')).toBe('ran');
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a lock older than staleLockMs is taken over; a live one times out', async () => {
    let now = 1_000_000;
    const s = await store({ now: () => now, staleLockMs: 1_000, lockWaitMs: 100 });
    const file = s.path('https://example.com/mcp', undefined);
    await s.write(file, { serverUrl: 'x' });
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.ppid, at: now }));
    const waiting = s.withLock(file, async () => 'never').catch((e: Error) => e.name);
    // Past lockWaitMs from the call (not past staleness), whenever the waiter polls.
    now += 500;
    expect(await waiting).toBe('LockTimeoutError');
    now += 2_000; // now the lock is stale
    expect(await s.withLock(file, async () => 'ran')).toBe('ran');
  });
});

describe('loopback redirect', () => {
  it('parseRedirect checks state first, then error, then code', () => {
    const u = (q: string) => new URL(`http://127.0.0.1/callback?${q}`);
    expect(parseRedirect(u('code=c&state=s'), 's')).toEqual({ code: 'c' });
    expect(() => parseRedirect(u('code=c&state=x'), 's')).toThrow(CallbackError);
    expect(() => parseRedirect(u('code=c'), 's')).toThrow(/state/);
    expect(() => parseRedirect(u('error=access_denied&state=s'), 's')).toThrow(/access_denied/);
    expect(() => parseRedirect(u('state=s'), 's')).toThrow(/no authorization code/);
  });

  it('a pasted URL or bare query is accepted; messages never echo the code', () => {
    expect(parsePastedRedirect('  http://localhost:1/callback?code=k&state=s \n', 's')).toEqual({
      code: 'k',
    });
    expect(parsePastedRedirect('?code=k&state=s', 's')).toEqual({ code: 'k' });
    expect(parsePastedRedirect('code=k&state=s', 's')).toEqual({ code: 'k' });
    const err = (() => {
      try {
        parsePastedRedirect('code=secret-code&state=bad', 's');
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(CallbackError);
    expect(err?.message).not.toContain('secret-code');
  });

  it('the listener refuses a wrong state, accepts the right one once, then closes', async () => {
    const l = await startLoopbackListener({ state: 'st' });
    expect(l.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect((await fetch(`${l.redirectUrl}?code=a&state=wrong`)).status).toBe(400);
    expect((await fetch(`${l.redirectUrl.replace('/callback', '/other')}?code=a&state=st`)).status).toBe(404);
    expect((await fetch(`${l.redirectUrl}?code=good&state=st`)).status).toBe(200);
    expect(await l.result).toEqual({ code: 'good' });
    await l.close();
    await expect(fetch(`${l.redirectUrl}?code=again&state=st`)).rejects.toThrow();
  });
});
