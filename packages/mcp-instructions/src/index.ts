/** Every export here is public API: which server instructions to announce or retire this turn. Tests import modules directly. */
export { computeInstructionsDelta } from './delta';
export { isMcpInstructionsError, McpInstructionsError, type McpInstructionsErrorCode } from './errors';
export { readInstructionMarker } from './markers';
export type {
  HistoryMessage,
  InstructionsAnnouncement,
  InstructionsMarker,
  InstructionsMessage,
  InstructionsOptions,
  ServerInstructionsState,
} from './types';
