/// <reference lib="dom" />
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FakeModelServer, startFakeOpenAI, startOAuthFixture } from '@wave/testkit';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { sandbox } from './helpers';
import { launchBrowser, openMcp, openPage, screenshot, startUi } from './ui-helpers';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function fakeModel(): Promise<FakeModelServer> {
  const m = await startFakeOpenAI({});
  onTestFinished(() => m.close());
  return m;
}

describe('wave ui: Sign in', () => {
  it('a needs-auth row offers "Sign in"; the page opens the authorization URL; the row ends connected', async () => {
    const f = await startOAuthFixture();
    onTestFinished(() => f.close());
    const s = await sandbox();
    await writeFile(
      join(s.home, 'mcp.json'),
      `${JSON.stringify({ mcpServers: { remote: { url: f.mcpUrl } } }, null, 2)}\n`,
    );
    const m = await fakeModel();
    const ui = await startUi(s, ['--base-url', m.baseURL, '--model', 'fake']);
    const page = await openPage(browser, ui);
    await openMcp(page);
    const row = page.getByTestId('server-remote');
    await row.getByTestId('action').click();
    await page.locator('[data-testid="server-remote"][data-status="needs-auth"]').waitFor();
    expect(await row.getByTestId('server-error').textContent()).toContain('sign in');
    const button = row.getByTestId('action');
    expect(await button.textContent()).toBe('Sign in');
    await screenshot(page, 'mcp-needs-auth');

    const popup = page.waitForEvent('popup');
    await button.click();
    // The browser window follows the authorization server's redirect to the loopback callback.
    const win = await popup;
    await page.locator('[data-testid="server-remote"][data-status="connected"]').waitFor();
    expect(await row.getByTestId('tools').textContent()).toBe('1 tool');
    await page.getByText('Signed in to "remote".').waitFor();
    expect(f.codeGrants).toBe(1);
    expect(f.lastAuthorize?.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    await win.close();
    const body = (await page.textContent('body')) ?? '';
    for (const t of [...f.issuedAccessTokens, ...f.issuedRefreshTokens]) {
      expect(body).not.toContain(t);
      expect(ui.output()).not.toContain(t);
    }
    expect(await ui.stop('SIGTERM')).toBe(0);
  });
});
