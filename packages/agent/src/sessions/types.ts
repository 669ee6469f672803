import type { Message } from '../model';

/** A loaded session. */
export interface LoadedSession {
  id: string;
  messages: Message[];
  /** Problems met while reading (e.g. a torn last line was skipped). */
  warnings: string[];
}

/** A stored session, as listed. */
export interface SessionInfo {
  id: string;
  /** Last write (epoch ms). */
  updatedAt: number;
}

/**
 * Where transcripts live. The default is {@link createJsonlSessionStore};
 * hosts may keep sessions anywhere else by implementing this.
 */
export interface SessionStore {
  /** Load a session by id, or the latest one of `workdir` with `'latest'`. Undefined when there is none. */
  load(workdir: string, id: string | 'latest'): Promise<LoadedSession | undefined>;
  /** Append messages to the session (creating it). */
  append(workdir: string, id: string, messages: readonly Message[]): Promise<void>;
  /** Replace the whole transcript (compaction, rewind). Atomic. */
  rewrite(workdir: string, id: string, messages: readonly Message[]): Promise<void>;
  /** Sessions of `workdir`, newest first. */
  list(workdir: string): Promise<SessionInfo[]>;
  /** A directory for this session's files (spilled tool output, saved images). Not created here. */
  filesDir(workdir: string, id: string): string;
}
