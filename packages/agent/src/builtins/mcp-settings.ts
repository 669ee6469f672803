/**
 * `McpSettings`: lets the model list, add, update and remove MCP servers in
 * the user file (`<home>/mcp.json`) or the project file
 * (`<workdir>/.mcp.json`), through mcp-config's editor (comments and
 * formatting kept, atomic writes). Always asks for approval. Secrets are
 * masked in everything it shows. Plugin and constructor servers are
 * read-only here.
 */
import {
  addServer,
  type ConfigIssue,
  displayServer,
  isMcpConfigError,
  loadMcpConfig,
  maskSecrets,
  maskUrl,
  nodeConfigFs,
  projectConfigPath,
  type ResolvedServer,
  readConfigLayer,
  removeServer,
  userConfigPath,
} from '@wave/mcp-config';
import type { BuiltinContext, BuiltinResult, BuiltinTool } from './types';

/** The name of the built-in settings tool. */
export const MCP_SETTINGS_TOOL = 'McpSettings';

type Scope = 'user' | 'project';
type Action = 'list' | 'add' | 'update' | 'remove';

const ACTIONS: readonly Action[] = ['list', 'add', 'update', 'remove'];

function fail(message: string): BuiltinResult {
  return { content: message, isError: true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fileOf(scope: Scope, ctx: BuiltinContext): string {
  return scope === 'user' ? userConfigPath(ctx.home) : projectConfigPath(ctx.workdir);
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    Object.defineProperty(out, key, { value: typeof v === 'string' ? v : String(v), enumerable: true });
  }
  return out;
}

/** A server entry as the model may see it: env and header values and URL credentials masked. */
export function maskServerConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  const env = stringMap(config.env);
  const headers = stringMap(config.headers);
  if (env) out.env = maskSecrets(env);
  if (headers) out.headers = maskSecrets(headers);
  if (typeof config.url === 'string') out.url = maskUrl(config.url);
  return out;
}

function describeIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `- ${i.severity}: ${i.message}`).join('\n');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Every server the agent knows (host's merged view when given, else the two files). */
async function knownServers(
  ctx: BuiltinContext,
): Promise<{ servers: readonly ResolvedServer[]; issues: ConfigIssue[] }> {
  const loaded = await loadMcpConfig({ workdir: ctx.workdir, home: ctx.home });
  if (ctx.servers) return { servers: await ctx.servers(), issues: loaded.issues };
  return loaded;
}

async function list(ctx: BuiltinContext): Promise<BuiltinResult> {
  const { servers, issues } = await knownServers(ctx);
  const view = servers.map((server) => {
    const d = displayServer(server);
    const entry: Record<string, unknown> = {
      name: d.name,
      source: d.source,
      transport: d.transport,
      editable: d.source === 'user' || d.source === 'project',
    };
    if (d.file !== undefined) entry.file = d.file;
    if (d.plugin !== undefined) entry.plugin = d.plugin;
    for (const key of [
      'command',
      'args',
      'cwd',
      'url',
      'env',
      'headers',
      'description',
      'approveTools',
      'readOnlyTools',
      'requestedApprovals',
    ] as const) {
      if (d[key] !== undefined) entry[key] = d[key];
    }
    if (d.lifecycle !== 'lazy') entry.lifecycle = d.lifecycle;
    if (d.shadowed.length > 0) entry.overrides = d.shadowed.map((s) => s.file ?? s.plugin ?? s.source);
    if (d.issues.length > 0) entry.issues = d.issues.map((i) => `${i.severity}: ${i.message}`);
    return entry;
  });
  const payload = {
    userFile: userConfigPath(ctx.home),
    projectFile: projectConfigPath(ctx.workdir),
    servers: view,
    ...(issues.length > 0 ? { issues: issues.map((i) => `${i.severity}: ${i.message}`) } : {}),
  };
  const head =
    view.length === 0
      ? 'No MCP servers are configured.'
      : `${view.length} MCP server${view.length === 1 ? '' : 's'} configured (secrets masked; only user and project servers can be edited):`;
  return { content: `${head}\n${JSON.stringify(payload, null, 2)}` };
}

/** Where server `name` is defined in the two files. */
async function definedIn(name: string, ctx: BuiltinContext): Promise<Scope[]> {
  const found: Scope[] = [];
  for (const scope of ['project', 'user'] as const) {
    const read = await readConfigLayer(nodeConfigFs, fileOf(scope, ctx), scope);
    if (read.layer && Object.hasOwn(read.layer.servers, name)) found.push(scope);
  }
  return found;
}

/** The read-only server of that name (plugin or constructor), if any. */
async function readOnlyServer(name: string, ctx: BuiltinContext): Promise<ResolvedServer | undefined> {
  if (!ctx.servers) return undefined;
  const servers = await ctx.servers();
  const all = servers.filter((s) => s.name === name);
  return all.find((s) => s.source === 'plugin' || s.source === 'constructor');
}

function readOnlyMessage(server: ResolvedServer, action: string): string {
  if (server.source === 'plugin') {
    return `Server "${server.name}" comes from plugin "${server.plugin ?? 'unknown'}"; plugin servers are read-only, so it cannot be ${action} here. To replace it, add a server of the same name to the user file (action "add", scope "user"): the user file wins over plugins.`;
  }
  return `Server "${server.name}" is set by the host application (constructor option); it cannot be ${action} here.`;
}

/** The file to change for update/remove: the given scope, or the one file that defines the name. */
async function targetScope(
  name: string,
  scope: Scope | undefined,
  action: 'updated' | 'removed',
  ctx: BuiltinContext,
): Promise<Scope | BuiltinResult> {
  const found = await definedIn(name, ctx);
  if (scope !== undefined) {
    if (found.includes(scope)) return scope;
  } else if (found.length === 1) {
    return found[0] as Scope;
  } else if (found.length === 2) {
    return fail(
      `Server "${name}" is defined in both ${fileOf('project', ctx)} and ${fileOf('user', ctx)}; say which one with "scope": "project" or "user".`,
    );
  }
  const readOnly = await readOnlyServer(name, ctx);
  if (readOnly) return fail(readOnlyMessage(readOnly, action));
  const where =
    scope === undefined ? `${fileOf('project', ctx)} or ${fileOf('user', ctx)}` : fileOf(scope, ctx);
  const hint = action === 'updated' ? ' Use action "add" to create it.' : '';
  return fail(
    `There is no server "${name}" in ${where}; nothing was changed.${hint} Use action "list" to see the servers.`,
  );
}

async function afterChange(ctx: BuiltinContext, done: string): Promise<BuiltinResult> {
  try {
    await ctx.reloadConfig();
    return { content: `${done}\nThe configuration was reloaded.` };
  } catch (err) {
    return {
      content: `${done}\nThe file was saved, but reloading the configuration failed (${errorMessage(err)}); the change applies when the agent restarts.`,
    };
  }
}

interface Request {
  action: Action;
  name?: string;
  scope?: Scope;
  config?: Record<string, unknown>;
}

function parseArgs(args: Record<string, unknown>): Request | string {
  const { action, name, scope, config } = args;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    return `"action" must be one of ${ACTIONS.map((a) => `"${a}"`).join(', ')}, not ${JSON.stringify(action)}.`;
  }
  if (scope !== undefined && scope !== 'user' && scope !== 'project') {
    return `"scope" must be "user" (${'<home>/mcp.json'}) or "project" (<workdir>/.mcp.json), not ${JSON.stringify(scope)}.`;
  }
  const req: Request = { action: action as Action };
  if (scope !== undefined) req.scope = scope;
  if (action === 'list') return req;
  if (typeof name !== 'string' || name === '') {
    return `Action "${action}" needs "name": the server's name, e.g. "github".`;
  }
  req.name = name;
  if (action === 'add' || action === 'update') {
    if (!isRecord(config)) {
      return `Action "${action}" needs "config": the server entry as in .mcp.json, e.g. {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]} or {"url": "https://example.com/mcp"}.`;
    }
    req.config = config;
  }
  return req;
}

