import type { ToolSnapshot } from '@wave/mcp-cache';
import {
  type ConfigIssue,
  displayServer,
  isLocallyDisabled,
  isServerTrusted,
  type LocalState,
  type ResolvedServer,
  type ShadowedDefinition,
} from '@wave/mcp-config';
import { maskArgs } from './secrets';

/** A tool as the CLI shows it. */
export interface ToolView {
  name: string;
  description?: string;
  /** What declaring it costs a model, in tokens (characters / 4). */
  tokens: number;
}

/**
 * One configured server as `wave mcp list --json` / `get --json` print it.
 * Stable: fields are only ever added.
 */
export interface ServerView {
  name: string;
  source: ResolvedServer['source'];
  /** Absolute path of the file that defines it (user / project), if any. */
  file?: string;
  plugin?: string;
  transport: string;
  command?: string;
  args?: string[];
  /** The URL as written, secrets masked. */
  url?: string;
  /** Environment variable names and masked values. */
  env?: Record<string, string>;
  headers?: Record<string, string>;
  /** `connected`, `error`, ... when this process dialed it; else `disabled` or `not connected`. */
  status: string;
  /** Why it is disabled: the local switch (`wave mcp disable`) or `"disabled": true` in the file. */
  disabledBy?: 'local' | 'config';
  connectable: boolean;
  /** Project and plugin servers need trust on this machine before they run. */
  trusted: boolean;
  /** Tool count and declaration cost: live when connected, else from the snapshot cache. */
  tools?: {
    count: number;
    tokens: number;
    /** From the snapshot cache of an earlier connection, not live. */
    cached: boolean;
    lastConnectedAt?: number;
    list: ToolView[];
  };
  error?: string;
  /** Lower-precedence definitions of the same name that this one overrides. */
  overrides: ShadowedDefinition[];
  issues: ConfigIssue[];
}

/** Token estimate of one tool declaration (name, description, schema), characters / 4. Pure. */
export function toolTokens(tool: { name: string; description?: string; inputSchema?: unknown }): number {
  const text = JSON.stringify({
    name: tool.name,
    description: tool.description ?? '',
    input_schema: tool.inputSchema ?? {},
  });
  return Math.ceil(text.length / 4);
}

export function toolViews(
  tools: readonly { name: string; description?: string; inputSchema?: unknown }[],
): ToolView[] {
  return tools.map((t) => {
    const v: ToolView = { name: t.name, tokens: toolTokens(t) };
    if (t.description !== undefined) v.description = t.description;
    return v;
  });
}

/** Is this server turned off, and by whom? Pure. */
export function disabledBy(server: ResolvedServer, local: LocalState): 'local' | 'config' | undefined {
  if (isLocallyDisabled(local, server)) return 'local';
  const raw = (server.raw ?? server.config) as { disabled?: unknown };
  if (raw.disabled === true || (server as { disabled?: unknown }).disabled === true) return 'config';
  return undefined;
}

/** Live facts about a server this process dialed. */
export interface LiveState {
  status: string;
  error?: string;
  tools?: readonly { name: string; description?: string; inputSchema?: unknown }[];
  lastConnectedAt?: number;
}

/** Build the view of one server. Pure. */
export function serverView(
  server: ResolvedServer,
  local: LocalState,
  cached: ToolSnapshot | undefined,
  live?: LiveState,
): ServerView {
  const d = displayServer(server);
  const off = disabledBy(server, local);
  const v: ServerView = {
    name: server.name,
    source: server.source,
    transport: server.transport,
    status: off ? 'disabled' : (live?.status ?? 'not connected'),
    connectable: d.connectable && !off,
    trusted: isServerTrusted(local, server),
    overrides: d.shadowed,
    issues: d.issues,
  };
  if (off) v.disabledBy = off;
  if (d.file !== undefined) v.file = d.file;
  if (d.plugin !== undefined) v.plugin = d.plugin;
  if (d.command !== undefined) v.command = d.command;
  if (d.args !== undefined) v.args = maskArgs(d.args);
  if (d.url !== undefined) v.url = d.url;
  if (d.env !== undefined) v.env = d.env;
  if (d.headers !== undefined) v.headers = d.headers;
  if (live?.error !== undefined) v.error = live.error;
  const liveTools = live?.status === 'connected' ? live.tools : undefined;
  if (liveTools) {
    const list = toolViews(liveTools);
    v.tools = { count: list.length, tokens: sum(list), cached: false, list };
    if (live?.lastConnectedAt !== undefined) v.tools.lastConnectedAt = live.lastConnectedAt;
  } else if (cached) {
    const list = toolViews(cached.tools);
    v.tools = {
      count: list.length,
      tokens: sum(list),
      cached: true,
      lastConnectedAt: cached.lastConnectedAt,
      list,
    };
  }
  return v;
}

function sum(list: readonly ToolView[]): number {
  return list.reduce((n, t) => n + t.tokens, 0);
}

/** "3 minutes ago". Pure. */
export function relativeTime(then: number, now: number): string {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return s <= 1 ? 'just now' : `${s} seconds ago`;
  const units: [number, string][] = [
    [60, 'minute'],
    [3600, 'hour'],
    [86_400, 'day'],
  ];
  let out = '';
  for (const [size, unit] of units) {
    const n = Math.floor(s / size);
    if (n >= 1) out = `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return out;
}
