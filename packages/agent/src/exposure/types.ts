/**
 * How MCP tools are shown to the model. An {@link Exposure} turns the live
 * tools into declarations and routes each model tool call, either straight to
 * the funnel by full name or to its own handler (Exec, the gateway), which
 * calls back into the same funnel for every MCP call it makes.
 */
import type { ContentBlock, ToolCall, ToolDeclaration } from '../model';

/** A tool of a connected MCP server. */
export interface LiveTool {
  /** Server name as configured. */
  server: string;
  /** Tool name on the server. */
  name: string;
  /** `mcp__<serverIdentity(server)>__<name>`: the identity permission rules match. */
  fullName: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean };
}

/** What a tool call produced, as the model will see it. */
export interface ToolOutcome {
  content: string | ContentBlock[];
  isError: boolean;
  /** The call was refused (permission denied, tool unavailable) and never ran. */
  blocked?: boolean;
}

/** Call one tool by full name through the funnel (rules, approval, call, guard). */
export type FunnelCall = (
  fullName: string,
  args: Record<string, unknown>,
  opts?: { signal?: AbortSignal; callId?: string },
) => Promise<ToolOutcome>;

/** Where one model tool call goes. */
export type ToolRoute =
  /** Straight through the funnel. */
  | {
      kind: 'call';
      fullName: string;
      arguments: Record<string, unknown>;
      /** The exact server and tool, when the exposure knows them (colliding names). */
      target?: { server: string; tool: string };
    }
  /** A mode's own handler (Exec, gateway); it may call the funnel any number of times. */
  | {
      kind: 'custom';
      readOnly: boolean;
      run(ctx: { callTool: FunnelCall; signal?: AbortSignal }): Promise<ToolOutcome>;
    };

/** The declarations of one model call, and how to route what the model calls. */
export interface ExposurePlan {
  declarations: ToolDeclaration[];
  route(call: ToolCall): ToolRoute;
}

/** What an exposure works from. */
export interface ExposureInput {
  /** Tools of connected servers, in no particular order. */
  tools: readonly LiveTool[];
  /**
   * The same list computed again now (deny rules applied): a script that runs
   * later in the turn sees servers that connected or dropped since the plan.
   * @default () => tools
   */
  currentTools?: () => readonly LiveTool[];
  /** Built-in tools (`ReadOutput`, `McpSettings`): always declared as they are, never folded. */
  builtins: readonly ToolDeclaration[];
  /** Every configured server and its state (for status views such as the gateway's `status`). */
  servers: readonly ExposureServerStatus[];
}

/** A configured server as an exposure may report it. */
export interface ExposureServerStatus {
  name: string;
  /** `connected`, `connecting`, `error`, `disabled`, ... */
  status: string;
  toolCount: number;
  error?: string;
}

/** A tool exposure mode. */
export interface Exposure {
  readonly mode: string;
  plan(input: ExposureInput): ExposurePlan;
}
