import { resolve } from 'node:path';
import { McpConfigError } from './errors';
import { type ConfigFs, errnoCode, isPermissionCode, nodeConfigFs } from './fs';
import { MAX_CONFIG_FILE_BYTES } from './limits';
import { mergeSources } from './merge';
import { parseConfigText } from './parse';
import { projectConfigPath, resolveHome, userConfigPath } from './paths';
import type { ConfigIssue, ConfigSource, Env, MergeResult, PluginServers, SourceLayer } from './types';
import { makeIssue } from './validate';

export { MAX_CONFIG_FILE_BYTES };

/** Options of {@link loadMcpConfig}. */
export interface LoadMcpConfigOptions {
  /** The agent's working directory; `<workdir>/.mcp.json` is the project source. Made absolute. */
  workdir: string;
  /** Wave home; `<home>/mcp.json` is the user source. @default $WAVE_HOME, else ~/.wave */
  home?: string;
  /** Environment for `${VAR}` expansion and `WAVE_HOME`. @default process.env */
  env?: Env;
  /** `mcpServers` given to `Agent.create()`: the highest-precedence source. */
  constructorServers?: Readonly<Record<string, unknown>>;
  /** Servers contributed by plugins: the lowest-precedence source (earlier plugin wins a clash). */
  plugins?: readonly PluginServers[];
  /** @default 32 */
  maxServers?: number;
  /** File-system adapter (tests inject failures). @default nodeConfigFs */
  fs?: ConfigFs;
}

/** What {@link loadMcpConfig} returns. */
export interface LoadMcpConfigResult extends MergeResult {
  /** The two files that were looked at (whether or not they exist). */
  files: { user: string; project: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Read one config file into a layer. A missing file is silent; an unreadable
 * or malformed one is an issue and contributes no server. Never throws.
 */
export async function readConfigLayer(
  fs: ConfigFs,
  file: string,
  source: ConfigSource,
): Promise<{ layer?: SourceLayer; issues: ConfigIssue[] }> {
  const ctx = { source, file };
  const fail = (code: 'CONFIG_PERMISSION' | 'CONFIG_IO', message: string) => ({
    issues: [makeIssue(ctx, 'error', code, message)],
  });
  let text: string;
  try {
    const st = await fs.stat(file);
    if (st.isDirectory()) {
      return fail('CONFIG_IO', `${file} is a directory, not a file; its servers are not loaded.`);
    }
    if (!st.isFile()) {
      return fail(
        'CONFIG_IO',
        `${file} is not a regular file (a pipe, device or socket); its servers are not loaded.`,
      );
    }
    // The size cap is enforced while reading: the file may grow after stat.
    text = await fs.readFile(file, { maxBytes: MAX_CONFIG_FILE_BYTES });
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { issues: [] };
    if (code === 'EWAVENOTFILE') {
      return fail(
        'CONFIG_IO',
        `${file} is not a regular file (a pipe, device or socket); its servers are not loaded.`,
      );
    }
    if (code === 'EFBIG') {
      return fail(
        'CONFIG_IO',
        `${file} is larger than the ${MAX_CONFIG_FILE_BYTES} bytes a config file may have; it is not read.`,
      );
    }
    if (isPermissionCode(code)) {
      return fail(
        'CONFIG_PERMISSION',
        `${file} cannot be read (${code}: permission denied); its servers are not loaded. Fix the file's permissions.`,
      );
    }
    return fail(
      'CONFIG_IO',
      `${file} cannot be read (${code ?? (err instanceof Error ? err.message : String(err))}); its servers are not loaded.`,
    );
  }
  const parsed = parseConfigText(text, file, source);
  if (!parsed.ok) return { issues: parsed.issues };
  return { layer: { source, file, servers: parsed.servers, issues: parsed.issues }, issues: [] };
}

/**
 * Load the MCP configuration of one workdir from every source: constructor
 * servers, `<workdir>/.mcp.json`, `<home>/mcp.json` and plugins; validate,
 * expand and merge them ({@link mergeSources}).
 *
 * Bad input never rejects: a missing file is skipped silently, an unreadable
 * or malformed file is an issue and the other sources load, a bad server is
 * an issue and the others load. It rejects only on programmer error (no
 * `workdir`). Reads two files; spawns and dials nothing.
 */
export async function loadMcpConfig(options: LoadMcpConfigOptions): Promise<LoadMcpConfigResult> {
  if (typeof options?.workdir !== 'string' || options.workdir === '') {
    throw new McpConfigError(
      'INVALID_OPTIONS',
      'loadMcpConfig: options.workdir must be a non-empty path, e.g. loadMcpConfig({ workdir: process.cwd() })',
    );
  }
  if (options.plugins !== undefined && !Array.isArray(options.plugins)) {
    throw new McpConfigError(
      'INVALID_OPTIONS',
      'loadMcpConfig: options.plugins must be an array (the `plugins` of discoverPlugins()), or left out',
    );
  }
  const env = options.env ?? process.env;
  const fs = options.fs ?? nodeConfigFs;
  const workdir = resolve(options.workdir);
  const home = resolveHome({ ...(options.home !== undefined ? { home: options.home } : {}), env });
  const files = { user: userConfigPath(home), project: projectConfigPath(workdir) };

  const layers: SourceLayer[] = [];
  const pluginIssue = (ctx: { source: 'plugin'; plugin: string }, message: string) =>
    layers.push({ ...ctx, servers: {}, issues: [makeIssue(ctx, 'error', 'PLUGIN_INVALID', message)] });

  if (options.constructorServers !== undefined) {
    if (isRecord(options.constructorServers)) {
      layers.push({ source: 'constructor', servers: options.constructorServers });
    } else {
      layers.push({
        source: 'constructor',
        servers: {},
        issues: [
          makeIssue(
            { source: 'constructor' },
            'error',
            'CONFIG_MALFORMED',
            'The mcpServers option must be an object of name -> server; it is ignored.',
          ),
        ],
      });
    }
  }

  const [project, user] = await Promise.all([
    readConfigLayer(fs, files.project, 'project'),
    readConfigLayer(fs, files.user, 'user'),
  ]);
  for (const [read, source, file] of [
    [project, 'project', files.project],
    [user, 'user', files.user],
  ] as const) {
    layers.push(read.layer ?? { source, file, servers: {}, issues: read.issues });
  }

  for (const [index, plugin] of (options.plugins ?? []).entries()) {
    const name =
      isRecord(plugin) && typeof plugin.name === 'string' && plugin.name !== '' ? plugin.name : `#${index}`;
    const ctx = { source: 'plugin' as const, plugin: name };
    if (!isRecord(plugin) || typeof plugin.name !== 'string' || plugin.name === '') {
      pluginIssue(ctx, `Plugin ${name} has no name; its servers are skipped.`);
      continue;
    }
    if (typeof plugin.root !== 'string' || plugin.root === '') {
      pluginIssue(ctx, `Plugin "${name}" has no root directory; its servers are skipped.`);
      continue;
    }
    if (!isRecord(plugin.mcpServers)) {
      pluginIssue(
        ctx,
        `Plugin "${name}": mcpServers must be an object of name -> server; its servers are skipped.`,
      );
      continue;
    }
    layers.push({
      source: 'plugin',
      plugin: name,
      pluginRoot: resolve(plugin.root),
      servers: plugin.mcpServers,
    });
  }

  const merged = mergeSources(layers, {
    env,
    workdir,
    ...(options.maxServers !== undefined ? { maxServers: options.maxServers } : {}),
  });
  return { servers: merged.servers, issues: merged.issues, files };
}
