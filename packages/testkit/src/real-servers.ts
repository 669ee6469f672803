import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { TestkitError } from './errors';
import type { StdioServerSpec } from './fixtures';

/** The reference servers from npm installed beside testkit. */
export type RealServerName = 'everything' | 'memory' | 'filesystem';

/** Options of {@link realServer}. */
export interface RealServerOptions {
  /** Extra environment for the server. @default {} */
  env?: Record<string, string>;
  /** memory: the JSONL file it keeps its graph in (required, put it in a temp dir). */
  memoryFilePath?: string;
  /** filesystem: directories it may access (required, at least one). */
  allowedDirs?: string[];
}

const PACKAGES: Record<RealServerName, string> = {
  everything: '@modelcontextprotocol/server-everything',
  memory: '@modelcontextprotocol/server-memory',
  filesystem: '@modelcontextprotocol/server-filesystem',
};

function entryFile(pkg: string): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  return join(dirname(manifestPath), bin ?? 'dist/index.js');
}

/**
 * How to start one of the real npm MCP servers over stdio, resolving its
 * installed entry file (no npx, no network): `{ command: node, args: [entry, ...], env }`.
 * `memory` needs `memoryFilePath` and `filesystem` needs `allowedDirs`, so a
 * test never writes into node_modules or exposes the real home.
 */
export function realServer(name: RealServerName, options: RealServerOptions = {}): StdioServerSpec {
  const pkg = PACKAGES[name];
  if (pkg === undefined) {
    throw new TestkitError(
      'UNKNOWN_REAL_SERVER',
      `unknown real server "${String(name)}"; use everything, memory or filesystem`,
    );
  }
  const env: Record<string, string> = { ...options.env };
  const args = [entryFile(pkg)];
  if (name === 'memory') {
    if (!options.memoryFilePath) {
      throw new TestkitError(
        'MISSING_OPTION',
        'realServer("memory") needs memoryFilePath: a file in a temp dir (see makeTempDir), so the server does not write into node_modules',
      );
    }
    env.MEMORY_FILE_PATH = options.memoryFilePath;
  }
  if (name === 'filesystem') {
    if (!options.allowedDirs || options.allowedDirs.length === 0) {
      throw new TestkitError(
        'MISSING_OPTION',
        'realServer("filesystem") needs allowedDirs: at least one directory, e.g. a temp dir from makeTempDir',
      );
    }
    args.push(...options.allowedDirs);
  }
  return { command: process.execPath, args, env };
}
