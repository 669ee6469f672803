import type { CatalogTool } from '../../src/exposure/catalog';
import type { NestedToolResult } from '../../src/exposure/exec/result';
import type { ExecHost } from '../../src/exposure/exec/sandbox';

export interface RecordedCall {
  fullName: string;
  args: unknown;
  signal: AbortSignal;
}

export type ToolImpl = (args: unknown, signal: AbortSignal) => Promise<NestedToolResult> | NestedToolResult;

export function tool(
  server: string,
  name: string,
  description = `${name} tool`,
  inputSchema?: unknown,
): CatalogTool {
  return { server, name, fullName: `mcp__${server}__${name}`, description, inputSchema };
}

/**
 * An in-memory host: the sandbox's own boundary (the agent's funnel plugs in here).
 * `pool` may be swapped between runs to model servers connecting and leaving.
 */
export function memoryHost(pool: CatalogTool[], impls: Record<string, ToolImpl> = {}) {
  const calls: RecordedCall[] = [];
  const searches: { query: string; limit: number }[] = [];
  let listed = 0;
  const host: ExecHost & { pool: CatalogTool[] } = {
    pool,
    listTools() {
      listed += 1;
      return host.pool;
    },
    async call(fullName, args, signal) {
      calls.push({ fullName, args, signal });
      const impl = impls[fullName];
      if (impl === undefined) return { content: `called ${fullName}` };
      return impl(args, signal);
    },
    search(query, limit) {
      searches.push({ query, limit });
      const q = query.toLowerCase();
      return host.pool
        .filter((t) => `${t.fullName} ${t.description ?? ''}`.toLowerCase().includes(q))
        .slice(0, limit);
    },
  };
  return {
    host,
    calls,
    searches,
    get listed() {
      return listed;
    },
  };
}

export { deferred } from '@wave/testkit';

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('\n');
  }
  return String(content);
}
