/**
 * Stable error codes of `@wave/agent`. Hosts switch on `code`, never on
 * message text.
 */
export type AgentErrorCode =
  /** The agent (or host) was destroyed; nothing can run on it any more. */
  | 'AGENT_DESTROYED'
  /** An option passed to `Agent.create` / `AgentHost` is not valid. */
  | 'INVALID_OPTIONS'
  /** `sessionId` names no stored session for this workdir. */
  | 'SESSION_NOT_FOUND'
  /** A stored session could not be read or written. */
  | 'SESSION_IO'
  /** `sendMessage` was called while another turn of the same agent runs. */
  | 'TURN_IN_PROGRESS'
  /** The turn was aborted through its signal. */
  | 'TURN_ABORTED'
  /** No MCP server of that name is configured. */
  | 'UNKNOWN_SERVER'
  /** `AgentHost`: no agent with that id. */
  | 'UNKNOWN_AGENT'
  /** `AgentHost`: an agent with that id already exists. */
  | 'AGENT_EXISTS'
  /** The model adapter failed. */
  | 'MODEL_FAILED';

/** The one error class of this package: a stable `code` and a message a person can act on. */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * True for an {@link AgentError} (optionally of the given code). Checks `name`
 * and `code`, not `instanceof`, so an error from another installed copy of
 * this package is recognised too.
 */
export function isAgentError(value: unknown, code?: AgentErrorCode): value is AgentError {
  if (!(value instanceof Error) || value.name !== 'AgentError') return false;
  const actual = (value as { code?: unknown }).code;
  return typeof actual === 'string' && (code === undefined || actual === code);
}
