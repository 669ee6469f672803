import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ResolvedServer } from '@wave/mcp-config';
import type { Command } from 'commander';
import { loginCommand, noteNeedsAuth } from '../auth-hints';
import { type GlobalOptions, loadWorld, type World } from '../context';
import { commandPool, ensureEnabled, ensureTrusted } from '../dial';
import { CliError, examples, type Io, oneLine } from '../io';
import { colors } from '../render';
import { redact, secretValues } from '../secrets';
import { findServer } from './config';
import { remember } from './live';

/** The command that opens a browser on `url`, or undefined (headless, or `WAVE_BROWSER=none`). Pure. */
export function browserCommand(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
): { command: string; args: string[] } | undefined {
  const own = env.WAVE_BROWSER;
  if (own !== undefined && own !== '') return own === 'none' ? undefined : { command: own, args: [url] };
  if (platform === 'darwin') return { command: 'open', args: [url] };
  // Not `cmd /c start`: cmd would read the URL's `&` as a command separator.
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return { command: 'xdg-open', args: [url] };
  return undefined;
}

/** Start the browser, detached; any failure is ignored (the URL is printed anyway). */
function openBrowser(url: string, env: NodeJS.ProcessEnv): void {
  const how = browserCommand(url, env, process.platform);
  if (!how) return;
  try {
    const child = spawn(how.command, how.args, { detached: true, stdio: 'ignore', windowsHide: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser: the person opens the printed URL.
  }
}

/**
 * Is `text` the address a sign-in ended on, for the authorization request
 * `authorizationUrl` (a URL or its query, with that request's `state` and a
 * `code` or an `error`)? Pure.
 */
export function isPastedRedirect(text: string, authorizationUrl: string): boolean {
  const trimmed = text.trim();
  let params: URLSearchParams;
  try {
    params = new URL(trimmed).searchParams;
  } catch {
    params = new URLSearchParams(trimmed.startsWith('?') ? trimmed.slice(1) : trimmed);
  }
  let expected: string | null = null;
  try {
    expected = new URL(authorizationUrl).searchParams.get('state');
  } catch {
    return false;
  }
  return (
    (params.has('code') || params.has('error')) && (expected === null || params.get('state') === expected)
  );
}

/**
 * The final redirect URL pasted on stdin by a person whose browser cannot
 * reach this machine: the first line that {@link isPastedRedirect} accepts
 * (other lines get a message, and reading goes on), from `start()` on. Stays
 * pending at end of input (or with no input, /dev/null). Started only once
 * the URL is shown. Nothing here calls fstat on stdin: on Node 20, an fstat
 * of a pipe makes later ESM imports of packages fail (ERR_MODULE_NOT_FOUND).
 */
function pastedLine(io: Io): {
  line: Promise<string>;
  start(authorizationUrl: string): void;
  close(): void;
} {
  let rl: ReturnType<typeof createInterface> | undefined;
  let resolveLine: (text: string) => void = () => undefined;
  const line = new Promise<string>((resolve) => {
    resolveLine = resolve;
  });
  return {
    line,
    start(authorizationUrl) {
      if (rl) return;
      rl = createInterface({ input: process.stdin, terminal: false });
      rl.on('line', (text) => {
        if (text.trim() === '') return;
        if (isPastedRedirect(text, authorizationUrl)) resolveLine(text);
        else
          io.err(
            'That is not the address this sign-in ended on. Paste the whole address from the browser (it starts with http://127.0.0.1 and holds code= and state=), or press Ctrl-C.\n',
          );
      });
    },
    close() {
      // Paused, not destroyed: destroying a pipe closes file descriptor 0, and a later open
      // reusing it breaks module loading. A paused stdin does not keep the process alive.
      if (!rl) return;
      rl.close();
      process.stdin.pause();
    },
  };
}

/** The pool signs in to http/sse servers that do not send their own Authorization header. Pure. */
function refuseWithoutOAuth(s: ResolvedServer): void {
  if (s.transport !== 'http' && s.transport !== 'sse')
    throw new CliError(`"${s.name}" is a ${s.transport} server: only remote (http/sse) servers sign in.`, 2);
  const own = Object.keys(s.config.headers ?? {}).some((k) => k.toLowerCase() === 'authorization');
  if (own && s.config.oauth === undefined)
    throw new CliError(
      `"${s.name}" sends its own Authorization header, so there is nothing to sign in to. Remove the header to use OAuth.`,
      2,
    );
}

async function tokenFiles(home: string): Promise<number> {
  try {
    return (await readdir(join(home, 'oauth'))).filter((n) => n.endsWith('.json')).length;
  } catch {
    return 0;
  }
}

/** Why a sign-in failed, for a person (the pool's messages never carry a token). */
function loginFailure(name: string, err: unknown, secrets: readonly string[]): string {
  const cause = (err as { cause?: unknown }).cause as { reason?: string; message?: string } | undefined;
  const reason = cause?.reason;
  const message = redact(err instanceof Error ? err.message : String(err), secrets) ?? '';
  const hint =
    reason === 'timeout'
      ? ' Run wave mcp login again and finish the sign-in in the browser.'
      : reason === 'denied'
        ? ' The authorization server refused; check the account and the scopes asked for.'
        : reason === 'state' || reason === 'malformed'
          ? ' Paste the whole address the browser ends on (it starts with http://127.0.0.1).'
          : '';
  return `Sign-in to "${name}" failed: ${message.replace(/^Sign-in to MCP server "[^"]*" failed: /, '')}${hint}`;
}

/** The server `name`; an unknown name is a usage error (exit 2). */
function serverNamed(world: World, name: string): ResolvedServer {
  try {
    return findServer(world, name);
  } catch (err) {
    if (err instanceof CliError) throw new CliError(err.message, 2);
    throw err;
  }
}

/** `wave mcp login <name>`: the browser sign-in of one remote server. */
async function login(world: World, name: string, opts: { trust?: boolean }): Promise<void> {
  const io = world.io;
  const s = serverNamed(world, name);
  refuseWithoutOAuth(s);
  ensureEnabled(world, s);
  await ensureTrusted(world, s, opts);
  const secrets = secretValues(s, io.env);
  const paste = pastedLine(io);
  const { pool, close } = await commandPool([s]);
  try {
    const record = await pool
      .authorize(s.name, {
        openUrl: (url) => {
          io.out(`Open this URL to sign in to ${oneLine(s.name)}:\n\n  ${oneLine(url)}\n\n`);
          openBrowser(url, io.env);
          paste.start(url);
          if (io.interactive)
            io.err(
              'Waiting for the sign-in (Ctrl-C to cancel). If the browser runs on another machine, paste the address it ends on here and press Enter.\n',
            );
          else io.err('Waiting for the sign-in (Ctrl-C to cancel)...\n');
        },
        pastedRedirect: paste.line,
      })
      .catch((err: unknown) => {
        throw new CliError(loginFailure(s.name, err, secrets));
      });
    await remember(world, [record]);
    const c = colors(io.color);
    if (record.status === 'connected') {
      io.out(
        `${c.green('Signed in')} to ${oneLine(s.name)}. ${record.tools.length} tool${record.tools.length === 1 ? '' : 's'}.\n`,
      );
    } else {
      io.out(`Signed in to ${oneLine(s.name)}, but it is ${record.status}.\n`);
      if (record.error) io.err(`${redact(record.error.message, secrets)}\n`);
      process.exitCode = 1;
    }
  } finally {
    await close();
    paste.close();
  }
}

/** `wave mcp logout <name>`: delete the stored tokens of one remote server. */
async function logout(world: World, name: string): Promise<void> {
  const io = world.io;
  const s = serverNamed(world, name);
  refuseWithoutOAuth(s);
  const before = await tokenFiles(world.home);
  const { pool, close } = await commandPool([s]);
  try {
    await pool.logout(s.name);
  } finally {
    await close();
  }
  const after = await tokenFiles(world.home);
  if (after < before) {
    await noteNeedsAuth(world.home, [{ server: s, needsAuth: true }]);
    io.out(
      `Signed out of ${oneLine(s.name)}: its stored tokens were deleted. Sign in again with: ${loginCommand(s.name)}\n`,
    );
  } else io.out(`${oneLine(s.name)} had no stored sign-in on this machine; nothing to delete.\n`);
}

export function registerAuthCommands(mcp: Command, io: Io, globals: () => GlobalOptions): void {
  mcp
    .command('login <name>')
    .description('sign in to a remote server that needs OAuth (opens the browser on a desktop)')
    .option('--trust', 'trust a project or plugin server as configured now')
    .addHelpText(
      'after',
      [
        '',
        'The sign-in URL is printed; on a desktop the browser opens it (WAVE_BROWSER=<command> picks',
        'the browser, WAVE_BROWSER=none opens nothing). Over SSH, open the URL anywhere and paste the',
        'address the browser ends on (http://127.0.0.1:...) here.',
        '',
        'Examples:',
        '  wave mcp login github',
        '  wave mcp logout github',
      ].join('\n'),
    )
    .action(async (name: string, opts: { trust?: boolean }) => {
      await login(await loadWorld(io, globals()), name, opts);
    });

  mcp
    .command('logout <name>')
    .description("delete a remote server's stored sign-in (its OAuth tokens)")
    .addHelpText('after', examples('wave mcp logout github', 'wave mcp login github   # sign in again'))
    .action(async (name: string) => {
      await logout(await loadWorld(io, globals()), name);
    });
}
