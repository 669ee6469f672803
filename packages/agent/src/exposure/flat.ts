/**
 * Flat exposure: every live MCP tool declared to the model under its full
 * name `mcp__<server>__<tool>`, with its input schema sanitized. Names the
 * providers would reject are mapped, names over the 64-character limit get a
 * stable short form, and `resolve()` maps whatever the model calls back to
 * the server and tool. Pure.
 */
import { createHash } from 'node:crypto';
import { serverIdentity } from '@wave/mcp-config';
import type { ToolDeclaration } from '../model';
import { cutText, type SanitizeSchemaOptions, sanitizeSchema } from './schema';

/** The longest tool name OpenAI, Anthropic and Gemini all accept. */
export const MAX_TOOL_NAME_LENGTH = 64;
/** Tool names every provider accepts. */
export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;

/** One live MCP tool, as the pool lists it. */
export interface FlatToolInput {
  /** The server's configured name. */
  server: string;
  /** The tool's name as the server lists it. */
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean };
}

/** What a declared name stands for. */
export interface FlatToolTarget {
  /** The server's configured name. */
  server: string;
  /** The tool's name as the server lists it (what `callTool` takes). */
  tool: string;
  /** `mcp__<server>__<tool>`: the identity permission rules match. */
  fullName: string;
  /** The name declared to the model (the full name, or its short form over 64 characters). */
  declaredName: string;
  /** The server's `readOnlyHint` annotation (false when absent). */
  readOnly: boolean;
}

/** What {@link buildFlatTools} returns. */
export interface FlatTools {
  /** Sorted by full name, so that adding or removing one tool moves no other declaration. */
  declarations: ToolDeclaration[];
  /** The tool behind a declared name (a full name is accepted too), or undefined. */
  resolve(declaredName: string): FlatToolTarget | undefined;
}

/** Options of {@link buildFlatTools}. */
export interface BuildFlatToolsOptions {
  /** Names longer than this get a short form (prefix + hash). @default 64 */
  maxNameLength?: number;
  /** Tool descriptions longer than this (characters) are cut. @default 4096 */
  maxDescriptionLength?: number;
  /** Passed to {@link sanitizeSchema} for every input schema. */
  schema?: SanitizeSchemaOptions;
  /**
   * Sanitized schemas by input schema object. Pass the same map on every
   * turn (with the same `schema` options) so that tool lists the pool hands
   * out again are not sanitized again. Results are shared: treat
   * declarations as read-only. @default no cache
   */
  schemaCache?: WeakMap<object, Record<string, unknown>>;
}

function hash8(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * The tool part of a full name: every character outside `[A-Za-z0-9_-]`
 * becomes `_` (an empty name becomes `_`). Pure.
 */
export function toolIdentity(tool: string): string {
  const mapped = tool.replace(/[^A-Za-z0-9_-]/gu, '_');
  return mapped === '' ? '_' : mapped;
}

/**
 * `mcp__<server>__<tool>`: the identity of an MCP tool everywhere (permission
 * rules, approvals, transcripts). The server part is mcp-config's
 * `serverIdentity`, the tool part {@link toolIdentity}. Pure.
 *
 * @example fullToolName('github', 'create_issue') // 'mcp__github__create_issue'
 */
export function fullToolName(server: string, tool: string): string {
  return `mcp__${serverIdentity(server)}__${toolIdentity(tool)}`;
}

/**
 * The server and tool identities of a full name, or undefined when `name` is
 * not `mcp__<server>__<tool>`. A server identity never contains `__`, so the
 * first `__` after the server ends it (a server identity ending in `_` is
 * preferred over a tool name starting with `_`). Pure.
 */
export function parseFullToolName(name: string): { server: string; tool: string } | undefined {
  const m = /^mcp__(.+?)__(?!_)(.+)$/su.exec(name) ?? /^mcp__(.+?)__(.+)$/su.exec(name);
  if (!m) return undefined;
  const server = m[1] as string;
  if (server.includes('__')) return undefined;
  return { server, tool: m[2] as string };
}

/**
 * The stable short form of a name over `max` characters: its first
 * `max - 9` characters, `_`, and 8 hex digits of its sha256. Pure.
 */
export function shortToolName(name: string, max = MAX_TOOL_NAME_LENGTH, salt = ''): string {
  if (name.length <= max && salt === '') return name;
  const suffix = hash8(salt === '' ? name : `${name}\u0000${salt}`);
  return `${name.slice(0, Math.max(0, max - suffix.length - 1))}_${suffix}`;
}

function sanitized(schema: unknown, options: BuildFlatToolsOptions): Record<string, unknown> {
  const cache = options.schemaCache;
  if (cache === undefined || typeof schema !== 'object' || schema === null)
    return sanitizeSchema(schema, options.schema);
  const hit = cache.get(schema);
  if (hit !== undefined) return hit;
  const out = sanitizeSchema(schema, options.schema);
  cache.set(schema, out);
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Declarations for every tool, and the map back. Deterministic whatever the
 * input order: entries are sorted by full name (then server and tool), and
 * when two tools map to the same full name (`a.b` and `a_b`), the first in
 * that order keeps it and the next gets `_<hash>` appended. A repeated
 * server and tool pair is declared once.
 */
export function buildFlatTools(
  tools: readonly FlatToolInput[],
  options: BuildFlatToolsOptions = {},
): FlatTools {
  const max = options.maxNameLength ?? MAX_TOOL_NAME_LENGTH;
  const maxDescription = options.maxDescriptionLength ?? 4096;
  const seen = new Set<string>();
  const entries: { input: FlatToolInput; base: string }[] = [];
  for (const input of tools) {
    const key = `${input.server}\u0000${input.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push({ input, base: fullToolName(input.server, input.name) });
  }
  entries.sort(
    (a, b) =>
      compare(a.base, b.base) ||
      compare(a.input.server, b.input.server) ||
      compare(a.input.name, b.input.name),
  );

  const byDeclared = new Map<string, FlatToolTarget>();
  const byFull = new Map<string, FlatToolTarget>();
  const declared: { fullName: string; declaration: ToolDeclaration }[] = [];
  for (const { input, base } of entries) {
    let fullName = base;
    for (let n = 0; byFull.has(fullName); n++) {
      fullName = `${base}_${hash8(`${input.server}\u0000${input.name}${n === 0 ? '' : `\u0000${n}`}`)}`;
    }
    let declaredName = shortToolName(fullName, max);
    for (let n = 1; byDeclared.has(declaredName); n++) declaredName = shortToolName(fullName, max, String(n));
    const target: FlatToolTarget = {
      server: input.server,
      tool: input.name,
      fullName,
      declaredName,
      readOnly: input.annotations?.readOnlyHint === true,
    };
    byDeclared.set(declaredName, target);
    byFull.set(fullName, target);
    const description =
      typeof input.description === 'string' && input.description.trim() !== ''
        ? cutText(input.description, maxDescription)
        : `Tool "${input.name}" of MCP server "${input.server}".`;
    declared.push({
      fullName,
      declaration: {
        name: declaredName,
        description,
        inputSchema: sanitized(input.inputSchema, options),
      },
    });
  }
  declared.sort((a, b) => compare(a.fullName, b.fullName));
  return {
    declarations: declared.map((d) => d.declaration),
    resolve(name: string): FlatToolTarget | undefined {
      const target = byDeclared.get(name) ?? byFull.get(name);
      return target === undefined ? undefined : { ...target };
    },
  };
}
