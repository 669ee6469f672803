import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, readdir, readlink, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import {
  addServer,
  isMcpConfigError,
  pluginsDir,
  projectConfigPath,
  type ResolvedServer,
  readPlugin,
  removeServer,
  setServerDisabled,
  trustServer,
  userConfigPath,
} from '@wave/mcp-config';
import type { Command } from 'commander';
import { needsAuthText, readNeedsAuth, signInKey } from '../auth-hints';
import { type GlobalOptions, loadWorld, resolvePaths, type World } from '../context';
import { CliError, examples, type Io, oneLine } from '../io';
import { colors, renderGet, renderList } from '../render';
import { findLiteralSecrets, type SecretFinding } from '../secrets';
import { type ServerView, serverView } from '../views';

export type Scope = 'user' | 'project';

export function parseScope(value: string | undefined): Scope | undefined {
  if (value === undefined) return undefined;
  if (value === 'user' || value === 'project') return value;
  throw new CliError(`--scope must be "user" or "project", not ${JSON.stringify(value)}.`, 2);
}

export function scopeFile(world: { home: string; workdir: string }, scope: Scope): string {
  return scope === 'user' ? userConfigPath(world.home) : projectConfigPath(world.workdir);
}

export function printJson(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Every configured server's view, with cached tools where known. Starts no process. */
export async function viewsOf(world: World): Promise<ServerView[]> {
  const needsAuth = await readNeedsAuth(world.home);
  return Promise.all(
    world.servers.map(async (s) => {
      const key = signInKey(s);
      return serverView(
        s,
        world.local,
        await world.cache.get(world.workdir, s.name, s.fingerprint).catch(() => undefined),
        key !== undefined && needsAuth.has(key)
          ? { status: 'needs-auth', error: needsAuthText(s.name) }
          : undefined,
      );
    }),
  );
}

/** The effective server of that name (or the one in `scope`), or a CliError naming what exists. */
export function findServer(world: World, name: string, scope?: Scope): ResolvedServer {
  const s = world.servers.find((x) => x.name === name);
  if (s && (scope === undefined || s.source === scope)) return s;
  if (s && scope !== undefined) {
    const shadowed = s.shadowed?.find((d) => d.source === scope);
    if (shadowed)
      return { ...s, source: scope, file: shadowed.file, fingerprint: shadowed.fingerprint ?? s.fingerprint };
  }
  const names = world.servers.map((x) => x.name);
  throw new CliError(
    `No MCP server named "${name}"${scope ? ` in the ${scope} config` : ''}.${names.length ? ` Configured: ${names.join(', ')}.` : ' None is configured; see wave mcp add --help.'}`,
  );
}

/** Ask a yes/no question on a terminal (default no); refuse without one unless `yes`. */
export async function confirmOrRefuse(
  io: Io,
  question: string,
  yes: boolean | undefined,
  hint: string,
): Promise<void> {
  if (yes) return;
  if (!io.interactive) throw new CliError(`${question} Not asked: no terminal. ${hint}`);
  const { confirm, isCancel } = await import('@clack/prompts');
  const answer = await confirm({ message: question, initialValue: false });
  if (isCancel(answer) || answer !== true) throw new CliError('Cancelled; nothing changed.');
}

function parsePairs(
  values: string[] | undefined,
  sep: string,
  what: string,
): Record<string, string> | undefined {
  if (!values || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf(sep);
    if (at <= 0) throw new CliError(`${what} ${JSON.stringify(v)} must look like NAME${sep}value.`, 2);
    Object.defineProperty(out, v.slice(0, at).trim(), {
      value: v.slice(at + 1).trim(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function describeEditError(err: unknown): never {
  if (isMcpConfigError(err)) throw new CliError(err.message);
  throw err;
}

/** "env API_KEY, argument --token ****": what {@link findLiteralSecrets} found, values masked. Pure. */
export function describeSecrets(found: readonly SecretFinding[]): string {
  return found
    .map((f) =>
      f.kind === 'url'
        ? 'a password in the URL'
        : f.kind === 'arg'
          ? `argument ${f.key}`
          : `${f.kind} ${f.key}`,
    )
    .join(', ');
}

async function writeServer(
  io: Io,
  world: { home: string; workdir: string },
  name: string,
  config: Record<string, unknown>,
  opts: { scope?: string; force?: boolean; allowSecret?: boolean },
): Promise<void> {
  const scope = parseScope(opts.scope) ?? 'user';
  if (scope === 'project' && !opts.allowSecret) {
    const found = findLiteralSecrets(
      config as {
        env?: Record<string, string>;
        headers?: Record<string, string>;
        url?: string;
        args?: unknown;
      },
    );
    if (found.length > 0) {
      const what = describeSecrets(found);
      throw new CliError(
        `Refusing to write a secret (${what}) into ${projectConfigPath(world.workdir)}, which is shared with the repository. ` +
          "Write a reference instead, e.g. --env GITHUB_TOKEN='${GITHUB_TOKEN}' or --header 'Authorization: Bearer ${API_TOKEN}', " +
          'and set the variable in your environment; or use --scope user; or pass --allow-secret if this file is private.',
      );
    }
  }
  const file = scopeFile(world, scope);
  try {
    const r = await addServer(file, name, config, { source: scope, overwrite: opts.force === true });
    io.out(
      `${r.replaced ? 'Replaced' : 'Added'} MCP server "${name}" in ${r.file}${r.created ? ' (created)' : ''}.\n`,
    );
    for (const i of r.issues) io.err(`warning: ${i.message}\n`);
  } catch (err) {
    if (isMcpConfigError(err) && err.code === 'SERVER_EXISTS') {
      throw new CliError(`${err.message} Pass --force to replace it.`);
    }
    describeEditError(err);
  }
}

export function registerConfigCommands(mcp: Command, io: Io, globals: () => GlobalOptions): void {
  mcp
    .command('list')
    .description('every configured server, grouped by source, with status, tools and their token cost')
    .option('--json', 'print JSON (see the README for the format)')
    .addHelpText('after', '\nExamples:\n  wave mcp list\n  wave mcp list --json | jq ".servers[].name"')
    .action(async (opts: { json?: boolean }) => {
      const world = await loadWorld(io, globals());
      const views = await viewsOf(world);
      if (opts.json)
        return printJson(io, {
          workdir: world.workdir,
          files: world.files,
          servers: views,
          issues: world.issues,
        });
      io.out(renderList(views, world.issues, world.files, Date.now(), colors(io.color)));
    });

  mcp
    .command('get <name>')
    .description('the full view of one server: where it is defined, what it overrides, its issues')
    .option('--json', 'print JSON')
    .addHelpText('after', examples('wave mcp get memory', 'wave mcp get memory --json | jq .file'))
    .action(async (name: string, opts: { json?: boolean }) => {
      const world = await loadWorld(io, globals());
      const s = findServer(world, name);
      const [view] = await viewsOf({ ...world, servers: [s] });
      if (!view) throw new CliError(`No MCP server named "${name}".`);
      if (opts.json) return printJson(io, view);
      io.out(renderGet(view, Date.now(), colors(io.color)));
    });

  mcp
    .command('add <name> [commandOrUrl] [args...]')
    .description('add a server to the user (default) or project config; comments in the file are kept')
    .option('-s, --scope <scope>', 'user (~/.wave/mcp.json) or project (./.mcp.json)', 'user')
    .option('-t, --transport <type>', 'stdio, http or sse')
    .option('--url <url>', 'a remote server (Streamable HTTP unless --transport sse)')
    .option('-e, --env <K=V>', 'environment variable for a stdio server (repeatable)', collect)
    .option('-H, --header <K:V>', 'HTTP header for a remote server (repeatable)', collect)
    .option('--force', 'replace a server of the same name')
    .option('--allow-secret', 'allow a literal secret in a project file')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  wave mcp add memory -- npx -y @modelcontextprotocol/server-memory',
        '  wave mcp add --scope project fs -- npx -y @modelcontextprotocol/server-filesystem .',
        "  wave mcp add github --url https://api.example.com/mcp -H 'Authorization: Bearer ${GITHUB_TOKEN}'",
        '  wave mcp add -t sse legacy https://example.com/sse',
      ].join('\n'),
    )
    .action(
      async (
        name: string,
        commandOrUrl: string | undefined,
        args: string[],
        opts: {
          scope?: string;
          transport?: string;
          url?: string;
          env?: string[];
          header?: string[];
          force?: boolean;
          allowSecret?: boolean;
        },
      ) => {
        const transport = opts.transport;
        if (transport !== undefined && !['stdio', 'http', 'sse'].includes(transport)) {
          throw new CliError(`--transport must be stdio, http or sse, not ${JSON.stringify(transport)}.`, 2);
        }
        const looksLikeUrl = commandOrUrl !== undefined && /^https?:\/\//i.test(commandOrUrl);
        const url = opts.url ?? (transport !== 'stdio' && looksLikeUrl ? commandOrUrl : undefined);
        const config: Record<string, unknown> = {};
        if (url !== undefined) {
          if (opts.url !== undefined && commandOrUrl !== undefined) {
            throw new CliError('Give either --url <url> or a command, not both.', 2);
          }
          if (transport === 'stdio') throw new CliError('A URL cannot use --transport stdio.', 2);
          config.type = transport ?? 'http';
          config.url = url;
          const headers = parsePairs(opts.header, ':', '--header');
          if (headers) config.headers = headers;
          if (opts.env)
            throw new CliError('--env applies to stdio servers; a remote server takes --header.', 2);
        } else {
          if (commandOrUrl === undefined) {
            throw new CliError(
              'Give the command after "--" (wave mcp add name -- cmd args) or --url <url>.',
              2,
            );
          }
          if (transport !== undefined && transport !== 'stdio') {
            throw new CliError(`--transport ${transport} needs a URL (--url).`, 2);
          }
          config.command = commandOrUrl;
          if (args.length > 0) config.args = args;
          const env = parsePairs(opts.env, '=', '--env');
          if (env) config.env = env;
          if (opts.header)
            throw new CliError('--header applies to remote servers; a stdio server takes --env.', 2);
        }
        await writeServer(io, resolvePaths(io, globals()), name, config, opts);
      },
    );

  mcp
    .command('add-json <name> <json>')
    .description('add a server from its JSON definition, as written in .mcp.json')
    .option('-s, --scope <scope>', 'user or project', 'user')
    .option('--force', 'replace a server of the same name')
    .option('--allow-secret', 'allow a literal secret in a project file')
    .addHelpText(
      'after',
      '\nExample:\n  wave mcp add-json weather \'{"command":"node","args":["weather.js"]}\'',
    )
    .action(
      async (
        name: string,
        json: string,
        opts: { scope?: string; force?: boolean; allowSecret?: boolean },
      ) => {
        let config: unknown;
        try {
          config = JSON.parse(json);
        } catch (err) {
          throw new CliError(`The definition is not valid JSON (${(err as Error).message}).`, 2);
        }
        if (typeof config !== 'object' || config === null || Array.isArray(config)) {
          throw new CliError(
            'The definition must be a JSON object like {"command": "..."} or {"url": "..."}.',
            2,
          );
        }
        await writeServer(io, resolvePaths(io, globals()), name, config as Record<string, unknown>, opts);
      },
    );

  mcp
    .command('remove <name>')
    .description('remove a server from the user or project config (asks first)')
    .option('-s, --scope <scope>', 'user or project (needed when both define it)')
    .option('-y, --yes', 'do not ask')
    .addHelpText('after', examples('wave mcp remove memory', 'wave mcp remove --scope project docs --yes'))
    .action(async (name: string, opts: { scope?: string; yes?: boolean }) => {
      const world = await loadWorld(io, globals());
      const scope = parseScope(opts.scope);
      const s = findServer(world, name, scope);
      if (s.source === 'plugin') {
        throw new CliError(
          `"${name}" comes from the plugin "${s.plugin}" and cannot be removed here; remove the plugin (wave plugin remove ${s.plugin}) or turn the server off (wave mcp disable ${name}).`,
        );
      }
      if (s.source === 'constructor' || s.file === undefined)
        throw new CliError(`"${name}" is not defined in a file.`);
      const inBoth =
        scope === undefined && (s.shadowed ?? []).some((d) => d.source === 'user' || d.source === 'project');
      if (inBoth) {
        throw new CliError(
          `"${name}" is defined in more than one file; pass --scope user or --scope project.`,
          2,
        );
      }
      await confirmOrRefuse(
        io,
        `Remove MCP server "${name}" from ${s.file}?`,
        opts.yes,
        'Pass --yes to remove it.',
      );
      try {
        const r = await removeServer(s.file, name, { source: s.source === 'project' ? 'project' : 'user' });
        io.out(`Removed MCP server "${name}" from ${r.file}.\n`);
      } catch (err) {
        describeEditError(err);
      }
    });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    mcp
      .command(`${verb} <name>`)
      .description(
        `turn a server ${disabled ? 'off' : 'back on'} on this machine (kept in the wave home, never in a shared file)`,
      )
      .option('-s, --scope <scope>', 'user or project, when both define the name')
      .addHelpText('after', examples(`wave mcp ${verb} memory`, `wave mcp ${verb} --scope project docs`))
      .action(async (name: string, opts: { scope?: string }) => {
        const world = await loadWorld(io, globals());
        const s = findServer(world, name, parseScope(opts.scope));
        await setServerDisabled(world.home, s, disabled);
        io.out(
          `MCP server "${name}" (${s.source}) is ${disabled ? 'disabled' : 'enabled'} on this machine.\n`,
        );
      });
  }

  mcp
    .command('trust <name>')
    .description('allow a project or plugin server to run on this machine, as it is configured now')
    .addHelpText('after', examples('wave mcp trust docs', 'wave mcp get docs   # see what it runs first'))
    .action(async (name: string) => {
      const world = await loadWorld(io, globals());
      const s = findServer(world, name);
      if (s.source !== 'project' && s.source !== 'plugin') {
        io.out(`"${name}" is a ${s.source} server; it needs no trust.\n`);
        return;
      }
      await trustServer(world.home, s);
      io.out(`Trusted "${name}" (${s.source}) as configured now; a changed command or URL asks again.\n`);
    });
}

/** What `wave plugin add` copies at most. */
const MAX_PLUGIN_ENTRIES = 20_000;
const MAX_PLUGIN_BYTES = 512 * 1024 * 1024;

/**
 * Refuse a plugin folder that cannot be copied safely: special files (FIFOs,
 * sockets, devices), symbolic links that lead outside the folder (a plugin
 * would carry a link to /etc or the home folder), or more than
 * {@link MAX_PLUGIN_ENTRIES} entries / {@link MAX_PLUGIN_BYTES} bytes.
 * Nothing is read but the tree's metadata.
 */
async function checkPluginTree(root: string): Promise<void> {
  let entries = 0;
  let bytes = 0;
  const inside = (p: string) => {
    const rel = relative(root, p);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (++entries > MAX_PLUGIN_ENTRIES)
        throw new CliError(`${root} has more than ${MAX_PLUGIN_ENTRIES} files; not installed.`);
      if (e.isSymbolicLink()) {
        const to = resolve(dirname(p), await readlink(p));
        if (!inside(to))
          throw new CliError(
            `${p} is a link to ${to}, outside the plugin folder; not installed. Replace the link by the file it points to.`,
          );
      } else if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        bytes += (await lstat(p)).size;
        if (bytes > MAX_PLUGIN_BYTES)
          throw new CliError(`${root} holds more than ${MAX_PLUGIN_BYTES / 1024 / 1024} MiB; not installed.`);
      } else throw new CliError(`${p} is not a regular file, folder or link; not installed.`);
    }
  };
  await walk(root);
}

export function registerPluginCommands(program: Command, io: Io, globals: () => GlobalOptions): void {
  const plugin = program
    .command('plugin')
    .description('installed plugins (their MCP servers are read-only)')
    .addHelpText(
      'after',
      examples('wave plugin add ./my-plugin', 'wave plugin list', 'wave plugin remove my-plugin'),
    );
  plugin
    .command('list')
    .description('installed plugins and their MCP servers')
    .option('--json', 'print JSON')
    .addHelpText('after', examples('wave plugin list', 'wave plugin list --json'))
    .action(async (opts: { json?: boolean }) => {
      const world = await loadWorld(io, globals());
      const rows = world.plugins.map((p) => ({
        name: p.name,
        version: p.version,
        description: p.description,
        root: p.root,
        servers: Object.keys(p.mcpServers),
      }));
      const issues = world.issues.filter((i) => i.code === 'PLUGIN_INVALID' || i.source === 'plugin');
      if (opts.json) return printJson(io, { plugins: rows, issues });
      if (rows.length === 0)
        io.out(`No plugins are installed (${pluginsDir(world.home)}). Add one: wave plugin add <dir>\n`);
      for (const r of rows) {
        io.out(`${r.name}${r.version ? ` ${oneLine(r.version)}` : ''}  ${r.root}\n`);
        if (r.description) io.out(`  ${oneLine(r.description)}\n`);
        io.out(`  MCP servers: ${r.servers.length ? r.servers.map(oneLine).join(', ') : 'none'}\n`);
      }
      for (const i of issues) io.err(`${i.severity}: ${i.message}\n`);
    });

  plugin
    .command('add <dir>')
    .description('install a local plugin folder (copied into the wave home after it is validated)')
    .option('--force', 'replace an installed plugin of the same name')
    .addHelpText('after', examples('wave plugin add ./my-plugin', 'wave plugin add ./my-plugin --force'))
    .action(async (dir: string, opts: { force?: boolean }) => {
      const { home } = resolvePaths(io, globals());
      const src = resolve(io.cwd, dir);
      const st = await stat(src).catch(() => undefined);
      if (!st?.isDirectory()) throw new CliError(`${src} is not a folder.`);
      const fromPlugins = relative(src, pluginsDir(home));
      if (fromPlugins === '' || (!fromPlugins.startsWith('..') && !isAbsolute(fromPlugins)))
        throw new CliError(
          `${src} holds the plugins folder ${pluginsDir(home)} itself; give a plugin's own folder.`,
        );
      await checkPluginTree(src);
      const { plugin: p, issues } = await readPlugin(src, basename(src));
      if (!p) {
        const why = issues[0]?.message ?? 'it has no plugin.json, .claude-plugin/plugin.json or .mcp.json';
        throw new CliError(`${src} is not a valid plugin: ${why}`);
      }
      const errs = issues.filter((i) => i.severity === 'error');
      if (errs.length > 0) throw new CliError(`${src} is not a valid plugin: ${errs[0]?.message}`);
      const dest = join(pluginsDir(home), p.name);
      const exists = Boolean(await lstat(dest).catch(() => undefined));
      if (exists && !opts.force)
        throw new CliError(`A plugin named "${p.name}" is installed (${dest}). Pass --force to replace it.`);
      // Copy into a hidden temp folder beside it (skipped by discovery), then swap it in:
      // a failed copy leaves neither a half-installed plugin nor a lost old one.
      const tmp = join(pluginsDir(home), `.${p.name}.${randomBytes(4).toString('hex')}.tmp`);
      const old = `${tmp}.old`;
      try {
        await mkdir(pluginsDir(home), { recursive: true });
        await cp(src, tmp, { recursive: true, errorOnExist: true, verbatimSymlinks: true });
        if (exists) await rename(dest, old);
        await rename(tmp, dest);
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        if (exists && !(await lstat(dest).catch(() => undefined))) await rename(old, dest).catch(() => {});
        throw err;
      }
      if (exists) await rm(old, { recursive: true, force: true });
      io.out(
        `Installed plugin "${p.name}" in ${dest}${Object.keys(p.mcpServers).length ? ` (MCP servers: ${Object.keys(p.mcpServers).join(', ')})` : ''}.\n`,
      );
    });

  plugin
    .command('remove <name>')
    .description('uninstall a plugin (asks first)')
    .option('-y, --yes', 'do not ask')
    .addHelpText('after', examples('wave plugin remove my-plugin', 'wave plugin remove my-plugin --yes'))
    .action(async (name: string, opts: { yes?: boolean }) => {
      const world = await loadWorld(io, globals());
      const p = world.plugins.find((x) => x.name === name);
      if (!p) {
        throw new CliError(
          `No plugin named "${name}" is installed.${world.plugins.length ? ` Installed: ${world.plugins.map((x) => x.name).join(', ')}.` : ''}`,
        );
      }
      await confirmOrRefuse(io, `Remove plugin "${name}" (${p.root})?`, opts.yes, 'Pass --yes to remove it.');
      await rm(p.root, { recursive: true, force: true });
      io.out(`Removed plugin "${name}".\n`);
    });
}
