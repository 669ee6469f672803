// Every export here is public API: add one only when a consumer needs it; tests import `../src/<module>`.
/**
 * @wave/mcp-pool: the MCP connection pool. Lazy dialing, reconnect with
 * backoff, crash detection, whole-tree teardown, no orphan processes.
 * @packageDocumentation
 */
export type { HttpAuth } from './auth/http-auth';
export {
  AuthorizeError,
  type AuthorizeErrorReason,
  type AuthorizeOptions,
  type PoolOAuthOptions,
} from './auth/manager';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff';
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
export { isMcpPoolError, McpPoolError, type PoolErrorCode } from './errors';
export { defaultTransportFactory } from './factory';
export type { ServerErrorInfo, ServerStatus } from './machine';
export type { McpPoolOptions, PoolLimits, PoolTimeouts } from './options';
export {
  type CallToolOptions,
  type EnsureConnectedOptions,
  McpPool,
  type McpPoolApi,
  type McpPoolLease,
  type PoolSnapshot,
  type ServerRecord,
} from './pool';
export type { ServerRequestOptions } from './resources';
export type {
  TerminateResult,
  TransportContext,
  TransportDiagnostics,
  TransportFactory,
  TransportHandle,
  TransportLoss,
} from './transport';
export type { PoolWarning, PoolWarningCode } from './warnings';
