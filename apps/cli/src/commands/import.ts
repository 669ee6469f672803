import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { addServer, isMcpConfigError } from '@wave/mcp-config';
import type { Command } from 'commander';
import { parse as parseJsonc } from 'jsonc-parser';
import { type GlobalOptions, resolvePaths } from '../context';
import { CliError, examples, type Io, oneLine } from '../io';
import { findLiteralSecrets } from '../secrets';
import { confirmOrRefuse, describeSecrets, parseScope, printJson, scopeFile } from './config';

export const IMPORT_SOURCES = ['claude-desktop', 'claude-code', 'cursor', 'vscode'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

/** Where each host keeps its MCP config, for this user and project. Pure. */
export function importPaths(
  from: ImportSource,
  ctx: { home: string; workdir: string; platform: NodeJS.Platform; appData?: string },
): string[] {
  switch (from) {
    case 'claude-desktop':
      if (ctx.platform === 'darwin')
        return [join(ctx.home, 'Library/Application Support/Claude/claude_desktop_config.json')];
      if (ctx.platform === 'win32')
        return [join(ctx.appData ?? join(ctx.home, 'AppData/Roaming'), 'Claude/claude_desktop_config.json')];
      return [join(ctx.home, '.config/Claude/claude_desktop_config.json')];
    case 'claude-code':
      return [join(ctx.home, '.claude.json')];
    case 'cursor':
      return [join(ctx.workdir, '.cursor/mcp.json'), join(ctx.home, '.cursor/mcp.json')];
    case 'vscode':
      return [join(ctx.workdir, '.vscode/mcp.json')];
  }
}

/** Claude Code's ~/.claude.json also keeps history and grows to a few MiB. */
const MAX_IMPORT_BYTES = 64 * 1024 * 1024;

/**
 * Read another host's config file: undefined when it is missing; a CliError
 * when it is not a regular file (a FIFO would block forever, a device never
 * ends) or is larger than {@link MAX_IMPORT_BYTES}.
 */
export async function readImportFile(file: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new CliError(`${file} cannot be read (${code ?? String(err)}).`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new CliError(`${file} is not a regular file; nothing was imported.`);
    if (st.size > MAX_IMPORT_BYTES)
      throw new CliError(
        `${file} is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB; nothing was imported.`,
      );
    const buf = Buffer.alloc(Math.min(st.size, MAX_IMPORT_BYTES) + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total >= buf.length)
        throw new CliError(`${file} grew while it was read; nothing was imported. Try again.`);
    }
    return buf.subarray(0, total).toString('utf8');
  } finally {
    await handle.close();
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The servers another host's config file defines. Pure. Claude Desktop,
 * Cursor: `mcpServers`; Claude Code: `mcpServers` and the current project's
 * `projects[workdir].mcpServers`; VS Code: `servers`.
 */
export function serversIn(from: ImportSource, text: string, workdir: string): Record<string, unknown> {
  const value: unknown = parseJsonc(text, [], { allowTrailingComma: true });
  if (!isRecord(value)) return {};
  const out: Record<string, unknown> = {};
  const take = (m: unknown) => {
    if (!isRecord(m)) return;
    for (const [k, v] of Object.entries(m)) {
      if (!Object.hasOwn(out, k))
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  };
  if (from === 'vscode') take(value.servers);
  else take(value.mcpServers);
  if (from === 'claude-code' && isRecord(value.projects))
    take((value.projects as Record<string, Record<string, unknown>>)[workdir]?.mcpServers);
  return out;
}

export function registerImportCommand(mcp: Command, io: Io, globals: () => GlobalOptions): void {
  mcp
    .command('import')
    .description("copy servers from another host's config (Claude Desktop, Claude Code, Cursor, VS Code)")
    .option('--from <host>', `one of ${IMPORT_SOURCES.join(', ')} (default: every one found)`)
    .option('--path <file>', 'read this file instead of the usual place (needs --from)')
    .option('-s, --scope <scope>', 'user or project', 'user')
    .option('-y, --yes', 'do not ask')
    .option('--allow-secret', 'allow literal secrets in a project file')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(
        'wave mcp import --from claude-desktop',
        'wave mcp import --from cursor --scope project --yes',
        'wave mcp import --from vscode --path .vscode/mcp.json',
      ),
    )
    .action(
      async (opts: {
        from?: string;
        path?: string;
        scope?: string;
        yes?: boolean;
        json?: boolean;
        allowSecret?: boolean;
      }) => {
        const paths = resolvePaths(io, globals());
        if (opts.from !== undefined && !IMPORT_SOURCES.includes(opts.from as ImportSource)) {
          throw new CliError(`--from must be one of ${IMPORT_SOURCES.join(', ')}.`, 2);
        }
        if (opts.path !== undefined && opts.from === undefined)
          throw new CliError('--path needs --from to say which format it is.', 2);
        const scope = parseScope(opts.scope) ?? 'user';
        const userHome = io.env.HOME ?? homedir();
        const sources = opts.from ? [opts.from as ImportSource] : [...IMPORT_SOURCES];
        const found: { from: ImportSource; file: string; name: string; config: unknown }[] = [];
        for (const from of sources) {
          const files = opts.path
            ? [resolve(io.cwd, opts.path)]
            : importPaths(from, {
                home: userHome,
                workdir: paths.workdir,
                platform: process.platform,
                ...(io.env.APPDATA ? { appData: io.env.APPDATA } : {}),
              });
          for (const file of files) {
            let text: string | undefined;
            try {
              text = await readImportFile(file);
            } catch (err) {
              // A file given with --path must be read; one found in a usual place is skipped with a word.
              if (opts.path || !(err instanceof CliError)) throw err;
              io.err(`skipped: ${err.message}\n`);
              continue;
            }
            if (text === undefined) {
              if (opts.path) throw new CliError(`${file} cannot be read.`);
              continue;
            }
            for (const [name, config] of Object.entries(serversIn(from, text, paths.workdir))) {
              if (!found.some((f) => f.name === name)) found.push({ from, file, name, config });
            }
          }
        }
        if (found.length === 0) {
          throw new CliError(`No MCP servers found to import${opts.from ? ` from ${opts.from}` : ''}.`);
        }
        const target = scopeFile(paths, scope);
        if (!opts.json) {
          io.out(`Will add to ${target}:\n`);
          for (const f of found) io.out(`  ${oneLine(f.name)}  (from ${f.from}: ${f.file})\n`);
        }
        await confirmOrRefuse(
          io,
          `Import ${found.length} server${found.length === 1 ? '' : 's'}?`,
          opts.yes,
          'Pass --yes to import.',
        );
        const results: {
          name: string;
          result: 'added' | 'exists' | 'invalid' | 'secret';
          message?: string;
        }[] = [];
        for (const f of found) {
          // Another host's own config often holds literal tokens; a project file is shared.
          const secrets =
            scope === 'project' && !opts.allowSecret && typeof f.config === 'object' && f.config !== null
              ? findLiteralSecrets(f.config as Parameters<typeof findLiteralSecrets>[0])
              : [];
          if (secrets.length > 0) {
            results.push({
              name: f.name,
              result: 'secret',
              message: `it holds a literal secret (${describeSecrets(secrets)}), and ${target} is shared with the repository; import it with --scope user, or pass --allow-secret`,
            });
            continue;
          }
          try {
            await addServer(target, f.name, f.config, { source: scope });
            results.push({ name: f.name, result: 'added' });
          } catch (err) {
            if (!isMcpConfigError(err)) throw err;
            results.push({
              name: f.name,
              result: err.code === 'SERVER_EXISTS' ? 'exists' : 'invalid',
              message: err.message,
            });
          }
        }
        if (opts.json) printJson(io, { file: target, results });
        else {
          for (const r of results) {
            if (r.result === 'added') io.out(`added   ${oneLine(r.name)}\n`);
            else if (r.result === 'exists')
              io.out(`skipped ${oneLine(r.name)}: a server of that name exists already (not overwritten)\n`);
            else io.out(`skipped ${oneLine(r.name)}: ${r.message}\n`);
          }
        }
        if (results.some((r) => r.result === 'invalid' || r.result === 'secret')) process.exitCode = 1;
      },
    );
}
