import { resolveMaxChars } from './errors';
import { hashInstructions } from './hash';
import type { InstructionsMessage, InstructionsOptions, RetirementReason } from './types';

/** An announcement to render: a server and its full, untruncated text. */
export interface RenderAnnouncement {
  readonly server: string;
  readonly instructions: string;
  /** Hash of `instructions`; computed with {@link hashInstructions} when omitted. */
  readonly hash?: string;
  /**
   * Say that this text replaces an earlier announcement of the same server.
   * @default false
   */
  readonly replaces?: boolean;
}

/** A retirement to render. */
export interface RenderRetirement {
  readonly server: string;
  /** @default 'offline' */
  readonly reason?: RetirementReason;
}

/** What {@link renderInstructionsMessage} renders. */
export interface RenderInput {
  readonly announce: readonly RenderAnnouncement[];
  readonly retire: readonly (RenderRetirement | string)[];
}

/** Result of cutting one text to `maxChars`. */
export interface TruncatedText {
  /** The part shown: a prefix of the text, at most `maxChars` characters. */
  readonly shown: string;
  readonly truncated: boolean;
}

/**
 * Cuts `text` to at most `maxChars` JS string characters (UTF-16 code units).
 * If the cut would split a surrogate pair, the cut moves one unit earlier, so
 * the shown part never ends in half a character (it is then `maxChars - 1`
 * units long).
 */
export function truncateInstructions(text: string, maxChars: number): TruncatedText {
  if (text.length <= maxChars) return { shown: text, truncated: false };
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  const next = text.charCodeAt(end);
  if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end -= 1;
  return { shown: text.slice(0, end), truncated: true };
}

/**
 * Renders one instructions message from a list of announcements and
 * retirements, or returns `null` when both lists are empty (never an empty
 * message or an empty heading).
 *
 * Servers are sorted by name (plain UTF-16 code unit order, locale
 * independent) and deduplicated (first entry wins), so the same input gives
 * byte-for-byte the same message. Each text is kept verbatim inside its own
 * `<mcp-server-instructions server="...">` block; a text over `maxChars` is
 * cut and followed by a line that says so. Retirements say the server went
 * offline (or stopped providing instructions) and that its earlier
 * instructions no longer apply; they never claim to remove anything.
 *
 * Exported for hosts that persist transcripts in their own format.
 * @throws {McpInstructionsError} `INVALID_MAX_CHARS` when `maxChars` is not a positive integer or Infinity.
 */
export function renderInstructionsMessage(
  input: RenderInput,
  options: InstructionsOptions = {},
): InstructionsMessage | null {
  const maxChars = resolveMaxChars(options.maxChars);
  const announce = uniqueSorted(input.announce, (a) => a.server);
  const retire = uniqueSorted(
    input.retire.map((r): RenderRetirement => (typeof r === 'string' ? { server: r } : r)),
    (r) => r.server,
  );
  if (announce.length === 0 && retire.length === 0) return null;

  const sections: string[] = [];
  if (announce.length > 0) {
    const blocks = announce.map((a) => renderAnnouncement(a, maxChars));
    sections.push(
      '# MCP server instructions\n\n' +
        'The following MCP servers provided instructions for how to use their tools and resources. ' +
        "Each server's text is quoted verbatim inside its own block.\n\n" +
        blocks.join('\n\n'),
    );
  }
  if (retire.length > 0) {
    const lines = retire.map((r) => `- ${retirementSentence(r.server, r.reason ?? 'offline')}`);
    sections.push('# MCP server instructions no longer in effect\n\n' + lines.join('\n'));
  }

  return {
    role: 'user',
    isMeta: true,
    content: `<system-reminder>\n${sections.join('\n\n')}\n</system-reminder>`,
    mcpInstructions: {
      announced: announce.map((a) => ({
        server: a.server,
        hash: a.hash ?? hashInstructions(a.instructions),
      })),
      retired: retire.map((r) => r.server),
    },
  };
}

function renderAnnouncement(a: RenderAnnouncement, maxChars: number): string {
  const label = JSON.stringify(a.server);
  const { shown, truncated } = truncateInstructions(a.instructions, maxChars);
  let out = '';
  if (a.replaces === true) {
    out += `Updated instructions from MCP server ${label}; they replace the instructions it provided earlier in this conversation.\n`;
  }
  out += `<mcp-server-instructions server=${label}>\n${shown}`;
  if (!shown.endsWith('\n')) out += '\n';
  out += '</mcp-server-instructions>';
  if (truncated) {
    out += `\n[The instructions of MCP server ${label} were truncated: showing the first ${shown.length} of ${a.instructions.length} characters.]`;
  }
  return out;
}

function retirementSentence(server: string, reason: RetirementReason): string {
  const label = JSON.stringify(server);
  const tail = 'The instructions it provided earlier in this conversation no longer apply.';
  switch (reason) {
    case 'removed':
      return `MCP server ${label} went offline: it was removed from the configuration. ${tail}`;
    case 'withdrawn':
      return `MCP server ${label} no longer provides instructions. ${tail}`;
    default:
      return `MCP server ${label} went offline (disconnected or failed). ${tail}`;
  }
}

function uniqueSorted<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(item);
  }
  return out.sort((a, b) => compareNames(key(a), key(b)));
}

/** Locale-independent ordering of server names (UTF-16 code units). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