async function settings(args: Record<string, unknown>, ctx: BuiltinContext): Promise<BuiltinResult> {
  const req = parseArgs(args);
  if (typeof req === 'string') return fail(req);
  if (ctx.signal?.aborted) return fail('Cancelled; nothing was changed.');
  if (req.action === 'list') return list(ctx);
  const name = req.name as string;

  if (req.action === 'remove') {
    const scope = await targetScope(name, req.scope, 'removed', ctx);
    if (typeof scope !== 'string') return scope;
    const result = await removeServer(fileOf(scope, ctx), name, { source: scope });
    return afterChange(ctx, `Removed server "${name}" from ${result.file}.`);
  }

  const config = req.config as Record<string, unknown>;
  if (req.action === 'update') {
    const scope = await targetScope(name, req.scope, 'updated', ctx);
    if (typeof scope !== 'string') return scope;
    const result = await addServer(fileOf(scope, ctx), name, config, { source: scope, overwrite: true });
    const warnings = result.issues.length > 0 ? `\nWarnings:\n${describeIssues(result.issues)}` : '';
    return afterChange(
      ctx,
      `Replaced server "${name}" in ${result.file} with ${JSON.stringify(maskServerConfig(config))}.${warnings}`,
    );
  }

  const scope = req.scope ?? 'user';
  const shadow = await readOnlyServer(name, ctx);
  const result = await addServer(fileOf(scope, ctx), name, config, { source: scope });
  const notes: string[] = [];
  if (result.issues.length > 0) notes.push(`Warnings:\n${describeIssues(result.issues)}`);
  if (shadow?.source === 'plugin')
    notes.push(`It replaces the server of the same name from plugin "${shadow.plugin ?? 'unknown'}".`);
  if (shadow?.source === 'constructor') {
    notes.push(
      'The host application sets a server of the same name, which wins over this file while it does.',
    );
  }
  const created = result.created ? ' (the file was created)' : '';
  return afterChange(
    ctx,
    `Added server "${name}" to ${result.file}${created}: ${JSON.stringify(maskServerConfig(config))}.${notes.length > 0 ? `\n${notes.join('\n')}` : ''}`,
  );
}

/** The `McpSettings` built-in tool: always asks for approval. */
export const mcpSettingsTool: BuiltinTool = {
  declaration: {
    name: MCP_SETTINGS_TOOL,
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-config's variable syntax, not a template
      'List, add, update or remove MCP servers in the user config file (<home>/mcp.json, personal) or the project config file (<workdir>/.mcp.json, shared with the repository). Comments and formatting in the files are kept. "list" shows every server with its source and file (secrets masked). "add" and "update" take "config", the server entry as written in .mcp.json: {"command", "args", "env", "cwd"} for a local server or {"url", "headers"} (optionally "type": "http" or "sse") for a remote one; "update" replaces the whole entry. Use ${VAR} references for secrets rather than literal values. Servers from plugins or set by the host are read-only. The user approves every call.',
    inputSchema: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['list', 'add', 'update', 'remove'], description: 'What to do.' },
        name: {
          type: 'string',
          description: 'The server name (letters, digits, "_" and "-"); not needed for "list".',
        },
        scope: {
          type: 'string',
          enum: ['user', 'project'],
          description:
            'Which file: "user" (<home>/mcp.json) or "project" (<workdir>/.mcp.json). (default for "add": user; for "update" and "remove": the file that defines the server)',
        },
        config: {
          type: 'object',
          description: 'The server entry for "add" and "update", as written in .mcp.json.',
          properties: {},
        },
      },
      required: ['action'],
    },
  },
  alwaysAsk: true,
  async run(args, ctx) {
    try {
      return await settings(isRecord(args) ? args : {}, ctx);
    } catch (err) {
      if (isMcpConfigError(err)) return fail(err.message);
      return fail(`McpSettings failed: ${errorMessage(err)}`);
    }
  },
};
