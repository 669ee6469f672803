/**
 * The `mcp` gateway tool (`toolMode: 'gateway'`): one tool whose name,
 * description and schema never change, whatever servers are connected, so
 * the tools block of every request stays byte-identical. The model finds
 * tools with `search`, reads a schema with `describe`, runs a tool with
 * `call`, and sees the servers with `status`.
 *
 * `search`, `describe` and `status` only read the pool's tool lists and
 * states. `call` goes through `deps.call`, which the agent wires to its
 * funnel (rules, approval by the leaf tool's full name, output guard).
 */
import type { ContentBlock, ToolDeclaration } from '../model';
import { createToolSearchIndex, type ToolSearchIndex } from './search';

/** A tool the gateway can reach. `fullName` is `mcp__<server>__<tool>`. */
export interface GatewayTool {
  server: string;
  name: string;
  fullName: string;
  description?: string;
  inputSchema?: unknown;
}

export interface GatewayServerStatus {
  name: string;
  /** `connected`, `connecting`, `error`, `disabled`, `needs-auth`... */
  status: string;
  toolCount: number;
  error?: string;
}

export interface GatewayResult {
  content: string | ContentBlock[];
  isError?: boolean;
}

export interface GatewayDeps {
  /** Every tool the gateway may search, describe and call (after deny rules). */
  listTools(): readonly GatewayTool[];
  status(): readonly GatewayServerStatus[];
  /** Runs one tool through the agent's funnel. */
  call(fullName: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<GatewayResult>;
}

export interface Gateway {
  run(args: unknown, options?: { signal?: AbortSignal }): Promise<GatewayResult>;
  /**
   * True only for `call`: that invocation can run an MCP tool, whose approval
   * belongs to the leaf tool inside `deps.call`. `search`, `describe` and
   * `status` never need approval.
   */
  needsApproval(args: unknown): boolean;
}

export const GATEWAY_TOOL_NAME = 'mcp';

/**
 * A sentence for the system prompt in gateway mode. Constant, like the
 * declaration: it never names servers or tools.
 */
export const GATEWAY_PROMPT =
  'MCP tools are reached through the `mcp` tool: search for a tool first (action "search"), read its input schema if needed (action "describe"), then call it by its full name (action "call"). Never guess a tool name.';

/** `search` results when `limit` is not given. */
export const GATEWAY_SEARCH_DEFAULT_LIMIT = 12;
/** Most `search` results; a larger `limit` is lowered to it. */
export const GATEWAY_SEARCH_MAX_LIMIT = 40;

const ACTIONS = ['search', 'describe', 'call', 'status'] as const;
type Action = (typeof ACTIONS)[number];

/** Longest description line shown per search hit. */
const HIT_DESCRIPTION_CHARS = 160;
/** Most parameters shown per search hit. */
const HIT_PARAMS = 8;
const SUGGESTIONS = 3;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The gateway's declaration: constant, never built from the pool. */
export const gatewayDeclaration: ToolDeclaration = deepFreeze({
  name: GATEWAY_TOOL_NAME,
  description: [
    'Reach the tools of the configured MCP servers. Search first, then call.',
    '- search: find tools for a task. `query` is words describing the task, or a tool name. Returns full tool names (mcp__<server>__<tool>) with their parameters, best first (12 by default, `limit` up to 40).',
    '- describe: the input schema of one tool. `name` is its full name.',
    '- call: run one tool. `name` is its full name; `arguments` is a JSON object string of its arguments.',
    '- status: the MCP servers, their connection state, tool counts and errors.',
  ].join('\n'),
  inputSchema: {
    type: 'object',
    properties: {
      action: {
        type: 'string',
        enum: [...ACTIONS],
        description: 'search, describe, call or status.',
      },
      query: { type: 'string', description: 'search: words describing the task, or a tool name.' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: GATEWAY_SEARCH_MAX_LIMIT,
        description: 'search: most results (default 12, at most 40).',
      },
      name: { type: 'string', description: 'describe, call: the full tool name, mcp__<server>__<tool>.' },
      arguments: {
        type: 'string',
        description: 'call: the tool arguments as a JSON object, e.g. {"path": "README.md"}.',
      },
    },
    required: ['action'],
    additionalProperties: false,
  },
});

function text(content: string, isError = false): GatewayResult {
  return isError ? { content, isError: true } : { content };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function oneLine(s: string, max: number): string {
  const collapsed = s.split(/\s+/).join(' ').trim();
  return collapsed.length <= max ? collapsed : `${collapsed.slice(0, max - 1).trimEnd()}…`;
}

/** `(owner, repo, title, body?, …)` from an input schema; `()` when it has no properties. */
function paramsSignature(schema: unknown): string {
  if (!isRecord(schema) || !isRecord(schema.properties)) return '()';
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
  );
  const keys = Object.keys(schema.properties);
  const shown = keys.slice(0, HIT_PARAMS).map((k) => (required.has(k) ? k : `${k}?`));
  if (keys.length > HIT_PARAMS) shown.push('…');
  return `(${shown.join(', ')})`;
}

/**
 * Creates the gateway over live dependencies. Reads `deps.listTools()` on
 * every action, so it always sees the current pool; the search index is
 * rebuilt only when the tool list changes.
 */
export function createGateway(deps: GatewayDeps): Gateway {
  let cached: { key: string; tools: readonly GatewayTool[]; index: ToolSearchIndex<GatewayTool> } | undefined;

  function current(): { tools: readonly GatewayTool[]; index: ToolSearchIndex<GatewayTool> } {
    const tools = deps.listTools();
    let key = String(tools.length);
    for (const t of tools) key += `\n${t.fullName}\t${t.description?.length ?? 0}`;
    if (cached === undefined || cached.key !== key) {
      cached = { key, tools, index: createToolSearchIndex(tools) };
    }
    return { tools, index: cached.index };
  }

  function suggest(index: ToolSearchIndex<GatewayTool>, name: string): string {
    const hits = index.search(name, { limit: SUGGESTIONS });
    if (hits.length === 0) return ' Use action "search" to find tools.';
    return ` Did you mean: ${hits.map((t) => t.fullName).join(', ')}?`;
  }

  /** Full name, `server__tool`, or a bare tool name that only one server has. */
  function resolve(name: string): { tool: GatewayTool } | { error: string } {
    const { tools, index } = current();
    const wanted = name.trim();
    if (wanted === '') return { error: '`name` is empty: give the full tool name, mcp__<server>__<tool>.' };
    for (const caseless of [false, true]) {
      const norm = (s: string): string => (caseless ? s.toLowerCase() : s);
      const target = norm(wanted);
      const byFull = tools.filter(
        (t) => norm(t.fullName) === target || norm(`${t.server}__${t.name}`) === target,
      );
      if (byFull.length === 1) return { tool: byFull[0] as GatewayTool };
      const byName = tools.filter((t) => norm(t.name) === target);
      if (byName.length === 1) return { tool: byName[0] as GatewayTool };
      if (byName.length > 1) {
        return {
          error: `Tool name "${wanted}" is on several servers: ${byName.map((t) => t.fullName).join(', ')}. Give the full name.`,
        };
      }
    }
    if (tools.length === 0)
      return { error: `Unknown tool "${wanted}": no MCP tools are available. Use action "status".` };
    return { error: `Unknown tool "${wanted}".${suggest(index, wanted)}` };
  }

  function runSearch(args: Record<string, unknown>): GatewayResult {
    const query = args.query;
    if (typeof query !== 'string' || query.trim() === '') {
      return text('search needs `query`: words describing the task, or a tool name.', true);
    }
    let limit = GATEWAY_SEARCH_DEFAULT_LIMIT;
    if (args.limit !== undefined) {
      const n = typeof args.limit === 'string' ? Number(args.limit) : args.limit;
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 1) {
        return text(`\`limit\` must be a number from 1 to ${GATEWAY_SEARCH_MAX_LIMIT}.`, true);
      }
      limit = Math.min(GATEWAY_SEARCH_MAX_LIMIT, Math.floor(n));
    }
    const { tools, index } = current();
    if (tools.length === 0)
      return text('No MCP tools are available. Use action "status" to see the servers.');
    const hits = index.search(query, { limit });
    if (hits.length === 0) {
      return text(
        `No tool matched "${oneLine(query, 100)}". Try other words, or action "status" to see the servers.`,
      );
    }
    const lines = hits.map((t) => {
      const description = t.description ? ` - ${oneLine(t.description, HIT_DESCRIPTION_CHARS)}` : '';
      return `${t.fullName}${paramsSignature(t.inputSchema)}${description}`;
    });
    lines.push('', 'Use action "describe" for a tool\'s input schema, then "call" with its full name.');
    return text(lines.join('\n'));
  }

