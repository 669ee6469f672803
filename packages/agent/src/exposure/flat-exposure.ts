import { createHash } from 'node:crypto';
import type { ToolCall, ToolDeclaration } from '../model';
import type { Exposure, ExposureInput, ExposurePlan, LiveTool, ToolRoute } from './types';

/** Longest tool name the major model APIs accept. */
export const MAX_TOOL_NAME = 64;

/** A declared name for `fullName`: itself when short enough, else a stable short form. Pure. */
export function declaredName(fullName: string): string {
  if (fullName.length <= MAX_TOOL_NAME && /^[A-Za-z0-9_-]+$/.test(fullName)) return fullName;
  const hash = createHash('sha256').update(fullName).digest('hex').slice(0, 8);
  const safe = fullName.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${safe.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

function objectSchema(schema: unknown): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema))
    return { type: 'object', properties: {} };
  const { $schema: _drop, ...rest } = schema as Record<string, unknown>;
  if (rest.type === undefined) rest.type = 'object';
  return rest;
}

/** How a flat exposure builds declarations; `@wave/agent`'s schema sanitizer plugs in here. */
export type FlatToolsBuilder = (tools: readonly LiveTool[]) => {
  declarations: ToolDeclaration[];
  resolve(declared: string): string | undefined;
};

/** The default builder: sorted by full name, short forms for long names, `$schema` dropped. */
export const basicFlatTools: FlatToolsBuilder = (tools) => {
  const byDeclared = new Map<string, string>();
  const declarations: ToolDeclaration[] = [];
  for (const t of [...tools].sort((a, b) =>
    a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0,
  )) {
    const name = declaredName(t.fullName);
    if (byDeclared.has(name)) continue;
    byDeclared.set(name, t.fullName);
    declarations.push({ name, description: t.description ?? '', inputSchema: objectSchema(t.inputSchema) });
  }
  return { declarations, resolve: (d) => byDeclared.get(d) };
};

/**
 * Flat mode: every live MCP tool declared as `mcp__<server>__<tool>`, built-ins
 * first. A name the model uses that is not declared now (its server went away
 * since) still routes by full name, so the funnel answers "unavailable because ...".
 */
export function flatExposure(build: FlatToolsBuilder = basicFlatTools): Exposure {
  // Short forms declared earlier in this session, so a late call still maps back.
  const seen = new Map<string, string>();
  return {
    mode: 'flat',
    plan(input: ExposureInput): ExposurePlan {
      const flat = build(input.tools);
      for (const d of flat.declarations) {
        const full = flat.resolve(d.name);
        if (full !== undefined) seen.set(d.name, full);
      }
      const builtinNames = new Set(input.builtins.map((b) => b.name));
      return {
        declarations: [...input.builtins, ...flat.declarations],
        route(call: ToolCall): ToolRoute {
          const fullName = builtinNames.has(call.name)
            ? call.name
            : (flat.resolve(call.name) ?? seen.get(call.name) ?? call.name);
          return { kind: 'call', fullName, arguments: call.arguments };
        },
      };
    },
  };
}
