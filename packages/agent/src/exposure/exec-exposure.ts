import type { ToolCall } from '../model';
import { renderCatalog } from './catalog';
import { EXEC_TOOL_NAME, execDeclaration } from './exec/declaration';
import { createExecSandbox, type ExecSandbox, type ExecSandboxOptions } from './exec/sandbox';
import { createToolSearchIndex, type ToolSearchIndex } from './search';
import type { Exposure, ExposureInput, ExposurePlan, LiveTool, ToolRoute } from './types';

/** Exec mode, and the sandbox it owns (a worker thread, started on the first Exec call). */
export interface ExecExposure extends Exposure {
  /** Terminate the sandbox's worker. Idempotent. */
  close(): Promise<void>;
}

/**
 * Exec mode: the built-ins and one `Exec` tool whose description is the
 * catalog of the live tools. A script's every tool call goes through the
 * same funnel as a flat call (rules, approval by the leaf's full name, guard).
 */
export function execExposure(options: ExecSandboxOptions = {}): ExecExposure {
  let sandbox: ExecSandbox | undefined;
  let closed = false;
  // Rebuilt only when the set of tools changes (building costs ~30 ms per 1 000 tools).
  let index: { key: string; index: ToolSearchIndex<LiveTool> } | undefined;
  const searchIndex = (tools: readonly LiveTool[]) => {
    const key = tools.map((t) => t.fullName).join('\n');
    if (index?.key !== key) index = { key, index: createToolSearchIndex(tools) };
    return index.index;
  };
  return {
    mode: 'exec',
    plan(input: ExposureInput): ExposurePlan {
      const tools = input.tools;
      // The callable set is taken from the live pool when a script runs (EXEC.md), not from the plan.
      const current = input.currentTools ?? (() => tools);
      return {
        declarations: [...input.builtins, execDeclaration(renderCatalog(tools))],
        route(call: ToolCall): ToolRoute {
          if (call.name !== EXEC_TOOL_NAME)
            return { kind: 'call', fullName: call.name, arguments: call.arguments };
          return {
            kind: 'custom',
            readOnly: false,
            async run(ctx) {
              if (closed) return { content: 'Exec is closed: the agent is shutting down.', isError: true };
              sandbox ??= createExecSandbox(options);
              const r = await sandbox.run(
                call.arguments.code,
                {
                  listTools: () => current().map((t) => ({ ...t })),
                  call: (fullName, args, signal) =>
                    ctx.callTool(
                      fullName,
                      args && typeof args === 'object' && !Array.isArray(args)
                        ? (args as Record<string, unknown>)
                        : {},
                      { signal },
                    ),
                  search: (query, limit) => searchIndex(current()).search(query, { limit }),
                },
                ctx.signal ? { signal: ctx.signal } : {},
              );
              return { content: r.content, isError: r.isError };
            },
          };
        },
      };
    },
    async close() {
      closed = true;
      const s = sandbox;
      sandbox = undefined;
      if (s) await s.close();
    },
  };
}
