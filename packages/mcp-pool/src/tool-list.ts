import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type Tool, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * The `tools/list` result, checked only as far as paging needs: each tool is
 * checked on its own afterwards ({@link checkTools}), so one malformed tool
 * never rejects the whole list (the SDK's `ListToolsResultSchema` does).
 */
const LenientListToolsResultSchema = z
  .object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() })
  .passthrough();

/** A tool the pool could not use, and why. */
export interface DroppedTool {
  /** Its name, or `#<index>` when it has none. */
  tool: string;
  reason: string;
}

/** Outcome of {@link checkTools}. */
export interface CheckedTools {
  tools: Tool[];
  dropped: DroppedTool[];
}

/**
 * Deepest nesting (objects and arrays) a tool's input or output schema may
 * have. Real schemas stay far below it (nested types go through `$ref`); a
 * deeper one (or an object cycle) would overflow the stack of code that walks
 * schemas recursively, in the SDK and in hosts.
 */
export const MAX_SCHEMA_DEPTH = 64;

/** Whether `value` nests deeper than `max` levels. Iterative: any depth, cycles included. */
function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Check each listed tool on its own. What has one obvious meaning is
 * repaired: an `inputSchema` without a top-level `type` (e.g. only
 * `{"$schema": ...}`) or no `inputSchema` at all is an object schema. A tool
 * that still does not fit the MCP tool shape (no name, a schema that is not
 * an object schema, ...) is dropped with the reason; so is a second tool of
 * the same name. Pure.
 */
export function checkTools(raw: readonly unknown[]): CheckedTools {
  const tools: Tool[] = [];
  const dropped: DroppedTool[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const label = isRecord(item) && typeof item.name === 'string' && item.name !== '' ? item.name : `#${i}`;
    if (!isRecord(item)) {
      dropped.push({ tool: label, reason: 'it is not an object' });
      return;
    }
    const tooDeep = (['inputSchema', 'outputSchema'] as const).find((k) =>
      nestsDeeper(item[k], MAX_SCHEMA_DEPTH),
    );
    if (tooDeep) {
      dropped.push({ tool: label, reason: `${tooDeep}: nested deeper than ${MAX_SCHEMA_DEPTH} levels` });
      return;
    }
    let candidate: Record<string, unknown> = item;
    const schema = item.inputSchema;
    if (schema === undefined) candidate = { ...item, inputSchema: { type: 'object' } };
    else if (isRecord(schema) && schema.type === undefined)
      candidate = { ...item, inputSchema: { ...schema, type: 'object' } };
    const parsed = ToolSchema.safeParse(candidate);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'the tool';
      dropped.push({ tool: label, reason: `${where}: ${issue?.message ?? 'invalid'}` });
      return;
    }
    if (seen.has(parsed.data.name)) {
      dropped.push({ tool: label, reason: 'another tool of the server has the same name' });
      return;
    }
    seen.add(parsed.data.name);
    tools.push(parsed.data as Tool);
  });
  return { tools, dropped };
}

/** Every page of `tools/list`, each tool checked on its own. */
export async function listToolsLeniently(
  client: Client,
  options: RequestOptions,
  maxPages: number,
): Promise<CheckedTools> {
  const raw: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const r = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      LenientListToolsResultSchema,
      options,
    );
    raw.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  const checked = checkTools(raw);
  cacheToolMetadata(client, checked);
  return checked;
}

/**
 * Let the SDK client know the tools, as its own `listTools()` does (output
 * schema validators, task support). A tool whose output schema cannot be
 * compiled keeps its place without output validation.
 */
function cacheToolMetadata(client: Client, checked: CheckedTools): void {
  // Private in the SDK's types; what its listTools() calls (skipped when a version lacks it).
  const cache = (
    client as unknown as { cacheToolMetadata?: (tools: Tool[]) => void }
  ).cacheToolMetadata?.bind(client);
  if (!cache) return;
  try {
    cache(checked.tools);
    return;
  } catch {
    // One output schema does not compile: find it below.
  }
  const ok: Tool[] = [];
  for (const tool of checked.tools) {
    try {
      cache([...ok, tool]);
      ok.push(tool);
    } catch {
      ok.push({ ...tool, outputSchema: undefined });
    }
  }
  cache(ok);
}
