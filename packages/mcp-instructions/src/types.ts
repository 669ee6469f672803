/**
 * One server's entry in an {@link InstructionsMarker}: the server announced
 * its instructions, and `hash` identifies the full (untruncated) text.
 */
export interface InstructionsAnnouncement {
  /** Server name, exactly as configured. */
  readonly server: string;
  /** {@link hashInstructions} of the server's full, untruncated instructions text. */
  readonly hash: string;
}

/**
 * The machine-readable memory carried by every message this package produces
 * (field `mcpInstructions`). It is the only state: it lives in the history,
 * persists with the transcript and disappears with compaction or rewind.
 */
export interface InstructionsMarker {
  /** Servers whose instructions the message announces. */
  readonly announced: readonly InstructionsAnnouncement[];
  /** Servers whose earlier instructions the message declares no longer in effect. */
  readonly retired: readonly string[];
}

/**
 * An element of the conversation history. Any object is accepted: the
 * package only reads the optional `mcpInstructions` field and ignores every
 * other field, so hosts keep their own message shape. Elements that are not
 * objects, and `mcpInstructions` values that are malformed, are ignored.
 */
export type HistoryMessage = object | { readonly mcpInstructions?: InstructionsMarker };

/**
 * What the host knows about one configured MCP server this turn.
 */
export interface ServerInstructionsState {
  /** Server name, exactly as configured (the `<server>` in `mcp__<server>__<tool>`). */
  readonly name: string;
  /**
   * `true` when the server can be used this turn: connected, or reconnecting
   * with its last tool list kept. Anything but `true` (disconnected, connecting
   * for the first time, error, missing) counts as unavailable.
   */
  readonly available: boolean;
  /** The `instructions` string from the server's `initialize` result, if any. */
  readonly instructions?: string | undefined;
  /**
   * `false` when permission rules deny every one of the server's tools. A
   * server with zero tools is permitted. Anything but `true` counts as not
   * permitted (fail closed: denied content never reaches the model).
   */
  readonly permitted: boolean;
}

/**
 * The message {@link computeInstructionsDelta} asks the host to append to the
 * history before the next model call.
 *
 * `role` is `'user'`: the text is a host notice wrapped in
 * `<system-reminder>`, sent on the user side because most chat APIs reject a
 * `system` message in mid-conversation (Anthropic's Messages API has no
 * system role in `messages` at all). See the README.
 */
export interface InstructionsMessage {
  role: 'user';
  /** Hidden from UIs, persisted in the transcript. */
  isMeta: true;
  /** Model-visible text. */
  content: string;
  /** The marker: the package's only memory. Keep it when persisting the message. */
  mcpInstructions: {
    announced: { server: string; hash: string }[];
    retired: string[];
  };
}

/**
 * Why a server's announced instructions stop applying.
 * - `offline`: the server is configured but unavailable (disconnected, failed, error).
 * - `removed`: the server is no longer in `servers` at all (removed from config).
 * - `withdrawn`: the server is available but no longer reports instructions.
 */
export type RetirementReason = 'offline' | 'removed' | 'withdrawn';

/** One announcement decided by {@link planInstructionsDelta}. */
export interface PlannedAnnouncement {
  readonly server: string;
  /** The full, untruncated text (the renderer cuts it). */
  readonly instructions: string;
  /** {@link hashInstructions} of `instructions`. */
  readonly hash: string;
  /**
   * `true` when the latest marker for this server announced a different text,
   * so this announcement replaces it.
   */
  readonly replaces: boolean;
}

/** One retirement decided by {@link planInstructionsDelta}. */
export interface PlannedRetirement {
  readonly server: string;
  readonly reason: RetirementReason;
}

/** The decision of one turn, before rendering. Both lists are sorted by server name. */
export interface InstructionsPlan {
  readonly announce: readonly PlannedAnnouncement[];
  readonly retire: readonly PlannedRetirement[];
}

/** Options of {@link computeInstructionsDelta} and {@link renderInstructionsMessage}. */
export interface InstructionsOptions {
  /**
   * Largest number of characters (JS string length, UTF-16 code units, no
   * CJK weighting) of one server's text shown to the model. Longer text is
   * cut and followed by a note saying so. A positive integer, or `Infinity`.
   * @default 2048
   */
  readonly maxChars?: number;
}

/** The latest marker entry for one server, as found by {@link latestInstructionMarkers}. */
export type LatestInstructionMarker =
  | { readonly state: 'announced'; readonly server: string; readonly hash: string; readonly index: number }
  | { readonly state: 'retired'; readonly server: string; readonly index: number };

/** A marker found in the history by {@link findInstructionMarkers}. */
export interface FoundInstructionMarker {
  /** Index of the message in the history array. */
  readonly index: number;
  /** The marker, with malformed entries dropped. */
  readonly marker: InstructionsMarker;
}
