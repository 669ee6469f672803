import {
  isServerTrusted,
  maskArgs,
  maskUrl,
  type ResolvedServer,
  referencedVariables,
  trustServer,
} from '@wave/mcp-config';
import type { McpPool } from '@wave/mcp-pool';
import type { World } from './context';
import { CliError, oneLine } from './io';
import { isSecretName } from './secrets';
import { disabledBy } from './views';

/** What a trust prompt shows: what would run, and which secrets it would receive. Pure. */
export function trustSummary(s: ResolvedServer): string {
  const raw = s.raw ?? s.config;
  const lines: string[] = [];
  const where = s.source === 'plugin' ? `plugin "${s.plugin}"` : (s.file ?? s.source);
  lines.push(`The ${s.source} server "${s.name}" (from ${where}) has not run on this machine yet.`);
  if (raw.url !== undefined) lines.push(`  It connects to: ${oneLine(s.displayUrl ?? maskUrl(raw.url))}`);
  else lines.push(`  It runs: ${[raw.command ?? '', ...maskArgs(raw.args ?? [])].map(oneLine).join(' ')}`);
  if (raw.cwd !== undefined) lines.push(`  In the folder: ${oneLine(raw.cwd)}`);
  const env = Object.keys(raw.env ?? {});
  if (env.length > 0) lines.push(`  It receives the environment variables: ${env.join(', ')}`);
  const headers = Object.keys(raw.headers ?? {}).filter((h) => isSecretName(h));
  if (headers.length > 0) lines.push(`  It receives the credential headers: ${headers.join(', ')}`);
  const vars = new Set<string>();
  const fields = [
    raw.command,
    ...(raw.args ?? []),
    raw.cwd,
    raw.url,
    ...Object.values(raw.headers ?? {}),
    ...Object.values(raw.env ?? {}),
  ];
  for (const v of fields) {
    if (typeof v === 'string') for (const name of referencedVariables(v)) vars.add(name);
  }
  if (vars.size > 0) lines.push(`  Values taken from your environment: ${[...vars].join(', ')}`);
  return lines.join('\n');
}

/**
 * Make sure a project or plugin server may run here: trusted already (bound
 * to its fingerprint), `--trust` given (trusted now), or asked on a terminal.
 * Refuses with a hint otherwise.
 */
export async function ensureTrusted(
  world: World,
  s: ResolvedServer,
  opts: { trust?: boolean },
): Promise<void> {
  if (isServerTrusted(world.local, s)) return;
  const io = world.io;
  if (!opts.trust) {
    if (!io.interactive) {
      throw new CliError(
        `${trustSummary(s)}\nNot started: run it once with --trust, or trust it with: wave mcp trust ${s.name}`,
      );
    }
    io.err(`${trustSummary(s)}\n`);
    const { confirm, isCancel } = await import('@clack/prompts');
    const answer = await confirm({ message: `Trust and start "${s.name}"?`, initialValue: false });
    if (isCancel(answer) || answer !== true) throw new CliError(`Not started: "${s.name}" is not trusted.`);
  }
  world.local = await trustServer(world.home, s);
}

/** Refuse a disabled server with what to do. */
export function ensureEnabled(world: World, s: ResolvedServer): void {
  const by = disabledBy(s, world.local);
  if (by === 'local')
    throw new CliError(`"${s.name}" is disabled on this machine; turn it on with: wave mcp enable ${s.name}`);
  if (by === 'config')
    throw new CliError(`"${s.name}" is disabled in ${s.file ?? 'its config'} ("disabled": true).`);
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const EXIT_ON_SIGNAL: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/**
 * A pool for this command. On Ctrl-C, SIGTERM or SIGHUP it is destroyed (every
 * process tree killed) before the process exits with 130 / 143 / 129.
 */
export async function commandPool(
  servers: ResolvedServer[],
  opts: { connectMs?: number } = {},
): Promise<{ pool: McpPool; close(): Promise<void> }> {
  // Loaded on demand: commands that dial nothing start faster without the MCP SDK.
  const { McpPool } = await import('@wave/mcp-pool');
  const pool = McpPool.create({
    servers,
    clientInfo: { name: 'wave', version: '0.0.0' },
    ...(opts.connectMs !== undefined ? { timeouts: { connectMs: opts.connectMs } } : {}),
  });
  // Kept until every server is stopped: a second Ctrl-C (or a SIGTERM, or the terminal closing)
  // while they are being stopped must not kill wave and orphan a server that ignores SIGTERM.
  let exiting = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (exiting) return;
    exiting = true;
    void pool.destroy().finally(() => process.exit(EXIT_ON_SIGNAL[signal] ?? 1));
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    pool,
    async close() {
      try {
        await pool.destroy();
      } finally {
        // After a signal, the handlers stay until its process.exit: a second signal in between
        // must not kill wave by default (and orphan a server that ignores SIGTERM).
        if (!exiting) for (const signal of SIGNALS) process.off(signal, onSignal);
      }
    },
  };
}
