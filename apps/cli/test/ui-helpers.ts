/**
 * Browser-test helpers for `wave ui`: start the built binary, wait for its
 * URL, drive Debian's Chromium with playwright-core, write screenshots.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { inject, onTestFinished } from 'vitest';
import type { Sandbox } from './helpers';

export const CHROMIUM = process.env.WAVE_CHROMIUM ?? '/usr/bin/chromium';
const artifacts = join(dirname(dirname(fileURLToPath(import.meta.url))), 'test-artifacts', 'ui');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

export interface RunningUi {
  /** The printed URL, token included. */
  url: string;
  /** `http://127.0.0.1:<port>`. */
  base: string;
  token: string;
  child: ChildProcess;
  output(): string;
  /** Authorized API call from the test (no Origin header, as a local tool would send). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read nested JSON fields without narrowing
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** Send a signal and wait (bounded) for the process to exit; resolves with its exit code. */
  /** The exit code, or the name of the signal that killed it (so a failed expectation says which). */
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** Start `wave ui` from the built binary in this sandbox and wait for its URL (up to 30 s). */
export async function startUi(
  s: Sandbox,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunningUi> {
  const child = spawn(process.execPath, [inject('waveBin'), 'ui', ...args], {
    cwd: s.workdir,
    env: {
      PATH: process.env.PATH ?? '',
      WAVE_REAPER_NAMESPACE: process.env.WAVE_REAPER_NAMESPACE ?? '',
      HOME: join(s.root, 'user-home'),
      WAVE_HOME: s.home,
      NO_COLOR: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, sig) => resolve(code ?? sig)),
  );
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wave ui printed no URL in 30 s:\n${out}`)), 30_000);
    const check = () => {
      const m = /wave ui: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`wave ui exited with ${code}:\n${out}`));
    });
    check();
  });
  const parsed = new URL(url);
  const token = parsed.searchParams.get('token') as string;
  const base = parsed.origin;
  return {
    url,
    base,
    token,
    child,
    output: () => out,
    async api(method, path, body) {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: await res.json().catch(() => undefined) };
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`wave ui did not exit within 30 s of ${signal}:\n${out}`)),
            30_000,
          );
        }),
      ]);
      clearTimeout(timer);
      return code;
    },
  };
}

/** Open the page in a fresh browser context; closed when the test ends. */
export async function openPage(browser: Browser, ui: RunningUi): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  onTestFinished(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(ui.url);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  return page;
}

/** Type `/mcp` and press Enter: opens Settings -> MCP. */
export async function openMcp(page: Page): Promise<void> {
  const input = page.getByRole('textbox', { name: 'Message' });
  await input.fill('/mcp');
  await input.press('Enter');
  await page.getByTestId('mcp-settings').waitFor();
}

/**
 * Wait until server `name`'s action button reads `label` and is enabled. A
 * status is pushed live, and it can arrive before the answer to the click
 * that caused it: until that answer, the button still shows the pending
 * action ("Connecting...").
 */
export async function actionSettled(page: Page, name: string, label: string): Promise<void> {
  await page.waitForFunction(
    ([server, text]) => {
      const b = document.querySelector(`[data-testid="server-${server}"] [data-testid="action"]`);
      return b?.textContent === text && !(b as HTMLButtonElement).disabled;
    },
    [name, label] as const,
  );
}
