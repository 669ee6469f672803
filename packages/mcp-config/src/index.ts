/**
 * @wave/mcp-config: read, validate, expand, merge and edit MCP server
 * configuration from every source (constructor, `<workdir>/.mcp.json`,
 * `<home>/mcp.json`, plugins).
 */
export { assertConnectable, isToolAutoApproved, matchToolGlob } from './connect';
export {
  displayServer,
  MASK,
  maskArgs,
  maskDefaults,
  maskOAuth,
  maskSecrets,
  maskUrl,
  maskValue,
  type ServerDisplay,
} from './display';
export {
  type AddServerOptions,
  type AddServerResult,
  addServer,
  addServerToText,
  type ConfigEditor,
  createConfigEditor,
  type EditOptions,
  type RemoveServerResult,
  removeServer,
  removeServerFromText,
  type TextEdit,
} from './edit';
export {
  isMcpConfigError,
  McpConfigError,
  type McpConfigErrorCode,
  type McpConfigErrorDetails,
} from './errors';
export {
  type ExpandOptions,
  type ExpandResult,
  expandVars,
  hasReferences,
  referencedVariables,
} from './expand';
export { type FingerprintInput, fingerprint, fingerprintPayload } from './fingerprint';
export { type ConfigFileStat, type ConfigFs, nodeConfigFs, type ReadFileOptions } from './fs';
export { serverIdentity } from './identity';
export {
  type LoadMcpConfigOptions,
  type LoadMcpConfigResult,
  loadMcpConfig,
  MAX_CONFIG_FILE_BYTES,
  readConfigLayer,
} from './load';
export {
  isLocallyDisabled,
  isServerTrusted,
  LOCAL_STATE_FILE,
  type LocalServerRef,
  type LocalState,
  localServerKey,
  localStatePath,
  readLocalState,
  setServerDisabled,
  trustServer,
  updateLocalState,
} from './local-state';
export {
  type MergeOptions,
  mergeSources,
  type ResolveContext,
  type ResolveResult,
  resolveServer,
  SOURCE_PRECEDENCE,
} from './merge';
export { detectFormatting, type ParsedConfig, parseConfigText } from './parse';
export {
  PROJECT_CONFIG_FILE,
  projectConfigPath,
  type ResolveHomeOptions,
  resolveHome,
  USER_CONFIG_FILE,
  userConfigPath,
} from './paths';
export {
  type DiscoveredPlugin,
  type DiscoverPluginsResult,
  discoverPlugins,
  PLUGIN_MANIFESTS,
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
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_LIFECYCLE,
  type IssueContext,
  isKnownTransport,
  MAX_SERVER_NAME_LENGTH,
  MAX_SERVERS,
  MAX_TIMEOUT_MS,
  SERVER_NAME_PATTERN,
  type ServerValidation,
  serverNameProblem,
  validateServer,
} from './validate';
