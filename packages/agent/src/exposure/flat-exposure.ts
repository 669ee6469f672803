import type { ToolCall } from '../model';
import { type BuildFlatToolsOptions, buildFlatTools } from './flat';
import type { Exposure, ExposureInput, ExposurePlan, ToolRoute } from './types';

/**
 * Flat mode: every live MCP tool declared as `mcp__<server>__<tool>` (schema
 * sanitized, sorted, short forms over 64 characters), built-ins first. A name
 * the model uses that is not declared now (its server went away since) still
 * routes by full name, so the funnel answers "unavailable because ...".
 */
export function flatExposure(options: BuildFlatToolsOptions = {}): Exposure {
  // Short forms declared earlier in this session, so a late call still maps back.
  const seen = new Map<string, string>();
  // Sanitized schemas by the pool's schema object: an unchanged tool list is not sanitized again.
  const build: BuildFlatToolsOptions = { ...options, schemaCache: options.schemaCache ?? new WeakMap() };
  return {
    mode: 'flat',
    plan(input: ExposureInput): ExposurePlan {
      const flat = buildFlatTools(input.tools, build);
      for (const d of flat.declarations) {
        const target = flat.resolve(d.name);
        if (target) seen.set(d.name, target.fullName);
      }
      const builtinNames = new Set(input.builtins.map((b) => b.name));
      return {
        declarations: [...input.builtins, ...flat.declarations],
        route(call: ToolCall): ToolRoute {
          if (builtinNames.has(call.name))
            return { kind: 'call', fullName: call.name, arguments: call.arguments };
          const target = flat.resolve(call.name);
          if (target) {
            return {
              kind: 'call',
              fullName: target.fullName,
              arguments: call.arguments,
              target: { server: target.server, tool: target.tool },
            };
          }
          return { kind: 'call', fullName: seen.get(call.name) ?? call.name, arguments: call.arguments };
        },
      };
    },
  };
}
