/// <reference lib="dom" />
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type FakeModelServer,
  findProcessesByMarker,
  fixturePath,
  startFakeOpenAI,
  startHttpFixture,
} from '@wave/testkit';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type Sandbox, sandbox } from './helpers';
import {
  actionSettled,
  launchBrowser,
  openMcp,
  openPage,
  type RunningUi,
  screenshot,
  startUi,
} from './ui-helpers';

const hello = fixturePath('hello');
const spawner = fixturePath('spawner');
const namespace = process.env.WAVE_REAPER_NAMESPACE ?? '';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function fakeModel(steps: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeModelServer> {
  const m = await startFakeOpenAI(steps);
  onTestFinished(() => m.close());
  return m;
}

function modelArgs(m: FakeModelServer): string[] {
  return ['--base-url', m.baseURL, '--model', 'fake'];
}

/** Wait until no turn runs (Send is enabled again). */
async function idle(page: Page): Promise<void> {
  await page.locator('.composer button.primary:not([disabled])').waitFor();
}

async function writeUserConfig(s: Sandbox, servers: Record<string, unknown>): Promise<string> {
  const file = join(s.home, 'mcp.json');
  await writeFile(file, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
  return file;
}

function noneLeft(): void {
  expect(findProcessesByMarker(namespace)).toEqual([]);
}

async function closeUi(ui: RunningUi, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  expect(await ui.stop(signal)).toBe(0);
  noneLeft();
}

describe('wave ui: security', () => {
  it('refuses requests without the token, from another Host (DNS rebinding) or another Origin', async () => {
    const s = await sandbox();
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const port = new URL(ui.base).port;
    for (const path of ['/', '/app.js', '/app.css', '/api/state', '/api/events', '/api/mcp/servers']) {
      const res = await fetch(ui.base + path);
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    let res = await fetch(`${ui.base}/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"hi"}',
    });
    expect(res.status).toBe(401);
    res = await fetch(`${ui.base}/api/state?token=wrong${ui.token.slice(5)}`);
    expect(res.status).toBe(401);
    // The right token, but a page on another host name that resolves to 127.0.0.1.
    const raw = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        // fetch() does not let a caller set Host; node:http does.
        import('node:http').then(({ request }) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: Number(port),
              path: '/api/state',
              headers: { ...headers, authorization: `Bearer ${ui.token}` },
            },
            (r) => {
              let body = '';
              r.setEncoding('utf8').on('data', (d: string) => {
                body += d;
              });
              r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
            },
          );
          req.on('error', reject);
          req.end();
        }, reject);
      });
    let r = await raw({ host: `attacker.example:${port}` });
    expect(r.status).toBe(421);
    expect(JSON.parse(r.body).error.code).toBe('BAD_HOST');
    r = await raw({ host: `127.0.0.1:${port}`, origin: 'http://attacker.example' });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.code).toBe('BAD_ORIGIN');
    r = await raw({ host: `localhost:${port}` });
    expect(r.status).toBe(200);
    // Control: with the token, the same requests work.
    expect((await ui.api('GET', '/api/state')).status).toBe(200);
    expect((await fetch(ui.url)).status).toBe(200);
    // A page opened without the token shows the refusal, not the app.
    const context = await browser.newContext();
    onTestFinished(() => context.close());
    const page = await context.newPage();
    const resp = await page.goto(`${ui.base}/`);
    expect(resp?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('UNAUTHORIZED');
    await closeUi(ui);
  });
});

describe('wave ui: conversation', () => {
  it('a turn with an MCP tool call, an approval card, streaming, hidden meta messages; a reload keeps the session', async () => {
    const s = await sandbox();
    await writeUserConfig(s, { hello: { command: process.execPath, args: [hello] } });
    const m = await fakeModel({
      steps: [
        {
          text: 'Let me ask the server.',
          toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'hi from the page' } }],
        },
        { text: 'The server answered: hi from the page. All done here.', chunkSize: 3, chunkDelayMs: 40 },
      ],
    });
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.reload();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await screenshot(page, 'conversation-empty');
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.fill('Echo something through hello');
    await input.press('Enter');
    const card = page.getByTestId('approval');
    await card.waitFor();
    expect(await card.textContent()).toContain('mcp__hello__echo');
    expect(await card.textContent()).toContain('hi from the page');
    expect(await page.getByTestId('tool-call').locator('.tool-state').textContent()).toBe(
      'waiting for approval',
    );
    await screenshot(page, 'conversation-approval');
    await card.getByRole('button', { name: 'Allow once' }).click();
    await page.getByTestId('streaming').waitFor();
    await page.getByText('All done here.').waitFor();
    await page.getByRole('button', { name: 'Send' }).and(page.locator(':not([disabled])')).waitFor();
    const call = page.getByTestId('tool-call');
    expect(await call.count()).toBe(1);
    // Collapsed: the result is inside a closed <details>.
    expect(await call.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    expect(await call.locator('.tool-state').textContent()).toBe('done');
    await call.locator('summary').click();
    await call.getByText('hi from the page', { exact: false }).first().waitFor();
    await screenshot(page, 'conversation-tool-call-expanded');
    // The server's instructions went to the model as an isMeta message, never to the page.
    const sent = JSON.stringify(m.requests[1]?.body.messages);
    expect(sent).toContain('HELLO-INSTRUCTIONS-END');
    expect(await page.textContent('body')).not.toContain('HELLO-INSTRUCTIONS-END');
    expect(await page.getByTestId('msg-user').count()).toBe(1);
    // Everything the page loaded came from wave ui itself (no CDN), with the token.
    expect(requested.length).toBeGreaterThanOrEqual(4);
    for (const url of requested) expect(url.startsWith(`${ui.base}/`), url).toBe(true);
    // Reload: the same session, from the server.
    await page.reload();
    await page.getByText('All done here.').waitFor();
    expect(await page.getByTestId('msg-user').count()).toBe(1);
    await closeUi(ui, 'SIGINT');
  });

  it('an elicitation from an MCP server is a form on the page; the answer goes back to the server', async () => {
    const s = await sandbox();
    await writeUserConfig(s, {
      cf: { command: process.execPath, args: [join(dirname(hello), 'client-features.mjs')] },
    });
    const m = await fakeModel({
      steps: [{ toolCalls: [{ name: 'mcp__cf__ask', arguments: {} }] }, { text: 'Thanks, form received.' }],
    });
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.fill('ask me');
    await input.press('Enter');
    await page.getByTestId('approval').getByRole('button', { name: 'Allow once' }).click();
    const form = page.getByTestId('elicitation');
    await form.waitFor();
    expect(await form.textContent()).toContain('Who are you?');
    // Defaults from the schema are filled in.
    expect(await form.locator('input[name="name"]').inputValue()).toBe('John Doe');
    await form.locator('input[name="name"]').fill('Ann');
    await form.locator('input[name="nickname"]').fill('annie');
    await screenshot(page, 'conversation-elicitation');
    await form.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Thanks, form received.').waitFor();
    expect(await form.count()).toBe(0);
    const result = JSON.stringify(m.requests[1]?.body.messages.at(-1));
    expect(result).toContain('accept');
    expect(result).toContain('Ann');
    expect(result).toContain('annie');
    await closeUi(ui);
  });

  it('deny and allow always; the stop button ends a hanging turn', async () => {
    const s = await sandbox();
    await writeUserConfig(s, { hello: { command: process.execPath, args: [hello] } });
    const m = await fakeModel({
      steps: [
        { toolCalls: [{ name: 'mcp__hello__add', arguments: { a: 2, b: 3 } }] },
        { text: 'It was denied.' },
        { toolCalls: [{ name: 'mcp__hello__add', arguments: { a: 1, b: 1 } }] },
        { toolCalls: [{ name: 'mcp__hello__add', arguments: { a: 4, b: 4 } }] },
        { text: 'Both added.' },
        { hang: true },
      ],
    });
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.fill('add 2 and 3');
    await input.press('Enter');
    await page.getByTestId('approval').getByRole('button', { name: 'Deny' }).click();
    await page.getByText('It was denied.').waitFor();
    expect(await page.getByTestId('tool-call').locator('.tool-state').textContent()).toBe('failed');
    // The answer shows before the turn ends: send only once it has.
    await input.fill('add twice');
    await idle(page);
    await input.press('Enter');
    await page.getByTestId('approval').getByRole('button', { name: 'Allow always' }).click();
    // The second call of the same tool is not asked again.
    await page.getByText('Both added.').waitFor();
    expect(await page.getByTestId('approval').count()).toBe(0);
    // "Both added." shows before that turn ends: send only once it has, or the
    // Stop button seen next would still be the finished turn's.
    await input.fill('this one hangs');
    await idle(page);
    await input.press('Enter');
    const stop = page.getByRole('button', { name: 'Stop' });
    await stop.waitFor();
    await screenshot(page, 'conversation-running');
    await stop.click();
    await page.getByText('Stopped.').waitFor();
    await stop.waitFor({ state: 'detached' });
    await closeUi(ui);
  });
});

describe('wave ui: Settings -> MCP', () => {
  it('/mcp opens the page without sending; tabs per source, rows, empty states, cached tools; Back sends nothing', async () => {
    const s = await sandbox();
    await writeUserConfig(s, {
      hello: { command: process.execPath, args: [hello], env: { API_TOKEN: 'sk-secret-value-123' } },
      remote: { url: 'https://user:pa55word@mcp.example.com/mcp?key=abc' },
      off: { command: process.execPath, args: [hello] },
    });
    // An earlier connection on this machine leaves a tool snapshot.
    expect((await s.wave(['mcp', 'connect', 'hello'])).code).toBe(0);
    const src = join(s.root, 'my-plugin');
    await mkdir(join(src, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(src, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'tools', version: '1.0.0' }),
    );
    await writeFile(
      join(src, '.mcp.json'),
      JSON.stringify({ mcpServers: { ptool: { command: 'node', args: ['server.js'] } } }),
    );
    expect((await s.wave(['plugin', 'add', src])).code).toBe(0);
    await writeFile(
      join(s.workdir, '.mcp.json'),
      JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [hello] } } }),
    );
    expect((await s.wave(['mcp', 'disable', 'off'])).code).toBe(0);
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    await openMcp(page);
    expect(await page.getByRole('textbox', { name: 'Message' }).count()).toBe(0);
    const row = page.getByTestId('server-hello');
    await row.waitFor();
    expect(await row.getByTestId('status').textContent()).toBe('disconnected');
    expect(await row.getByTestId('tools').textContent()).toBe('8 tools (cached)');
    expect(await row.getByTestId('last-connected').textContent()).toMatch(/last connected .* \(cached\)/);
    expect(await row.getByTestId('target').textContent()).toContain(hello);
    const remote = page.getByTestId('server-remote');
    const target = (await remote.getByTestId('target').textContent()) ?? '';
    expect(target).toContain('mcp.example.com');
    expect(target).not.toContain('pa55word');
    expect(await page.textContent('body')).not.toContain('sk-secret-value-123');
    await screenshot(page, 'mcp-user-tab');
    // The type of each server.
    expect(await row.getByTestId('transport').textContent()).toBe('stdio');
    expect(await remote.getByTestId('transport').textContent()).toBe('http');
    // Every status has its own colour, and a row's status wears it.
    const colours = await page.evaluate(() => {
      const out: Record<string, string> = {};
      for (const status of [
        'connected',
        'connecting',
        'reconnecting',
        'error',
        'disconnected',
        'disabled',
        'needs-auth',
      ]) {
        const el = document.createElement('span');
        el.className = `status status-${status}`;
        document.body.append(el);
        out[status] = getComputedStyle(el).backgroundColor;
        el.remove();
      }
      return out;
    });
    expect(new Set(Object.values(colours)).size).toBe(7);
    expect(await row.getByTestId('status').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(
      colours.disconnected,
    );
    // Switched off on this machine: disabled, no connect button.
    const off = page.getByTestId('server-off');
    expect(await off.getByTestId('status').textContent()).toBe('disabled');
    expect(await off.getByTestId('action').count()).toBe(0);
    // The project tab: a repository server not trusted here is off, and says how to trust it.
    await page.getByRole('tab', { name: /Project MCP/ }).click();
    const repo = page.getByTestId('server-repo');
    expect(await repo.getByTestId('status').textContent()).toBe('disabled');
    expect(await repo.getByTestId('server-error').textContent()).toContain('wave mcp trust repo');
    await screenshot(page, 'mcp-project-tab');
    await page.getByRole('tab', { name: /Plugin MCP/ }).click();
    const prow = page.getByTestId('server-ptool');
    await prow.waitFor();
    expect(await prow.textContent()).toContain('plugin tools');
    expect(await prow.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(await prow.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    await screenshot(page, 'mcp-plugin-tab');
    // Another settings tab, then Back: no message was produced.
    await page.getByRole('button', { name: 'General' }).click();
    await page.getByRole('button', { name: '← Back' }).click();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    expect(await page.getByTestId('msg-user').count()).toBe(0);
    // The Conversation tab of the header returns too, also without a message.
    await openMcp(page);
    await page.getByRole('button', { name: 'Conversation' }).click();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    expect(await page.getByTestId('mcp-settings').count()).toBe(0);
    expect(await page.getByTestId('msg-user').count()).toBe(0);
    expect((await ui.api('GET', '/api/state')).json.messages).toEqual([]);
    expect(m.requests).toHaveLength(0);
    await closeUi(ui);
  });

  it('connect / disconnect read "Connecting..." / "Disconnecting..." and settle, even when a child ignores SIGTERM; an error row says why and offers Reconnect', async () => {
    const s = await sandbox();
    await writeUserConfig(s, {
      stubborn: { command: process.execPath, args: [spawner], env: { SPAWNER_MODE: 'ignore-term' } },
      broken: {
        command: process.execPath,
        args: ['-e', 'console.error("no database at db.local:5432"); process.exit(3)'],
      },
      slow: { command: process.execPath, args: [fixturePath('slow-init')], env: { SLOW_INIT_MS: '5000' } },
    });
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    await openMcp(page);
    const row = page.getByTestId('server-stubborn');
    const button = row.getByTestId('action');
    expect(await button.textContent()).toBe('Connect');
    await button.click();
    // The label changes at once and the button is disabled while the dial runs.
    expect(await button.textContent()).toBe('Connecting...');
    expect(await button.isDisabled()).toBe(true);
    await screenshot(page, 'mcp-connecting');
    await page.locator('[data-testid="server-stubborn"][data-status="connected"]').waitFor();
    expect(await row.getByTestId('status').textContent()).toBe('connected');
    expect(await row.getByTestId('tools').textContent()).toBe('9 tools');
    await screenshot(page, 'mcp-connected');
    await button.click();
    expect(await button.textContent()).toBe('Disconnecting...');
    expect(await button.isDisabled()).toBe(true);
    await screenshot(page, 'mcp-disconnecting');
    await page.locator('[data-testid="server-stubborn"][data-status="disconnected"]').waitFor();
    await actionSettled(page, 'stubborn', 'Connect');
    noneLeft();
    // A server that fails: red reason and a Reconnect button.
    const broken = page.getByTestId('server-broken');
    await broken.getByTestId('action').click();
    await page.locator('[data-testid="server-broken"][data-status="error"]').waitFor();
    await actionSettled(page, 'broken', 'Reconnect');
    expect(await broken.getByTestId('server-error').textContent()).toBeTruthy();
    expect(await broken.getByTestId('server-error').evaluate((el) => getComputedStyle(el).color)).toBe(
      'rgb(200, 30, 30)',
    );
    expect(await broken.getByTestId('action').textContent()).toBe('Reconnect');
    await screenshot(page, 'mcp-error-row');
    // A slow handshake: the row shows "connecting" (pushed live) until the dial ends.
    const slow = page.getByTestId('server-slow');
    await slow.getByTestId('action').click();
    await page.locator('[data-testid="server-slow"][data-status="connecting"]').waitFor();
    expect(await slow.getByTestId('status').textContent()).toBe('connecting');
    await screenshot(page, 'mcp-status-connecting');
    await page.locator('[data-testid="server-slow"][data-status="connected"]').waitFor();
    await closeUi(ui);
  });

  it('a remote server that goes away shows "reconnecting" live; Disconnect during the retries settles', async () => {
    const f = await startHttpFixture({ transport: 'sse' });
    onTestFinished(() => f.close());
    const s = await sandbox();
    await writeUserConfig(s, { remote: { type: 'sse', url: f.url } });
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    await openMcp(page);
    // Hold the answer to the click: the live push of "connected" comes first.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/mcp/servers/remote/connect', async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    const row = page.getByTestId('server-remote');
    await row.getByTestId('action').click();
    await page.locator('[data-testid="server-remote"][data-status="connected"]').waitFor();
    // Until the click is answered, the button shows the action in flight.
    expect(await row.getByTestId('action').textContent()).toBe('Connecting...');
    release();
    await actionSettled(page, 'remote', 'Disconnect');
    await f.stop();
    // Retries back off for seconds (5 attempts from 0.5 s, doubling): the row says so meanwhile.
    await page.locator('[data-testid="server-remote"][data-status="reconnecting"]').waitFor();
    expect(await row.getByTestId('action').textContent()).toBe('Disconnect');
    await screenshot(page, 'mcp-reconnecting');
    await row.getByTestId('action').click();
    await page.locator('[data-testid="server-remote"][data-status="disconnected"]').waitFor();
    await actionSettled(page, 'remote', 'Connect');
    await closeUi(ui);
  });

  it('an older snapshot never overwrites a newer one', async () => {
    const s = await sandbox();
    await writeUserConfig(s, { hello: { command: process.execPath, args: [hello] } });
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    // Hold the list the page asks for when /mcp opens: it is taken now (hello disconnected)...
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let held: { version: number; status: string } | undefined;
    const taken = new Promise<void>((resolveTaken) => {
      void page.route('**/api/mcp/servers', async (route: Route) => {
        const response = await route.fetch();
        const body = await response.json();
        held = { version: body.version, status: body.servers[0].status };
        resolveTaken();
        await released;
        await route.fulfill({ response, json: body });
      });
    });
    await openMcp(page);
    await taken;
    expect(held).toMatchObject({ status: 'disconnected' });
    // ...then the server connects (another client), and the page hears it over the event stream...
    const r = await ui.api('POST', '/api/mcp/servers/hello/connect');
    expect(r.status).toBe(200);
    expect(r.json.version).toBeGreaterThan(held?.version ?? Number.POSITIVE_INFINITY);
    await page.locator('[data-testid="server-hello"][data-status="connected"]').waitFor();
    const shown = Number(await page.getByTestId('mcp-settings').getAttribute('data-version'));
    // ...and only then the stale list arrives.
    const received = () => page.evaluate(() => Number(document.documentElement.dataset.snapshotsReceived));
    const before = await received();
    release();
    // Wait until the page has handled the stale list (it counts every snapshot it receives).
    await page.waitForFunction((n) => Number(document.documentElement.dataset.snapshotsReceived) > n, before);
    expect(await page.getByTestId('server-hello').getAttribute('data-status')).toBe('connected');
    expect(
      Number(await page.getByTestId('mcp-settings').getAttribute('data-version')),
    ).toBeGreaterThanOrEqual(shown);
    await screenshot(page, 'mcp-stale-snapshot-ignored');
    await closeUi(ui);
  });

  it('delete: a confirmation names the server and file; cancel keeps it; confirm removes it from the file; a failed write keeps it', async () => {
    const s = await sandbox();
    const userFile = await writeUserConfig(s, {
      hello: { command: process.execPath, args: [hello] },
      keep: { command: process.execPath, args: [hello] },
    });
    const projectFile = join(s.workdir, '.mcp.json');
    await writeFile(
      projectFile,
      JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: [hello] } } }),
    );
    const m = await fakeModel({});
    const ui = await startUi(s, [...modelArgs(m), '--trust']);
    const page = await openPage(browser, ui);
    await openMcp(page);
    const before = await readFile(userFile, 'utf8');
    await page.getByTestId('server-hello').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('"hello"');
    expect(await dialog.textContent()).toContain(userFile);
    await screenshot(page, 'mcp-delete-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await readFile(userFile, 'utf8')).toBe(before);
    expect(await page.getByTestId('server-hello').count()).toBe(1);
    await page.getByTestId('server-hello').getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('server-hello').waitFor({ state: 'detached' });
    expect(JSON.parse(await readFile(userFile, 'utf8')).mcpServers).toEqual({
      keep: { command: process.execPath, args: [hello] },
    });
    // A project server; the file cannot be written (immutable: fails even for root).
    await page.getByRole('tab', { name: /Project MCP/ }).click();
    const proj = page.getByTestId('server-proj');
    await proj.waitFor();
    const projBefore = await readFile(projectFile, 'utf8');
    const projectText = await makeUnwritable(projectFile);
    await proj.getByRole('button', { name: 'Delete' }).click();
    expect(await dialog.textContent()).toContain(projectFile);
    await dialog.getByRole('button', { name: 'Delete' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Could not delete "proj"');
    expect(await page.getByTestId('server-proj').count()).toBe(1);
    expect(await projectText()).toBe(projBefore);
    await screenshot(page, 'mcp-delete-failed');
    // Deleting never went through the model.
    expect(m.requests).toHaveLength(0);
    await closeUi(ui);
  });

  it('Add and Edit prefill the input and send nothing; Edit shows the absolute config file read-only', async () => {
    const s = await sandbox();
    const userFile = await writeUserConfig(s, { hello: { command: process.execPath, args: [hello] } });
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    await openMcp(page);
    await page.getByRole('button', { name: 'Add user-level MCP server' }).click();
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.waitFor();
    expect(await input.inputValue()).toMatch(/^\/settings Help me add a user-level MCP server/);
    expect(await page.getByTestId('file-panel').count()).toBe(0);
    await openMcp(page);
    await page.getByRole('tab', { name: /Project MCP/ }).click();
    // An empty tab says how to add a server and where it goes.
    expect(await page.getByTestId('empty').textContent()).toContain(join(s.workdir, '.mcp.json'));
    await screenshot(page, 'mcp-project-empty');
    await page.getByRole('tab', { name: /Plugin MCP/ }).click();
    expect(await page.getByTestId('empty').textContent()).toContain('wave plugin add');
    await page.getByRole('tab', { name: /Project MCP/ }).click();
    await page.getByRole('button', { name: 'Add project-level MCP server' }).click();
    expect(await input.inputValue()).toContain('"project"');
    await openMcp(page);
    await page.getByRole('tab', { name: /User MCP/ }).click();
    await page.getByTestId('server-hello').getByRole('button', { name: 'Edit' }).click();
    expect(await input.inputValue()).toBe(
      'Help me edit the MCP server "hello": change <what> to <new value>',
    );
    await page.getByTestId('file-panel').waitFor();
    expect(await page.getByTestId('file-path').textContent()).toBe(userFile);
    expect(await page.getByTestId('file-content').textContent()).toBe(await readFile(userFile, 'utf8'));
    await screenshot(page, 'edit-prompt-and-file');
    expect(m.requests).toHaveLength(0);
    expect((await ui.api('GET', '/api/state')).json.messages).toEqual([]);
    await closeUi(ui);
  });
});

/**
 * Make a config file impossible to rewrite, even for root: `chattr +i`
 * (immutable) where the file system supports it; elsewhere (overlayfs) the
 * file is moved aside and a directory takes its place. Undone when the test
 * ends. Returns how to read the server's definition afterwards.
 */
async function makeUnwritable(file: string): Promise<() => Promise<string>> {
  const r = spawnSync('chattr', ['+i', file], { encoding: 'utf8' });
  if (r.status === 0) {
    onTestFinished(() => {
      spawnSync('chattr', ['-i', file]);
    });
    return () => readFile(file, 'utf8');
  }
  const aside = `${file}.aside`;
  await rename(file, aside);
  await mkdir(file);
  onTestFinished(async () => {
    await rm(file, { recursive: true, force: true });
    await rename(aside, file);
  });
  return () => readFile(aside, 'utf8');
}

describe('wave ui: no model configured', () => {
  it('the settings page works; a message ends in an error that says how to configure a model', async () => {
    const s = await sandbox();
    await writeUserConfig(s, { hello: { command: process.execPath, args: [hello] } });
    const ui = await startUi(s, []);
    expect(ui.output()).toContain('No model is configured');
    // The event stream opens late (as on a busy machine): the turn's error
    // arrives only as an event, so the message must wait for the stream.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    onTestFinished(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.route('**/api/events**', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(ui.url);
    const input = page.getByRole('textbox', { name: 'Message' });
    await input.fill('hello?');
    await input.press('Enter');
    release();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('--base-url');
    await openMcp(page);
    await page.getByTestId('server-hello').getByTestId('action').click();
    await page.locator('[data-testid="server-hello"][data-status="connected"]').waitFor();
    await closeUi(ui);
  });
});

describe('wave ui: actions always settle', () => {
  it('a row whose server was removed meanwhile (page not told): Disconnect and Connect end in an error toast and a refreshed list', async () => {
    const s = await sandbox();
    await writeUserConfig(s, {
      hello: { command: process.execPath, args: [hello] },
      idle: { command: process.execPath, args: [hello] },
      other: { command: process.execPath, args: [hello] },
    });
    const m = await fakeModel({});
    const ui = await startUi(s, modelArgs(m));
    expect((await ui.api('POST', '/api/mcp/servers/hello/connect')).json.servers[0].status).toBe('connected');
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    onTestFinished(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    // This page hears no live updates, so its rows go stale.
    await page.route('**/api/events**', (route) => route.abort());
    await page.goto(ui.url);
    await openMcp(page);
    // A connected server removed from the file by someone else: Disconnect.
    const button = page.getByTestId('server-hello').getByTestId('action');
    expect(await button.textContent()).toBe('Disconnect');
    expect((await ui.api('DELETE', '/api/mcp/servers/hello')).status).toBe(200);
    await button.click();
    await page.getByRole('alert').filter({ hasText: 'No MCP server named "hello"' }).waitFor();
    await page.getByTestId('server-hello').waitFor({ state: 'detached' });
    await screenshot(page, 'mcp-action-on-removed-server');
    // A disconnected one: Connect.
    const idle = page.getByTestId('server-idle').getByTestId('action');
    expect(await idle.textContent()).toBe('Connect');
    expect((await ui.api('DELETE', '/api/mcp/servers/idle')).status).toBe(200);
    await idle.click();
    await page.getByRole('alert').filter({ hasText: 'No MCP server named "idle"' }).waitFor();
    await page.getByTestId('server-idle').waitFor({ state: 'detached' });
    expect(await page.getByTestId('server-other').count()).toBe(1);
    await closeUi(ui);
  });

  it('--port serves on the chosen port of 127.0.0.1 only; --cwd picks the project folder', async () => {
    const s = await sandbox();
    const other = join(s.root, 'other-project');
    await mkdir(other);
    await writeFile(
      join(other, '.mcp.json'),
      JSON.stringify({ mcpServers: { elsewhere: { command: process.execPath, args: [hello] } } }),
    );
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const m = await fakeModel({});
    const ui = await startUi(s, ['--port', String(port), '--cwd', other, ...modelArgs(m)]);
    expect(ui.base).toBe(`http://127.0.0.1:${port}`);
    // Only the IPv4 loopback listens: not ::1, not this machine's other addresses.
    const { networkInterfaces } = await import('node:os');
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && !a.internal)
      .map((a) => (a?.family === 'IPv6' ? `[${a.address.split('%')[0]}]` : a?.address));
    for (const host of ['[::1]', ...others]) {
      const reached = await fetch(`http://${host}:${port}/api/state?token=${ui.token}`, {
        signal: AbortSignal.timeout(5000),
      }).then(
        (res) => `HTTP ${res.status}`,
        (err: Error) => String((err.cause as { code?: string } | undefined)?.code ?? err.name),
      );
      expect(reached, host).not.toMatch(/^HTTP/);
    }
    const r = await ui.api('GET', '/api/mcp/servers');
    expect(r.json).toMatchObject({
      workdir: other,
      project: 'other-project',
      files: { project: join(other, '.mcp.json') },
    });
    expect(r.json.servers.map((v: { name: string; source: string }) => [v.name, v.source])).toEqual([
      ['elsewhere', 'project'],
    ]);
    await closeUi(ui);
  });

  it('--open hands the URL (with its token) to the desktop opener', async () => {
    const s = await sandbox();
    const bin = join(s.root, 'bin');
    await mkdir(bin);
    const opened = join(s.root, 'opened.txt');
    await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`, { mode: 0o755 });
    const m = await fakeModel({});
    const ui = await startUi(s, ['--open', ...modelArgs(m)], { PATH: `${bin}:${process.env.PATH ?? ''}` });
    await waitForFile(opened);
    expect(await readFile(opened, 'utf8')).toBe(ui.url);
    await closeUi(ui);
  });

  it('--port on a port in use exits 1 and leaves nothing running', async () => {
    const s = await sandbox();
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    onTestFinished(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as { port: number }).port;
    const m = await fakeModel({});
    const r = await s.wave(['ui', '--port', String(port), ...modelArgs(m)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Port ${port} is in use`);
    expect((await s.wave(['ui', '--port', 'x', ...modelArgs(m)])).code).toBe(2);
    noneLeft();
  });
});

describe('wave ui: Add through the agent, and shutdown', () => {
  it('an Add prompt, once sent, becomes a new server in the user file through McpSettings (approved on the page)', async () => {
    const s = await sandbox();
    const userFile = join(s.home, 'mcp.json');
    const m = await fakeModel({
      steps: [
        {
          toolCalls: [
            {
              name: 'McpSettings',
              arguments: {
                action: 'add',
                scope: 'user',
                name: 'memo',
                config: { command: process.execPath, args: [hello] },
              },
            },
          ],
        },
        { text: 'Added the user-level server "memo".' },
      ],
    });
    const ui = await startUi(s, modelArgs(m));
    const page = await openPage(browser, ui);
    await openMcp(page);
    expect(await page.getByTestId('empty').textContent()).toContain(userFile);
    await page.getByRole('button', { name: 'Add user-level MCP server' }).click();
    const input = page.getByRole('textbox', { name: 'Message' });
    const prompt = (await input.inputValue())
      .replace('<name>', 'memo')
      .replace('<command or URL>', `${process.execPath} ${hello}`)
      .replace(', arguments <args>', '');
    expect(m.requests).toHaveLength(0);
    await input.fill(prompt);
    await input.press('Enter');
    const card = page.getByTestId('approval');
    await card.waitFor();
    expect(await card.textContent()).toContain('McpSettings');
    await screenshot(page, 'add-approval');
    await card.getByRole('button', { name: 'Allow once' }).click();
    await page.getByText('Added the user-level server "memo".').waitFor();
    expect(m.requests[0]?.body.messages.at(-1).content).toContain(
      '/settings Help me add a user-level MCP server memo',
    );
    expect(JSON.parse(await readFile(userFile, 'utf8')).mcpServers.memo).toEqual({
      command: process.execPath,
      args: [hello],
    });
    await openMcp(page);
    await page.getByRole('tab', { name: /User MCP/ }).click();
    const row = page.getByTestId('server-memo');
    await row.waitFor();
    expect(await row.textContent()).toContain('user');
    await screenshot(page, 'add-new-server-listed');
    await closeUi(ui);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} with connected servers, an open page and a pending approval leaves no process`, async () => {
      const s = await sandbox();
      await writeUserConfig(s, {
        hello: { command: process.execPath, args: [hello] },
        tree: { command: process.execPath, args: [spawner] },
      });
      const m = await fakeModel({
        steps: [{ toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: 'x' } }] }],
      });
      const ui = await startUi(s, modelArgs(m));
      const page = await openPage(browser, ui);
      await openMcp(page);
      for (const name of ['hello', 'tree']) {
        await page.getByTestId(`server-${name}`).getByTestId('action').click();
        await page.locator(`[data-testid="server-${name}"][data-status="connected"]`).waitFor();
      }
      // The spawner's grandchildren (one ignores SIGTERM, one in its own session) exist now.
      expect(findProcessesByMarker(namespace).length).toBeGreaterThanOrEqual(4);
      await page.getByRole('button', { name: '← Back' }).click();
      const input = page.getByRole('textbox', { name: 'Message' });
      await input.fill('echo x');
      await input.press('Enter');
      await page.getByTestId('approval').waitFor();
      // A reload keeps the pending approval (it lives in the wave ui process).
      await page.reload();
      await page.getByTestId('approval').waitFor();
      expect(await ui.stop(signal)).toBe(0);
      expect(ui.output()).toMatch(/wave ui: closed in \d+ ms\./);
      noneLeft();
    });
  }
});

/** Wait (up to 30 s) until a file exists and is not empty. */
async function waitForFile(file: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text !== '') return;
    if (Date.now() > deadline) throw new Error(`${file} was not written within 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
