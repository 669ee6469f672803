import type {
  FoundInstructionMarker,
  HistoryMessage,
  InstructionsAnnouncement,
  InstructionsMarker,
  LatestInstructionMarker,
} from './types';

/**
 * Reads the `mcpInstructions` field of one history element and returns a
 * clean marker, or `undefined` when the element carries no usable marker.
 * Malformed entries (names that are not non-empty strings, hashes that are
 * not strings) are dropped; a malformed field never throws.
 */
export function readInstructionMarker(message: unknown): InstructionsMarker | undefined {
  if (message === null || typeof message !== 'object') return undefined;
  const raw = (message as { mcpInstructions?: unknown }).mcpInstructions;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const { announced, retired } = raw as { announced?: unknown; retired?: unknown };
  const cleanAnnounced: InstructionsAnnouncement[] = [];
  if (Array.isArray(announced)) {
    for (const entry of announced) {
      if (entry === null || typeof entry !== 'object') continue;
      const { server, hash } = entry as { server?: unknown; hash?: unknown };
      if (isServerName(server) && typeof hash === 'string') cleanAnnounced.push({ server, hash });
    }
  }
  const cleanRetired: string[] = [];
  if (Array.isArray(retired)) {
    for (const server of retired) if (isServerName(server)) cleanRetired.push(server);
  }
  return { announced: cleanAnnounced, retired: cleanRetired };
}

/**
 * Every instructions marker in the history, in history order, with the index
 * of the message that carries it. For hosts that persist transcripts in their
 * own format and need to carry the markers across, or to show what was
 * announced. Elements that are not objects, or carry no `mcpInstructions`
 * object, are skipped; malformed entries inside a marker are dropped.
 */
export function findInstructionMarkers(history: readonly HistoryMessage[]): FoundInstructionMarker[] {
  const found: FoundInstructionMarker[] = [];
  if (!Array.isArray(history)) return found;
  for (let index = 0; index < history.length; index++) {
    const marker = readInstructionMarker(history[index]);
    if (marker !== undefined) found.push({ index, marker });
  }
  return found;
}

/**
 * The latest marker entry for every server that has one, keyed by server
 * name. The history is scanned once, backwards; for each server the first
 * entry met (the latest) wins. Within one message a retirement wins over an
 * announcement of the same server, and of repeated announcements the last
 * one in the array wins.
 *
 * The scan always reaches the start of the history: a server that was
 * announced and then removed from the configuration is only discoverable
 * from its marker, wherever it is. Messages without a marker cost one
 * property read.
 */
export function latestInstructionMarkers(
  history: readonly HistoryMessage[],
): Map<string, LatestInstructionMarker> {
  const latest = new Map<string, LatestInstructionMarker>();
  if (!Array.isArray(history)) return latest;
  for (let index = history.length - 1; index >= 0; index--) {
    const message: unknown = history[index];
    if (message === null || typeof message !== 'object') continue;
    if ((message as { mcpInstructions?: unknown }).mcpInstructions === undefined) continue;
    const marker = readInstructionMarker(message);
    if (marker === undefined) continue;
    for (const server of marker.retired) {
      if (!latest.has(server)) latest.set(server, { state: 'retired', server, index });
    }
    for (let k = marker.announced.length - 1; k >= 0; k--) {
      const { server, hash } = marker.announced[k]!;
      if (!latest.has(server)) latest.set(server, { state: 'announced', server, hash, index });
    }
  }
  return latest;
}

function isServerName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
