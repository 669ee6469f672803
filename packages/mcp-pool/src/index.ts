/**
 * @wave/mcp-pool: the MCP connection state machine. Lazy dialing, reconnect
 * with backoff, crash detection, whole-tree teardown, no orphan processes.
 * @packageDocumentation
 */
export type { HttpAuth } from './auth/http-auth';
export {
  AuthorizeError,
  type AuthorizeErrorReason,
  type AuthorizeOptions,
  type PoolOAuthOptions,
} from './auth/manager';
export {
  backoffDelay,
  DEFAULT_RECONNECT,
  type ReconnectOptions,
  type ResolvedReconnectOptions,
  resolveReconnectOptions,
} from './backoff';
export type {
  ClientFeatureOverrides,
  ClientFeatures,
  ClientRequestContext,
  ElicitationHandler,
  ElicitationResponse,
  ListChangedEvent,
  RootsProvider,
  SamplingHandler,
  ServerLogEntry,
} from './client-features';
export { type Clock, systemClock } from './clock';
export type { CallOptions } from './core';
export { isMcpPoolError, McpPoolError, type PoolErrorCode } from './errors';
export { assertDialable, defaultTransportFactory, KNOWN_TRANSPORTS, stdioEnvironment } from './factory';
export { type HttpHandleOptions, httpHandle } from './http-transport';
export {
  type CloseReason,
  type DialMode,
  initialState,
  type MachineEffect,
  type MachineEvent,
  type MachineOptions,
  type MachineState,
  type ServerErrorInfo,
  type ServerStatus,
  transition,
} from './machine';
export type { McpPoolOptions, PoolLimits, PoolTimeouts } from './options';
export {
  type CallToolOptions,
  type EnsureConnectedOptions,
  McpPool,
  type McpPoolApi,
  McpPoolLease,
  type PoolSnapshot,
  type ServerRecord,
} from './pool';
export type { ServerRequestOptions } from './resources';
export { TailBuffer } from './ring-buffer';
export { stdioHandle, type TrackedStdioOptions, TrackedStdioTransport } from './stdio-transport';
export type {
  TerminateResult,
  TransportContext,
  TransportDiagnostics,
  TransportFactory,
  TransportHandle,
  TransportLoss,
} from './transport';
export type { PoolWarning, PoolWarningCode } from './warnings';
