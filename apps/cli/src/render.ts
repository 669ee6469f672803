import type { ConfigIssue } from '@wave/mcp-config';
import pc from 'picocolors';
import { oneLine } from './io';
import { relativeTime, type ServerView } from './views';

type Colors = ReturnType<typeof pc.createColors>;

export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

const SOURCE_TITLES: [ServerView['source'], string][] = [
  ['user', 'User (~/.wave/mcp.json)'],
  ['project', 'Project (.mcp.json)'],
  ['plugin', 'Plugins (read-only)'],
];

function statusText(v: ServerView, c: Colors): string {
  switch (v.status) {
    case 'connected':
      return c.green('connected');
    case 'error':
      return c.red('error');
    case 'needs-auth':
      return c.yellow('needs-auth');
    case 'disabled':
      return c.dim(
        v.disabledBy === 'local' ? 'disabled (wave mcp enable to turn on)' : 'disabled (in the file)',
      );
    default:
      return c.dim(v.status);
  }
}

function target(v: ServerView): string {
  if (v.url !== undefined) return oneLine(v.url);
  return [v.command ?? '', ...(v.args ?? [])].map(oneLine).join(' ').trim();
}

function toolsText(v: ServerView, now: number): string {
  if (!v.tools) return 'tools unknown (never connected)';
  const base = `${v.tools.count} tool${v.tools.count === 1 ? '' : 's'}, ~${v.tools.tokens} tokens`;
  if (!v.tools.cached) return base;
  const when =
    v.tools.lastConnectedAt === undefined
      ? ''
      : `, last connected ${relativeTime(v.tools.lastConnectedAt, now)}`;
  return `${base} (cached${when})`;
}

/** `wave mcp list` as text. Pure. */
export function renderList(
  views: readonly ServerView[],
  issues: readonly ConfigIssue[],
  files: { user: string; project: string },
  now: number,
  c: Colors,
): string {
  const lines: string[] = [];
  if (views.length === 0) {
    lines.push('No MCP servers are configured.');
    lines.push('');
    lines.push('Add one for yourself (every project):');
    lines.push('  wave mcp add memory -- npx -y @modelcontextprotocol/server-memory');
    lines.push(`Or for this project only (written to ${files.project}, shared with the repository):`);
    lines.push('  wave mcp add --scope project docs --url https://example.com/mcp');
  }
  for (const [source, title] of [...SOURCE_TITLES, ['constructor', 'Host'] as const]) {
    const group = views.filter((v) => v.source === source);
    if (group.length === 0) continue;
    lines.push(c.bold(title));
    for (const v of group) {
      const trust = !v.trusted && v.status !== 'disabled' ? c.yellow('  [not trusted on this machine]') : '';
      lines.push(`  ${c.bold(v.name)}  ${v.transport}  ${statusText(v, c)}${trust}`);
      lines.push(`    ${target(v)}`);
      lines.push(`    ${toolsText(v, now)}`);
      if (v.error !== undefined)
        lines.push(`    ${v.status === 'needs-auth' ? c.yellow(v.error) : c.red(v.error)}`);
      const errors = v.issues.filter((i) => i.severity === 'error');
      for (const i of errors) lines.push(`    ${c.red('!')} ${i.message}`);
    }
    lines.push('');
  }
  const general = issues.filter((i) => i.server === undefined);
  if (general.length > 0) {
    lines.push(c.bold('Config issues'));
    for (const i of general)
      lines.push(`  ${i.severity === 'error' ? c.red('error') : c.yellow('warning')}  ${i.message}`);
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** `wave mcp get` as text. Pure. */
export function renderGet(v: ServerView, now: number, c: Colors): string {
  const lines: string[] = [];
  lines.push(`${c.bold(v.name)}  (${v.source}${v.plugin ? `: plugin ${v.plugin}` : ''})`);
  lines.push(`  status:     ${statusText(v, c)}`);
  if (v.status === 'needs-auth' && v.error !== undefined) lines.push(`  sign in:    ${v.error}`);
  lines.push(`  transport:  ${v.transport}`);
  if (v.command !== undefined) lines.push(`  command:    ${oneLine(v.command)}`);
  if (v.args !== undefined && v.args.length > 0) lines.push(`  args:       ${v.args.map(oneLine).join(' ')}`);
  if (v.url !== undefined) lines.push(`  url:        ${oneLine(v.url)}`);
  for (const [k, val] of Object.entries(v.env ?? {}))
    lines.push(`  env:        ${oneLine(k)}=${oneLine(val)}`);
  for (const [k, val] of Object.entries(v.headers ?? {}))
    lines.push(`  header:     ${oneLine(k)}: ${oneLine(val)}`);
  if (v.file !== undefined) lines.push(`  file:       ${v.file}`);
  lines.push(
    `  trusted:    ${v.trusted ? 'yes' : 'no (asked before the first connection; wave mcp trust to allow)'}`,
  );
  lines.push(`  tools:      ${toolsText(v, now)}`);
  for (const t of v.tools?.list ?? []) lines.push(`    - ${oneLine(t.name)} (~${t.tokens} tokens)`);
  for (const o of v.overrides) {
    lines.push(
      `  overrides:  the ${o.source} definition${o.file ? ` in ${o.file}` : o.plugin ? ` of plugin ${o.plugin}` : ''}`,
    );
  }
  for (const i of v.issues)
    lines.push(`  ${i.severity === 'error' ? c.red('error') : c.yellow('warning')}:  ${i.message}`);
  return `${lines.join('\n')}\n`;
}
