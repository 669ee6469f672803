import { statSync } from 'node:fs';
import { win32 } from 'node:path';

/** Variables a child inherits from the host's environment on POSIX (the MCP SDK's list). */
export const POSIX_INHERITED_ENV: readonly string[] = Object.freeze([
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
]);

/**
 * Variables a child inherits on Windows: what programs (and `cmd.exe`,
 * `npx.cmd`, Python, `uvx`) need to start and find their folders. Matched
 * case-insensitively, as Windows does.
 */
export const WINDOWS_INHERITED_ENV: readonly string[] = Object.freeze([
  'ALLUSERSPROFILE',
  'APPDATA',
  'COMMONPROGRAMFILES',
  'COMMONPROGRAMFILES(X86)',
  'COMMONPROGRAMW6432',
  'COMPUTERNAME',
  'COMSPEC',
  'HOMEDRIVE',
  'HOMEPATH',
  'LOCALAPPDATA',
  'NUMBER_OF_PROCESSORS',
  'OS',
  'PATH',
  'PATHEXT',
  'PROCESSOR_ARCHITECTURE',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROGRAMW6432',
  'PUBLIC',
  'SYSTEMDRIVE',
  'SYSTEMROOT',
  'TEMP',
  'TMP',
  'USERDOMAIN',
  'USERNAME',
  'USERPROFILE',
  'WINDIR',
]);

/**
 * The part of the host's environment a stdio server inherits (an allow-list:
 * secrets in the host's environment are not passed on), then `own` (the
 * server's configured `env`) on top. On Windows, names match
 * case-insensitively and a configured `Path` replaces an inherited `PATH`.
 * Values that start with `()` (exported shell functions) are not inherited.
 * Pure.
 */
export function inheritedEnvironment(
  platform: NodeJS.Platform,
  hostEnv: Readonly<Record<string, string | undefined>>,
  own: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  if (platform === 'win32') {
    const wanted = new Set(WINDOWS_INHERITED_ENV);
    const ownUpper = new Set(Object.keys(own).map((k) => k.toUpperCase()));
    for (const [k, v] of Object.entries(hostEnv)) {
      const upper = k.toUpperCase();
      if (v === undefined || !wanted.has(upper) || ownUpper.has(upper) || v.startsWith('()')) continue;
      out[k] = v;
    }
  } else {
    for (const k of POSIX_INHERITED_ENV) {
      const v = hostEnv[k];
      if (v === undefined || v.startsWith('()')) continue;
      out[k] = v;
    }
  }
  return Object.assign(out, own);
}

/** How to start a stdio server on this platform. */
export interface SpawnCommand {
  command: string;
  args: string[];
  /** `cmd /c` command lines are quoted here; Node must pass them as they are. */
  windowsVerbatimArguments?: boolean;
}

/** What {@link resolveStdioCommand} may look at. Injected in tests (no Windows machine needed). */
export interface CommandHost {
  platform: NodeJS.Platform;
  /** The child's environment (`PATH`, `PATHEXT`, `COMSPEC` are read from it, case-insensitively on Windows). */
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory of the child, for a relative command with a path. */
  cwd?: string | undefined;
  /** @default a `statSync` check */
  isFile?: (path: string) => boolean;
}

function envGet(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  if (env[name] !== undefined) return env[name];
  const upper = name.toUpperCase();
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === upper && v !== undefined) return v;
  return undefined;
}

function defaultIsFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** cmd.exe metacharacters, escaped with `^` (as cross-spawn does). */
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;

/** Quote one argument for `cmd /d /s /c "<line>"`: C runtime quoting, then cmd escaping. Pure. */
export function quoteCmdArgument(arg: string, doubleEscape = false): string {
  // Backslashes before a quote are doubled and the quote escaped; trailing backslashes doubled.
  let a = arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, '$1$1');
  a = `"${a}"`.replace(CMD_META, '^$1');
  return doubleEscape ? a.replace(CMD_META, '^$1') : a;
}

/** Escape the command itself for that line. Pure. */
export function quoteCmdCommand(command: string): string {
  return command.replace(CMD_META, '^$1');
}

/**
 * How to spawn `command args` on the given platform. POSIX: unchanged.
 * Windows: the command is looked up like the shell does (`PATH`, each
 * extension of `PATHEXT`; a path is tried with each extension too), and a
 * `.cmd` / `.bat` file (how `npx`, `pnpm` and many tools are installed there)
 * is run through `cmd.exe /d /s /c` with every argument quoted, since
 * Windows cannot start batch files directly. A command that is not found is
 * left as it is (the spawn then fails with a clear `SPAWN_FAILED`).
 */
export function resolveStdioCommand(
  command: string,
  args: readonly string[],
  host: CommandHost,
): SpawnCommand {
  if (host.platform !== 'win32') return { command, args: [...args] };
  const isFile = host.isFile ?? defaultIsFile;
  const exts = (envGet(host.env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e.startsWith('.'));
  const ext = win32.extname(command);
  const hasKnownExt = ext !== '' && exts.includes(ext.toLowerCase());
  const variants = (base: string) => (hasKnownExt ? [base] : [...exts.map((e) => base + e), base]);
  let found: string | undefined;
  if (/[\\/]/.test(command) || win32.isAbsolute(command)) {
    const base = win32.isAbsolute(command) || !host.cwd ? command : win32.join(host.cwd, command);
    found = variants(base).find(isFile);
  } else {
    const dirs = (envGet(host.env, 'PATH') ?? '').split(';').filter((d) => d.trim() !== '');
    for (const dir of dirs) {
      found = variants(win32.join(dir.replace(/^"(.*)"$/, '$1'), command)).find(isFile);
      if (found) break;
    }
  }
  if (!found) return { command, args: [...args] };
  if (!/\.(cmd|bat)$/i.test(found)) return { command: found, args: [...args] };
  // npm's cmd-shims in node_modules\.bin pass arguments through one more cmd level.
  const doubleEscape = /node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i.test(found);
  const line = [quoteCmdCommand(found), ...args.map((a) => quoteCmdArgument(a, doubleEscape))].join(' ');
  return {
    command: envGet(host.env, 'COMSPEC') ?? 'cmd.exe',
    args: ['/d', '/s', '/c', `"${line}"`],
    windowsVerbatimArguments: true,
  };
}
