import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturePath, type OAuthFixture, startOAuthFixture } from '@wave/testkit';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { type Sandbox, sandbox, terminal } from './helpers';

const fakeBrowser = fileURLToPath(new URL('./fixtures/fake-browser.mjs', import.meta.url));

/** Poll `check` every 20 ms for up to 30 s. */
async function waitUntil(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function fixture(): Promise<OAuthFixture> {
  const f = await startOAuthFixture();
  onTestFinished(() => f.close());
  return f;
}

/** An executable `WAVE_BROWSER` that runs the fake browser with node; it logs callback statuses to `log`. */
async function browserScript(s: Sandbox): Promise<{ path: string; log: string }> {
  const path = join(s.root, 'browser.sh');
  const log = join(s.root, 'browser.log');
  await writeFile(path, `#!/bin/sh\nexec '${process.execPath}' '${fakeBrowser}' "$1"\n`);
  await chmod(path, 0o755);
  return { path, log };
}

/** No issued access or refresh token appears in any of `texts`. */
function assertNoTokens(f: OAuthFixture, texts: string[]): void {
  const all = texts.join('\n');
  expect(f.issuedAccessTokens.length).toBeGreaterThan(0);
  for (const t of [...f.issuedAccessTokens, ...f.issuedRefreshTokens]) expect(all).not.toContain(t);
}

describe('wave mcp login / logout', () => {
  it('signs in through the browser, call works with the stored token, logout -> doctor shows needs-auth', async () => {
    const f = await fixture();
    const s = await sandbox();
    const browser = await browserScript(s);
    const seen: string[] = [];
    const wave = async (args: string[], env: Record<string, string> = {}) => {
      const r = await s.wave(args, { env });
      seen.push(r.stdout, r.stderr);
      return r;
    };
    expect((await wave(['mcp', 'add', 'remote', f.mcpUrl])).code).toBe(0);

    let r = await wave(['mcp', 'doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/AUTH {2}remote \(user\) {2}needs-auth/);
    expect(r.stdout).toContain('fix: Sign in: wave mcp login remote');
    r = await wave(['mcp', 'doctor', '--json']);
    const row = JSON.parse(r.stdout).servers[0];
    expect(row.status).toBe('needs-auth');
    expect(row.fixes).toEqual(['Sign in: wave mcp login remote']);
    // list dials nothing: it shows what the last dial found.
    r = await wave(['mcp', 'list']);
    expect(r.stdout).toMatch(/remote {2}http {2}needs-auth\n/);
    expect(r.stdout).toContain('"remote" needs you to sign in (OAuth): run wave mcp login remote');
    r = await wave(['mcp', 'list', '--json']);
    expect(JSON.parse(r.stdout).servers[0]).toMatchObject({ status: 'needs-auth' });
    r = await wave(['mcp', 'get', 'remote']);
    expect(r.stdout).toContain(
      'sign in:    "remote" needs you to sign in (OAuth): run wave mcp login remote',
    );
    r = await wave(['mcp', 'connect', 'remote']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"remote" needs you to sign in (OAuth): run wave mcp login remote');

    r = await wave(['mcp', 'login', 'remote'], { WAVE_BROWSER: browser.path, FAKE_BROWSER_LOG: browser.log });
    expect(r.stderr).toContain('Waiting for the sign-in');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /Open this URL to sign in to remote:\n\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/,
    );
    expect(r.stdout).toContain('Signed in to remote. 1 tool.');
    expect(await readFile(browser.log, 'utf8')).toBe('200\n');
    expect(f.codeGrants).toBe(1);
    const files = (await readdir(join(s.home, 'oauth'))).filter((n) => n.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect((await stat(join(s.home, 'oauth', files[0]!))).mode & 0o777).toBe(0o600);

    r = await wave(['mcp', 'list']);
    expect(r.stdout).toMatch(/remote {2}http {2}not connected\n/);
    expect(r.stdout).toMatch(/1 tool, ~\d+ tokens \(cached/);
    expect(r.stdout).not.toContain('needs you to sign in');

    r = await wave(['mcp', 'call', 'remote', 'whoami']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(f.seenBearer.at(-1)).toBe(f.issuedAccessTokens.at(-1));
    r = await wave(['mcp', 'doctor']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ok {2}remote \(user\) {2}connected/);

    r = await wave(['mcp', 'logout', 'remote']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Signed out of remote: its stored tokens were deleted.');
    expect((await readdir(join(s.home, 'oauth'))).filter((n) => n.endsWith('.json'))).toEqual([]);
    r = await wave(['mcp', 'logout', 'remote']);
    expect(r.stdout).toContain('remote had no stored sign-in on this machine; nothing to delete.');
    r = await wave(['mcp', 'list']);
    expect(r.stdout).toMatch(/remote {2}http {2}needs-auth\n/);
    r = await wave(['mcp', 'doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/AUTH {2}remote \(user\) {2}needs-auth/);
    assertNoTokens(f, seen);
  });

  it('headless: the final redirect URL pasted on stdin completes the sign-in', async () => {
    const f = await fixture();
    const s = await sandbox();
    expect((await s.wave(['mcp', 'add', 'remote', f.mcpUrl])).code).toBe(0);
    const child = spawn(process.execPath, [inject('waveBin'), 'mcp', 'login', 'remote'], {
      cwd: s.workdir,
      env: {
        PATH: process.env.PATH ?? '',
        WAVE_REAPER_NAMESPACE: process.env.WAVE_REAPER_NAMESPACE ?? '',
        HOME: join(s.root, 'user-home'),
        WAVE_HOME: s.home,
        NO_COLOR: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed; stdout:\n${stdout}`)), 30_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        const m = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    // The browser runs elsewhere: it follows the authorization redirect but cannot reach the callback.
    const res = await fetch(url, { redirect: 'manual' });
    await res.body?.cancel();
    const location = res.headers.get('location');
    expect(location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    // A wrong line (another sign-in's address) gets a message and reading goes on.
    const other = new URL(location!);
    other.searchParams.set('state', 'another-sign-in');
    child.stdin.write(`${other.href}\nhello\n`);
    await waitUntil(
      () => (stderr.match(/That is not the address this sign-in ended on/g) ?? []).length === 2,
    );
    child.stdin.write(`  ${location}\n`);
    const code = await closed;
    expect(stderr).not.toContain('failed');
    expect(code).toBe(0);
    expect(stdout).toContain('Signed in to remote. 1 tool.');
    assertNoTokens(f, [stdout, stderr]);
  });

  it('usage errors exit 2; an unreachable server fails with a message, exit 1', async () => {
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'local', '--', process.execPath, fixturePath('hello')]);
    let r = await s.wave(['mcp', 'login', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('No MCP server named "nope"');
    r = await s.wave(['mcp', 'login', 'local']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('only remote (http/sse) servers sign in');
    r = await s.wave(['mcp', 'logout', 'local']);
    expect(r.code).toBe(2);
    await s.wave(['mcp', 'add', 'keyed', 'http://127.0.0.1:9/mcp', '-H', 'Authorization: Bearer abc']);
    r = await s.wave(['mcp', 'login', 'keyed']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sends its own Authorization header');

    const f = await startOAuthFixture();
    const gone = f.mcpUrl;
    await f.close();
    await s.wave(['mcp', 'add', 'gone', gone]);
    r = await s.wave(['mcp', 'login', 'gone'], { env: { WAVE_BROWSER: 'none' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Sign-in to "gone" failed: /);
  });

  it('in a terminal: prints the URL and waits; Ctrl-C cancels with exit 130', async () => {
    const f = await fixture();
    const s = await sandbox();
    await s.wave(['mcp', 'add', 'remote', f.mcpUrl]);
    const t = terminal(s, ['mcp', 'login', 'remote'], { WAVE_BROWSER: 'none' });
    const screen = await t.waitFor('paste the address it ends on here');
    expect(screen).toContain('Open this URL to sign in to remote:');
    t.keys('C-c');
    await t.waitFor('EXIT=130');
    expect(f.codeGrants).toBe(0);
  });

  it('in a terminal with a browser: signs in and reports the tools', async () => {
    const f = await fixture();
    const s = await sandbox();
    const browser = await browserScript(s);
    await s.wave(['mcp', 'add', 'remote', f.mcpUrl]);
    const t = terminal(s, ['mcp', 'login', 'remote'], { WAVE_BROWSER: browser.path });
    const screen = await t.waitFor('EXIT=');
    expect(screen).toContain('Signed in to remote. 1 tool.');
    expect(screen).toContain('EXIT=0');
    assertNoTokens(f, [screen]);
  });
});
