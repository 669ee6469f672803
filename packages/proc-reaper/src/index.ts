export { createDarwinAdapter, type DarwinAdapterOptions } from './adapters/darwin';
export { defaultAdapter } from './adapters/index';
export { createLinuxAdapter, type LinuxAdapterOptions } from './adapters/linux';
export { execRunner } from './adapters/runner';
export { createWin32Adapter, POWERSHELL_ARGS, type Win32AdapterOptions } from './adapters/win32';
export { isAlive, killTree, listDescendants } from './api';
export { realClock } from './clock';
export { createReaper } from './engine';
export { ReaperError, type ReaperErrorCode } from './errors';
export { createLedger, isHostAlive, type LedgerEntry, type LedgerFile, parseLedgerFile } from './ledger';
export { createMarker, MARKER_ENV, resolveMarkerNamespace } from './marker';
export {
  CIM_SCRIPT,
  PS_ARGS,
  parseCimOutput,
  parseEnvironMarker,
  parseProcStat,
  parsePsOutput,
} from './parse';
export { spawnTracked } from './spawn';
export {
  aliveMembers,
  type Exclusions,
  exclusionsFor,
  extendTree,
  identityKey,
  isGone,
  isStopped,
  markerCandidates,
  type ProcessTable,
  planSignals,
  type SignalAction,
  seedTree,
  type TreeState,
  toTable,
} from './tree';
export type {
  Clock,
  CommandRunner,
  KillFn,
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
