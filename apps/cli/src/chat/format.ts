import type { ContentBlock, McpServerView } from '@wave/agent';

/** Tool arguments on one line, cut to `max` characters. Pure. */
export function formatArgs(args: Record<string, unknown>, max = 100): string {
  const text = JSON.stringify(args) ?? '{}';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A tool result's content as text (images as a short note). Pure. */
export function contentText(content: string | readonly ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : `[image ${b.mimeType}]`)).join('\n');
}

/**
 * The first `maxLines` lines of `text`, each cut to `width` characters, and
 * how many lines were left out. Pure.
 */
export function collapse(text: string, maxLines = 4, width = 110): { lines: string[]; hiddenLines: number } {
  const all = text.replace(/\s+$/, '').split('\n');
  const lines = all.slice(0, maxLines).map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
  return { lines, hiddenLines: Math.max(0, all.length - maxLines) };
}

/** What `/mcp` and the banner say about a server's state. Pure. */
export function statusLabel(v: McpServerView, off: ReadonlyMap<string, string>): string {
  const why = off.get(v.name);
  if (why === 'disabled') return `disabled (wave mcp enable ${v.name})`;
  if (why === 'not trusted') return 'not trusted (choose it to trust it)';
  if (v.manuallyDisconnected && v.status === 'disconnected') return 'disconnected (by you)';
  if (v.status === 'disconnected') return 'not connected yet (dialed on the next message)';
  return v.status;
}

/** The server list of `/mcp`. Pure. */
export function renderServers(views: readonly McpServerView[], off: ReadonlyMap<string, string>): string[] {
  if (views.length === 0) {
    return [
      'No MCP servers are configured.',
      '  Add one: wave mcp add memory -- npx -y @modelcontextprotocol/server-memory',
    ];
  }
  const lines: string[] = [];
  for (const v of views) {
    const tools =
      v.toolCount > 0
        ? `, ${v.toolCount} tool${v.toolCount === 1 ? '' : 's'}${v.fromCache ? ' (cached)' : ''}`
        : '';
    lines.push(`${v.name} (${v.source}): ${statusLabel(v, off)}${tools}`);
    if (v.error && v.status === 'error') lines.push(`    ${v.error.message.split('\n')[0]}`);
  }
  return lines;
}

/** The `/tools` listing. Pure. */
export function renderTools(views: readonly McpServerView[]): string[] {
  const lines: string[] = [];
  for (const v of views) {
    if (v.toolCount === 0) continue;
    const state = v.status === 'connected' ? '' : v.fromCache ? ' (cached; not connected)' : ` (${v.status})`;
    lines.push(`${v.name}${state}`);
    for (const t of v.tools) {
      const d = t.description?.split('\n')[0]?.slice(0, 80);
      lines.push(`  mcp__${v.name}__${t.name}${d ? `  ${d}` : ''}`);
    }
  }
  if (lines.length === 0) lines.push('No tools yet: servers connect on your first message (or with /mcp).');
  return lines;
}

export const CHAT_HELP = [
  'Commands:',
  '  /mcp                 MCP servers: status; connect, disconnect, reconnect, see why one failed',
  '  /mcp connect|disconnect|reconnect <name>',
  '  /tools               the tools the model can use',
  '  /expand              the full output of the last tool call',
  '  /clear               forget the conversation so far',
  '  /exit                leave (Ctrl-D too)',
  'Ctrl-C cancels the running turn; Ctrl-C twice exits.',
];
