import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createToolCache, type ToolCache } from '@wave/mcp-cache';
import {
  type ConfigIssue,
  type DiscoveredPlugin,
  discoverPlugins,
  type LocalState,
  loadMcpConfig,
  type ResolvedServer,
  readLocalState,
  resolveHome,
} from '@wave/mcp-config';
import { CliError, type Io } from './io';

/** Options every command shares. */
export interface GlobalOptions {
  cwd?: string;
}

/** Everything a command knows about this machine and project, read once. */
export interface World {
  io: Io;
  workdir: string;
  home: string;
  servers: ResolvedServer[];
  issues: ConfigIssue[];
  files: { user: string; project: string };
  plugins: DiscoveredPlugin[];
  local: LocalState;
  cache: ToolCache;
}

export function resolvePaths(io: Io, opts: GlobalOptions): { workdir: string; home: string } {
  const workdir = resolve(io.cwd, opts.cwd ?? '.');
  if (opts.cwd !== undefined && !statSync(workdir, { throwIfNoEntry: false })?.isDirectory())
    throw new CliError(`--cwd ${workdir} is not a folder.`, 2);
  const home = resolveHome({ env: io.env });
  return { workdir, home };
}

/** Read every config source, the installed plugins and the local switches. Starts no process. */
export async function loadWorld(io: Io, opts: GlobalOptions): Promise<World> {
  const { workdir, home } = resolvePaths(io, opts);
  const [found, local] = await Promise.all([discoverPlugins({ home }), readLocalState(home)]);
  const loaded = await loadMcpConfig({ workdir, home, env: io.env, plugins: found.plugins });
  return {
    io,
    workdir,
    home,
    servers: loaded.servers,
    issues: [...found.issues, ...loaded.issues],
    files: loaded.files,
    plugins: found.plugins,
    local,
    cache: createToolCache({ home }),
  };
}
