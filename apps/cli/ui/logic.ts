/** Pure helpers of the page (no DOM): what a row says, which snapshot wins, the prompts. */
import type { McpSnapshot, UiServer } from '../src/ui/api-types';

export type SourceTab = 'user' | 'project' | 'plugin';

/** Keep the newer snapshot: an older one (lower version) never replaces a newer one. */
export function newerSnapshot(current: McpSnapshot | undefined, next: McpSnapshot): McpSnapshot {
  if (current && next.version <= current.version) return current;
  return next;
}

/** Which servers a source tab lists (host-set servers are listed with the user's). */
export function serversOfTab(servers: readonly UiServer[], tab: SourceTab): UiServer[] {
  return servers.filter((s) =>
    tab === 'user' ? s.source === 'user' || s.source === 'constructor' : s.source === tab,
  );
}

export type PendingAction = 'connect' | 'disconnect' | 'sign-in';

/** The row's action button: its label, whether it is enabled, what it does. */
export function actionButton(
  s: UiServer,
  pending: PendingAction | undefined,
): { label: string; disabled: boolean; action?: PendingAction } | undefined {
  if (pending === 'connect') return { label: 'Connecting...', disabled: true };
  if (pending === 'disconnect') return { label: 'Disconnecting...', disabled: true };
  if (pending === 'sign-in') return { label: 'Signing in...', disabled: true };
  switch (s.status) {
    case 'disabled':
      return undefined;
    case 'connecting':
      return { label: 'Connecting...', disabled: true };
    case 'connected':
    case 'reconnecting':
      return { label: 'Disconnect', disabled: false, action: 'disconnect' };
    case 'error':
      return { label: 'Reconnect', disabled: false, action: 'connect' };
    case 'needs-auth':
      return { label: 'Sign in', disabled: false, action: 'sign-in' };
    default:
      return { label: 'Connect', disabled: false, action: 'connect' };
  }
}

/** The prompt "Add" puts in the input box (nothing is sent). */
export function addPrompt(tab: 'user' | 'project', project: string): string {
  return tab === 'user'
    ? '/settings Help me add a user-level MCP server <name>: connect to <command or URL>, arguments <args>'
    : `/settings Help me add an MCP server to the project "${project}": <name>: connect to <command or URL>, arguments <args>`;
}

/** The prompt "Edit" puts in the input box. */
export function editPrompt(s: UiServer): string {
  return `Help me edit the MCP server "${s.name}": change <what> to <new value>`;
}

/**
 * What "Edit" does: the prompt always; the config file only when the server
 * names its absolute path (a path is never made up here: no `~`, nothing relative).
 */
export function editPlan(s: UiServer): { prompt: string; file?: string } {
  const prompt = editPrompt(s);
  return s.file !== undefined && isAbsolutePath(s.file) ? { prompt, file: s.file } : { prompt };
}

/** POSIX `/x` or Windows `C:\x`, `\\server\share`. */
function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

/** "3 minutes ago". */
export function relativeTime(then: number, now: number): string {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return s <= 1 ? 'just now' : `${s} seconds ago`;
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    const n = Math.floor(s / size);
    if (n >= 1) return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

/** The empty state of a source tab. */
export function emptyText(tab: SourceTab, files: McpSnapshot['files']): string {
  if (tab === 'user')
    return `No user-level MCP servers yet. Click "Add user-level MCP server" and describe it; it is saved in ${files.user} and available in every project.`;
  if (tab === 'project')
    return `No MCP servers in this project yet. Click "Add project-level MCP server" and describe it; it is saved in ${files.project}, shared with the repository.`;
  return 'No installed plugin provides an MCP server. Install a plugin with "wave plugin add <dir>".';
}
