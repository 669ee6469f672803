import type { ResolvedServer } from '@wave/mcp-config';
import type { ToolDeclaration } from '../model';

/** What a built-in tool sees of the agent that runs it. */
export interface BuiltinContext {
  /** The agent's working directory (absolute); `<workdir>/.mcp.json` is the project file. */
  workdir: string;
  /** The wave home (absolute); `<home>/mcp.json` is the user file. */
  home: string;
  /** This session's temp dir (absolute): spilled outputs live under it, and `ReadOutput` reads nothing else. */
  sessionDir: string;
  /** Aborted when the turn is cancelled. */
  signal?: AbortSignal;
  /** Re-read every config source and apply the result (called after `McpSettings` changes a file). */
  reloadConfig(): Promise<void>;
  /**
   * The agent's merged servers (constructor and plugin servers included), so
   * that `McpSettings` can list them and refuse to edit read-only ones. When
   * absent, only the user and project files are read.
   */
  servers?(): readonly ResolvedServer[] | Promise<readonly ResolvedServer[]>;
}

/** What a built-in tool returns: text for the model, and whether it failed. */
export interface BuiltinResult {
  content: string;
  isError?: boolean;
}

/** A tool the agent itself provides (never folded into Exec or the gateway). */
export interface BuiltinTool {
  declaration: ToolDeclaration;
  /** Ask for approval on every call, whatever the permission rules say. */
  alwaysAsk: boolean;
  /** Never throws for bad input or a failed operation: that is an `isError` result. */
  run(args: Record<string, unknown>, ctx: BuiltinContext): Promise<BuiltinResult>;
}
