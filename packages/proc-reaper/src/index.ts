/** Every export here is public API: spawn, kill and reap whole process trees. Tests import modules directly. */
export { isAlive, killTree, listDescendants } from './api';
export { createReaper } from './engine';
export { isProcReaperError, ProcReaperError, type ProcReaperErrorCode } from './errors';
export { createLedger } from './ledger';
export { MARKER_ENV } from './marker';
export { spawnTracked } from './spawn';
export type {
  Clock,
  KillOptions,
  KillResult,
  Ledger,
  LedgerOptions,
  ListHint,
  PlatformAdapter,
  ProcessInfo,
  Reaper,
  ReaperDeps,
  ReapTarget,
  SignalOutcome,
  SpawnOptions,
  TrackedProcess,
} from './types';
