import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { nodeValue, parseConfigText, parseJsoncDocument, stripBom } from './parse';
import type { ConfigIssue, PluginServers } from './types';

/** An installed plugin found under `<home>/plugins/<dir>/`. */
export interface DiscoveredPlugin extends PluginServers {
  /** The plugin's folder name under `<home>/plugins/`. */
  dir: string;
  version?: string;
  description?: string;
  /** The manifest that was read (absolute path), if any. */
  manifest?: string;
}

/** What {@link discoverPlugins} returns. Never throws. */
export interface DiscoverPluginsResult {
  /** Valid plugins, sorted by name. Pass them to `loadMcpConfig({ plugins })`. */
  plugins: DiscoveredPlugin[];
  /** Bad plugins (skipped) and bad `.mcp.json` files inside plugins. */
  issues: ConfigIssue[];
}

/** The folder that holds installed plugins. */
export function pluginsDir(home: string): string {
  return join(home, 'plugins');
}

/** Manifest locations, in the order they are tried (the Claude Code plugin layout first). */
export const PLUGIN_MANIFESTS: readonly string[] = ['.claude-plugin/plugin.json', 'plugin.json'];

/** Plugin names: what a folder may be called and a manifest may declare. */
const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const MAX_PLUGIN_FILE_BYTES = 1024 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function issue(file: string, plugin: string, message: string): ConfigIssue {
  return { severity: 'error', code: 'PLUGIN_INVALID', source: 'plugin', file, plugin, message };
}

/** Read a small regular file; undefined when missing. Throws a message for anything else. */
async function readSmallFile(file: string): Promise<string | undefined> {
  let st: Awaited<ReturnType<typeof fsp.stat>>;
  try {
    st = await fsp.stat(file);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new Error(`${file} cannot be read (${code ?? String(err)})`);
  }
  if (!st.isFile()) throw new Error(`${file} is not a regular file`);
  if (st.size > MAX_PLUGIN_FILE_BYTES)
    throw new Error(`${file} is larger than ${MAX_PLUGIN_FILE_BYTES} bytes`);
  const handle = await fsp.open(file, 'r');
  try {
    const buf = Buffer.alloc(MAX_PLUGIN_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_PLUGIN_FILE_BYTES)
      throw new Error(`${file} is larger than ${MAX_PLUGIN_FILE_BYTES} bytes`);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Read one plugin folder (`root`). The manifest (`.claude-plugin/plugin.json`
 * or `plugin.json`) gives name, version and description; MCP servers come from
 * the manifest's `mcpServers` object, else from `.mcp.json` at the plugin root.
 * A folder with neither a manifest nor a `.mcp.json` is not a plugin.
 */
export async function readPlugin(
  root: string,
  dir: string,
): Promise<{ plugin?: DiscoveredPlugin; issues: ConfigIssue[] }> {
  const issues: ConfigIssue[] = [];
  let manifestFile: string | undefined;
  let manifest: Record<string, unknown> = {};
  try {
    for (const rel of PLUGIN_MANIFESTS) {
      const file = join(root, rel);
      const text = await readSmallFile(file);
      if (text === undefined) continue;
      // Through the parse tree: a "__proto__" key stays data (never a prototype), nesting is bounded.
      const doc = parseJsoncDocument(stripBom(text));
      const value: unknown = doc.error ? undefined : nodeValue(doc.root);
      if (doc.error || !isRecord(value)) {
        const why = doc.error ? doc.error.message : 'not a JSON object';
        return {
          issues: [issue(file, dir, `Plugin "${dir}" is skipped: its manifest ${file} is invalid (${why}).`)],
        };
      }
      manifestFile = file;
      manifest = value;
      break;
    }
    const name = typeof manifest.name === 'string' ? manifest.name : dir;
    if (!PLUGIN_NAME.test(name)) {
      return {
        issues: [
          issue(
            manifestFile ?? root,
            dir,
            `Plugin in ${root} is skipped: its name ${JSON.stringify(name.slice(0, 80))} must be 1-64 letters, digits, ".", "_" or "-".`,
          ),
        ],
      };
    }
    let servers: Record<string, unknown> | undefined;
    if (isRecord(manifest.mcpServers)) servers = manifest.mcpServers;
    else {
      const file = join(root, '.mcp.json');
      const text = await readSmallFile(file);
      if (text !== undefined) {
        const parsed = parseConfigText(text, file, 'plugin');
        issues.push(...parsed.issues.map((i) => ({ ...i, plugin: name })));
        servers = parsed.ok ? parsed.servers : {};
      }
    }
    if (manifestFile === undefined && servers === undefined) return { issues };
    const plugin: DiscoveredPlugin = { name, dir, root, mcpServers: servers ?? {} };
    if (typeof manifest.version === 'string') plugin.version = manifest.version;
    if (typeof manifest.description === 'string') plugin.description = manifest.description;
    if (manifestFile !== undefined) plugin.manifest = manifestFile;
    return { plugin, issues };
  } catch (err) {
    return {
      issues: [
        issue(root, dir, `Plugin "${dir}" is skipped: ${err instanceof Error ? err.message : String(err)}.`),
      ],
    };
  }
}

/**
 * Find the installed plugins under `<home>/plugins/<dir>/`, in the Claude
 * Code plugin layout, so existing plugins work unchanged. A bad plugin is
 * reported as an issue and skipped; two plugins with the same name keep the
 * first by folder name. Never throws; a missing folder means no plugins.
 */
export async function discoverPlugins(opts: { home: string }): Promise<DiscoverPluginsResult> {
  const base = pluginsDir(opts.home);
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fsp.readdir(base, { withFileTypes: true });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { plugins: [], issues: [] };
    return {
      plugins: [],
      issues: [
        {
          severity: 'error',
          code: 'PLUGIN_INVALID',
          source: 'plugin',
          file: base,
          message: `The plugins folder ${base} cannot be read (${code ?? String(err)}); no plugin is loaded.`,
        },
      ],
    };
  }
  const dirs = entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  const results = await Promise.all(dirs.map((dir) => readPlugin(join(base, dir), dir)));
  const plugins: DiscoveredPlugin[] = [];
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const r of results) {
    issues.push(...r.issues);
    if (!r.plugin) continue;
    if (seen.has(r.plugin.name)) {
      issues.push(
        issue(
          r.plugin.root,
          r.plugin.name,
          `Plugin "${r.plugin.name}" in ${r.plugin.root} is skipped: another installed plugin has the same name.`,
        ),
      );
      continue;
    }
    seen.add(r.plugin.name);
    plugins.push(r.plugin);
  }
  plugins.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { plugins, issues };
}
