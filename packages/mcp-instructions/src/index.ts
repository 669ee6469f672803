export { computeInstructionsDelta, planInstructionsDelta } from './delta';
export type { McpInstructionsErrorCode } from './errors';
export { DEFAULT_MAX_CHARS, McpInstructionsError } from './errors';
export { HASH_PREFIX, hashInstructions } from './hash';
export { findInstructionMarkers, latestInstructionMarkers, readInstructionMarker } from './markers';
export type { RenderAnnouncement, RenderInput, RenderRetirement, TruncatedText } from './render';
export { renderInstructionsMessage, truncateInstructions } from './render';
export type {
  FoundInstructionMarker,
  HistoryMessage,
  InstructionsAnnouncement,
  InstructionsMarker,
  InstructionsMessage,
  InstructionsOptions,
  InstructionsPlan,
  LatestInstructionMarker,
  PlannedAnnouncement,
  PlannedRetirement,
  RetirementReason,
  ServerInstructionsState,
} from './types';
