import { resolveMaxChars } from './errors';
import { hashInstructions } from './hash';
import { latestInstructionMarkers } from './markers';
import { compareNames, renderInstructionsMessage } from './render';
import type {
  HistoryMessage,
  InstructionsMessage,
  InstructionsOptions,
  InstructionsPlan,
  PlannedAnnouncement,
  PlannedRetirement,
  ServerInstructionsState,
} from './types';

/**
 * Decides, without rendering, which servers to announce and which to retire
 * this turn. The history's markers are the only memory.
 *
 * For each server (first entry wins when a name repeats in `servers`):
 * - announce when it is available, has instructions (a string with at least
 *   one non-whitespace character), is permitted, and the latest marker for it
 *   is not an announcement with the same hash (no marker, a retirement, or a
 *   different hash all lead to a new announcement);
 * - retire (reason `offline`) when the latest marker for it is an
 *   announcement and it is not available;
 * - retire (reason `withdrawn`) when the latest marker for it is an
 *   announcement and it is available but no longer has instructions;
 * - otherwise nothing: in particular a server that is available but not
 *   permitted is neither announced nor retired.
 *
 * A server whose latest marker is an announcement but which is absent from
 * `servers` is retired with reason `removed`.
 */
export function planInstructionsDelta(
  history: readonly HistoryMessage[],
  servers: readonly ServerInstructionsState[],
): InstructionsPlan {
  const latest = latestInstructionMarkers(history);
  const announce: PlannedAnnouncement[] = [];
  const retire: PlannedRetirement[] = [];
  const configured = new Set<string>();

  for (const server of Array.isArray(servers) ? servers : []) {
    if (server === null || typeof server !== 'object') continue;
    const { name } = server;
    if (typeof name !== 'string' || name.length === 0 || configured.has(name)) continue;
    configured.add(name);

    const last = latest.get(name);
    const lastAnnounced = last?.state === 'announced' ? last : undefined;

    if (server.available !== true) {
      if (lastAnnounced) retire.push({ server: name, reason: 'offline' });
      continue;
    }
    const text = server.instructions;
    if (typeof text !== 'string' || !/\S/.test(text)) {
      if (lastAnnounced) retire.push({ server: name, reason: 'withdrawn' });
      continue;
    }
    if (server.permitted !== true) continue;
    const hash = hashInstructions(text);
    if (lastAnnounced?.hash === hash) continue;
    announce.push({ server: name, instructions: text, hash, replaces: lastAnnounced !== undefined });
  }

  for (const last of latest.values()) {
    if (last.state === 'announced' && !configured.has(last.server)) {
      retire.push({ server: last.server, reason: 'removed' });
    }
  }

  announce.sort((a, b) => compareNames(a.server, b.server));
  retire.sort((a, b) => compareNames(a.server, b.server));
  return { announce, retire };
}

/**
 * The instructions delta of this turn: one message to append to the history
 * before the model call, or `null` when there is nothing new to say.
 *
 * Pure and synchronous: no module state, no clock, inputs never mutated. Call
 * it every turn with the full history (after any compaction or rewind) and the
 * current state of every configured server; append the returned message as
 * is (keep its `mcpInstructions` field when persisting), and the next call
 * with the same servers returns `null`.
 *
 * @param history - the conversation so far; any objects, only `mcpInstructions` is read.
 * @param servers - every configured server and what the host knows of it this turn.
 * @param options - `maxChars` (default 2048) per server text shown.
 * @throws {McpInstructionsError} `INVALID_MAX_CHARS` when `maxChars` is not a positive integer or Infinity.
 */
export function computeInstructionsDelta(
  history: readonly HistoryMessage[],
  servers: readonly ServerInstructionsState[],
  options: InstructionsOptions = {},
): InstructionsMessage | null {
  resolveMaxChars(options.maxChars); // fail on a bad option even when there is nothing to say
  const plan = planInstructionsDelta(history, servers);
  return renderInstructionsMessage(plan, options);
}
