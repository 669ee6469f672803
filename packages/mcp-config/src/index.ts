/**
 * Every export here is public API: read, validate, expand, merge and edit MCP
 * server configuration from every source (constructor, `<workdir>/.mcp.json`,
 * `<home>/mcp.json`, plugins). Tests import modules directly.
 * @packageDocumentation
 */

export { type AtomicWriteOptions, writeFileAtomic } from './atomic-write';
export { assertConnectable, isToolAutoApproved, matchToolGlob, toolReadOnlyOverride } from './connect';
export { displayServer, maskArgs, maskOAuth, maskSecrets, maskUrl, type ServerDisplay } from './display';
export {
  type AddServerOptions,
  type AddServerResult,
  addServer,
  type ConfigEditor,
  createConfigEditor,
  type EditOptions,
  type RemoveServerResult,
  removeServer,
} from './edit';
export {
  isMcpConfigError,
  McpConfigError,
  type McpConfigErrorCode,
  type McpConfigErrorDetails,
} from './errors';
export { referencedVariables } from './expand';
export { type ConfigFileStat, type ConfigFs, nodeConfigFs, type ReadFileOptions } from './fs';
export { serverIdentity } from './identity';
export {
  type LoadMcpConfigOptions,
  type LoadMcpConfigResult,
  loadMcpConfig,
  readConfigLayer,
} from './load';
export {
  isLocallyDisabled,
  isServerTrusted,
  type LocalServerRef,
  type LocalState,
  readLocalState,
  setServerDisabled,
  trustServer,
} from './local-state';
export { type MergeOptions, mergeSources } from './merge';
export { projectConfigPath, type ResolveHomeOptions, resolveHome, userConfigPath } from './paths';
export {
  type DiscoveredPlugin,
  type DiscoverPluginsResult,
  discoverPlugins,
  pluginsDir,
  readPlugin,
} from './plugins';
export type {
  ConfigIssue,
  ConfigIssueCode,
  ConfigSource,
  Env,
  KnownTransport,
  Lifecycle,
  MergeResult,
  OAuthConfig,
  PluginServers,
  ResolvedServer,
  ServerConfig,
  ShadowedDefinition,
  SourceLayer,
} from './types';
export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_LIFECYCLE, isKnownTransport, KNOWN_TRANSPORTS } from './validate';