  function runDescribe(args: Record<string, unknown>): GatewayResult {
    if (typeof args.name !== 'string') return text('describe needs `name`: the full tool name.', true);
    const found = resolve(args.name);
    if ('error' in found) return text(found.error, true);
    const t = found.tool;
    const schema = t.inputSchema === undefined ? { type: 'object', properties: {} } : t.inputSchema;
    const parts = [`${t.fullName} (server ${t.server})`];
    if (t.description) parts.push(t.description.trim());
    parts.push(`Input schema:\n${JSON.stringify(schema, null, 2)}`);
    return text(parts.join('\n\n'));
  }

  async function runCall(args: Record<string, unknown>, signal?: AbortSignal): Promise<GatewayResult> {
    if (typeof args.name !== 'string') return text('call needs `name`: the full tool name.', true);
    let toolArgs: Record<string, unknown>;
    const raw = args.arguments;
    if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
      toolArgs = {};
    } else if (typeof raw === 'string') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (error) {
        return text(
          `\`arguments\` is not valid JSON (${(error as Error).message}). Pass a JSON object, e.g. {"key": "value"}.`,
          true,
        );
      }
      if (!isRecord(parsed)) return text('`arguments` must be a JSON object, e.g. {"key": "value"}.', true);
      toolArgs = parsed;
    } else if (isRecord(raw)) {
      toolArgs = raw;
    } else {
      return text('`arguments` must be a JSON object (or a string holding one).', true);
    }
    const found = resolve(args.name);
    if ('error' in found) return text(found.error, true);
    try {
      return await deps.call(found.tool.fullName, toolArgs, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      return text(`Tool ${found.tool.fullName} failed: ${(error as Error)?.message ?? String(error)}`, true);
    }
  }

  function runStatus(): GatewayResult {
    const servers = deps.status();
    if (servers.length === 0) return text('No MCP servers are configured.');
    const lines = servers.map((s) => {
      const tools = `${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}`;
      return `${s.name}: ${s.status}, ${tools}${s.error ? ` - error: ${oneLine(s.error, 300)}` : ''}`;
    });
    return text(lines.join('\n'));
  }

  function actionOf(args: unknown): Action | undefined {
    if (!isRecord(args)) return undefined;
    const a = args.action;
    return typeof a === 'string' && (ACTIONS as readonly string[]).includes(a) ? (a as Action) : undefined;
  }

  return {
    needsApproval(args) {
      return actionOf(args) === 'call';
    },
    async run(args, options = {}) {
      if (!isRecord(args))
        return text('The mcp tool takes an object: {"action": "search", "query": "..."}.', true);
      const action = actionOf(args);
      if (action === undefined) {
        const given =
          typeof args.action === 'string'
            ? `Unknown action "${oneLine(args.action, 40)}"`
            : 'Missing `action`';
        return text(`${given}: use one of ${ACTIONS.join(', ')}.`, true);
      }
      switch (action) {
        case 'search':
          return runSearch(args);
        case 'describe':
          return runDescribe(args);
        case 'call':
          return runCall(args, options.signal);
        case 'status':
          return runStatus();
      }
    },
  };
}
