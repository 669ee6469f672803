import type { ToolCall } from '../model';
import { createGateway, GATEWAY_TOOL_NAME, gatewayDeclaration } from './gateway';
import type { Exposure, ExposureInput, ExposurePlan, FunnelCall, ToolRoute } from './types';

/**
 * Gateway mode: the built-ins and one constant `mcp` tool (search, describe,
 * call, status). `call` runs the leaf tool through the same funnel, so its
 * approval and rules are the leaf tool's; the other actions need no approval
 * and are read-only.
 */
export function gatewayExposure(): Exposure {
  let current: ExposureInput = { tools: [], builtins: [], servers: [] };
  let funnelCall: FunnelCall | undefined;
  let callSignal: AbortSignal | undefined;
  const gateway = createGateway({
    listTools: () => current.tools,
    status: () => current.servers,
    call: (fullName, args, signal) => {
      if (!funnelCall) return Promise.resolve({ content: 'The gateway is not in a turn.', isError: true });
      const s = signal ?? callSignal;
      return funnelCall(fullName, args, s ? { signal: s } : {});
    },
  });
  return {
    mode: 'gateway',
    plan(input: ExposureInput): ExposurePlan {
      current = input;
      const builtinNames = new Set(input.builtins.map((b) => b.name));
      return {
        declarations: [...input.builtins, gatewayDeclaration],
        route(call: ToolCall): ToolRoute {
          if (call.name !== GATEWAY_TOOL_NAME || builtinNames.has(call.name)) {
            return { kind: 'call', fullName: call.name, arguments: call.arguments };
          }
          return {
            kind: 'custom',
            readOnly: !gateway.needsApproval(call.arguments),
            async run(ctx) {
              funnelCall = ctx.callTool;
              callSignal = ctx.signal;
              const r = await gateway.run(call.arguments, ctx.signal ? { signal: ctx.signal } : {});
              return { content: r.content, isError: r.isError === true };
            },
          };
        },
      };
    },
  };
}
