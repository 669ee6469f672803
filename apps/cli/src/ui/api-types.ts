/**
 * The JSON shapes of the `wave ui` HTTP API (documented in the README).
 * Shared by the server and the page; type-only, no runtime code.
 */

export type ServerStatus =
  | 'connected'
  | 'connecting'
  | 'reconnecting'
  | 'error'
  | 'disconnected'
  | 'disabled'
  | 'needs-auth';

/** One configured MCP server as the settings page shows it. */
export interface UiServer {
  name: string;
  source: 'user' | 'project' | 'plugin' | 'constructor';
  /** `stdio`, `http`, `sse` (or an unknown type as written). */
  transport: string;
  /** The command line or the URL as written, secrets masked. */
  target: string;
  status: ServerStatus;
  /** Why it failed or why it is off. */
  error?: string;
  toolCount: number;
  /** The tools shown come from the snapshot cache of an earlier connection (not live). */
  fromCache: boolean;
  /** Epoch ms of the last successful connection (live or cached). */
  lastConnectedAt?: number;
  /** Absolute path of the config file that defines it (user and project servers). */
  file?: string;
  /** The plugin that contributes it. */
  plugin?: string;
  /** Plugin (and host-set) servers cannot be deleted here. */
  readOnly: boolean;
}

/** The server list with its version: a page keeps the highest version it has seen. */
export interface McpSnapshot {
  /** Grows by one with every snapshot this process builds. */
  version: number;
  servers: UiServer[];
  /** Absolute paths of the user and project config files (they may not exist yet). */
  files: { user: string; project: string };
  workdir: string;
  /** The project's folder name, used in prompts. */
  project: string;
}

/** A message of the conversation (`isMeta` messages are never sent). */
export interface UiMessage {
  /** Position in the agent's history. */
  id: number;
  role: 'user' | 'assistant' | 'tool';
  text: string;
  toolCalls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  /** Tool results: the call they answer. */
  toolCallId?: string;
  name?: string;
  isError?: boolean;
}

/** A tool call waiting for the user's answer. */
export interface UiApproval {
  id: string;
  fullName: string;
  server?: string;
  tool: string;
  arguments: Record<string, unknown>;
  description?: string;
  reason: string;
}

/** A form an MCP server asks the user to fill in (MCP elicitation, form mode). */
export interface UiElicitation {
  id: string;
  server: string;
  message: string;
  /** A flat JSON Schema object: `properties` of type string (maybe `enum`), number, integer or boolean. */
  schema: {
    type: 'object';
    properties: Record<
      string,
      { type?: string; title?: string; description?: string; enum?: string[]; default?: unknown }
    >;
    required?: string[];
  };
}

/** `GET /api/state`. */
export interface UiState {
  sessionId: string;
  workdir: string;
  model: string;
  busy: boolean;
  /** Text streamed so far in the running model call. */
  streaming: string;
  messages: UiMessage[];
  approvals: UiApproval[];
  elicitations: UiElicitation[];
  mcp: McpSnapshot;
}

/** Events of `GET /api/events` (Server-Sent Events: `event: <name>`, `data: <json>`). */
export interface UiEvents {
  message: UiMessage;
  delta: { text: string };
  busy: { busy: boolean; error?: string; stopped?: boolean };
  approvals: { approvals: UiApproval[] };
  elicitations: { elicitations: UiElicitation[] };
  mcp: McpSnapshot;
  /** A sign-in started from the page ended (the list follows as an `mcp` event). */
  signIn: { server: string; ok: boolean; error?: string };
}

/** Every error response: `{ "error": { "code", "message" } }`. */
export interface UiErrorBody {
  error: { code: string; message: string };
}
