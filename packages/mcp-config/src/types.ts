/** Where a server definition came from. Higher in this list wins on a name clash. */
export type ConfigSource = 'constructor' | 'project' | 'user' | 'plugin';

/** Known transports. An unknown `type` is kept as a plain string and fails at connect time. */
export type KnownTransport = 'stdio' | 'http' | 'sse';

/** When a server is dialed. */
export type Lifecycle = 'lazy' | 'eager' | 'keep-alive';

/** An environment to expand `${VAR}` from (`process.env` has this shape). */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * One server entry as written in `.mcp.json` (after validation). In
 * {@link ResolvedServer.config} the values are the *expanded* ones (`${VAR}`
 * replaced); the unexpanded originals are kept in {@link ResolvedServer.raw}.
 */
export interface ServerConfig {
  /** `stdio` | `http` | `sse`. Inferred when absent: `command` means stdio, `url` means http. */
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** OAuth 2.1 sign-in settings of an http/sse server (see {@link OAuthConfig}). */
  oauth?: OAuthConfig;
  /**
   * `true`: the server is listed (as disabled) but never dialed; a connect
   * attempt fails with `SERVER_DISABLED`. Written by Cline, Roo, Kiro.
   * @default false
   */
  disabled?: boolean;
  /** @default 'lazy' */
  lifecycle?: Lifecycle;
  /** @default 600000 */
  idleTimeoutMs?: number;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** Tool-name globs that need no approval. Only honoured from the user and constructor sources. */
  approveTools?: string[];
  /**
   * Tool-name globs (relative to this server, as `approveTools`) -> whether
   * the tool is read-only, overriding the tool's own `readOnlyHint`; first
   * match in written order wins. Only decides which calls may run in
   * parallel, never approval, so it is honoured from every source.
   * @default {} (each tool's own `readOnlyHint`)
   */
  readOnlyTools?: Record<string, boolean>;
  description?: string;
}

/**
 * OAuth settings of one remote server. Every field is optional: with none,
 * the client registers itself (client ID metadata document or dynamic
 * registration) and asks for the scopes the server names.
 */
export interface OAuthConfig {
  /** A client ID registered with the authorization server beforehand. `${VAR}` is expanded. */
  clientId?: string;
  /**
   * The secret of a pre-registered confidential client. Honoured only from the
   * user file and the constructor option (an error from project and plugin
   * sources). `${VAR}` is expanded; always masked for display.
   */
  clientSecret?: string;
  /** Scopes to request instead of those the server advertises. */
  scopes?: string[];
  /**
   * Fixed port of the loopback redirect listener (`http://127.0.0.1:<port>/callback`),
   * for clients registered with one exact redirect URI.
   * @default a random free port
   */
  callbackPort?: number;
  /**
   * `client_credentials`: machine-to-machine, no browser: the pool gets
   * tokens with the client's own credentials (`clientId` with `clientSecret`,
   * sent as client_secret_basic, or with `privateKey`, sent as
   * private_key_jwt).
   * @default 'authorization_code'
   */
  grant?: 'authorization_code' | 'client_credentials';
  /**
   * PEM private key for private_key_jwt client authentication
   * (`grant: "client_credentials"`). A secret: same rules as `clientSecret`.
   */
  privateKey?: string;
  /** JWS algorithm of `privateKey`, e.g. `RS256`, `ES256`. @default 'RS256' */
  signingAlgorithm?: string;
}

/** A lower-precedence definition of the same server name, hidden by the winner. */
export interface ShadowedDefinition {
  source: ConfigSource;
  file?: string;
  plugin?: string;
  /** Fingerprint of the hidden definition (absent when it could not be computed). */
  fingerprint?: string;
}

/**
 * A validated, expanded, merged server, ready for a pool.
 *
 * The fields after `plugin` are always set by {@link mergeSources} and
 * `loadMcpConfig`; they are optional in the type only so that hand-built
 * servers (tests, hosts that build their own list) stay valid values.
 */
export interface ResolvedServer {
  name: string;
  source: ConfigSource;
  /** `stdio` | `http` | `sse`, or the unknown string the user wrote (connect will fail). */
  transport: KnownTransport | (string & {});
  /** Expanded configuration (what is actually run / dialed). `type` is the normalized transport. */
  config: ServerConfig;
  /** The URL as written (unexpanded, literal credentials masked: never shows an expanded secret). */
  displayUrl?: string;
  /** sha256 over the unexpanded transport fields and the workdir. */
  fingerprint: string;
  /** The file this server came from (project/user sources). */
  file?: string;
  /** The plugin that contributed this server (plugin source). */
  plugin?: string;

  /**
   * The configuration before environment expansion: the valid fields as
   * written. For plugin servers the plugin root variables are already
   * substituted and `WAVE_PLUGIN_ROOT` is in `env` (they decide what runs and
   * are not secrets). `approveTools` from untrusted sources is not here.
   */
  raw?: ServerConfig;
  /** False when a connect attempt must fail: see {@link ResolvedServer.issues} and `assertConnectable`. */
  connectable?: boolean;
  /**
   * True when the entry says `"disabled": true`: listed, never dialed
   * (`connectable` is false and `assertConnectable` throws `SERVER_DISABLED`).
   */
  disabled?: boolean;
  /** The `type` string when it is not one of stdio/http/sse. */
  unknownType?: string;
  /** Every issue found on this definition (errors make it not connectable). */
  issues?: ConfigIssue[];
  /** Lower-precedence definitions of this name that this one replaces, highest first. */
  shadowed?: ShadowedDefinition[];
  /**
   * `approveTools` written in a project file or by a plugin: never applied,
   * only shown as "this project asks for ..." in approval prompts.
   */
  requestedApprovals?: string[];
  /** The plugin's root directory (plugin source). */
  pluginRoot?: string;
  /** `env` as written, with literal values masked (variable references kept). */
  displayEnv?: Record<string, string>;
  /** `headers` as written, with literal values masked (variable references kept). */
  displayHeaders?: Record<string, string>;
  /** `oauth` as written, with `clientSecret` masked like a header value. */
  displayOauth?: OAuthConfig;
}

/**
 * Stable codes of {@link ConfigIssue}. Severity is fixed per code except where
 * noted; see the README table.
 */
export type ConfigIssueCode =
  | 'CONFIG_MALFORMED'
  | 'CONFIG_PERMISSION'
  | 'CONFIG_IO'
  | 'CONFIG_EMPTY'
  | 'UNKNOWN_KEY'
  | 'NAME_INVALID'
  | 'NAME_CONFLICT'
  | 'SERVER_INVALID'
  | 'FIELD_INVALID'
  | 'TRANSPORT_CONFLICT'
  | 'TRANSPORT_UNKNOWN'
  | 'COMMAND_INVALID'
  | 'URL_INVALID'
  | 'VARIABLE_UNRESOLVED'
  | 'VARIABLE_INVALID'
  | 'FIELD_IGNORED'
  | 'APPROVALS_NOT_TRUSTED'
  | 'SECRET_NOT_TRUSTED'
  | 'DUPLICATE_SERVER'
  | 'PLUGIN_INVALID'
  | 'PLUGIN_CONFLICT'
  | 'LIMIT_EXCEEDED';

/**
 * Something wrong (or ignored) in the configuration. Never thrown: collected
 * and returned beside the servers.
 *
 * `error`: the file, or the server, does not work as written: a file error
 * skips that file; a server error makes that server not connectable (it stays
 * in the list) or, for a bad name or the server limit, drops it.
 * `warning`: something was ignored; the server works.
 */
export interface ConfigIssue {
  severity: 'error' | 'warning';
  code: ConfigIssueCode;
  source: ConfigSource;
  /** The file the problem is in (project/user sources). */
  file?: string;
  /** The plugin the problem is in (plugin source). */
  plugin?: string;
  /** The server name, when the problem is about one server. */
  server?: string;
  /** Where in the entry, e.g. `args[2]`, `env.TOKEN`, `type`. */
  field?: string;
  /** What is wrong and what to do, for a person. */
  message: string;
}

/** One source's raw server entries, as handed to {@link mergeSources}. */
export interface SourceLayer {
  source: ConfigSource;
  /** Entries as written, by name (validated by {@link mergeSources}). */
  servers: Readonly<Record<string, unknown>>;
  file?: string;
  /** Plugin name (plugin source). */
  plugin?: string;
  /** Plugin root directory: replaces `${WAVE_PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_ROOT}` (plugin source only). */
  pluginRoot?: string;
  /** File-level issues found while reading this layer; passed through in order. */
  issues?: readonly ConfigIssue[];
}

/** A plugin's contribution, as passed to `loadMcpConfig`. */
export interface PluginServers {
  name: string;
  /** Absolute path of the plugin's root directory. */
  root: string;
  mcpServers: Readonly<Record<string, unknown>>;
}

/** What {@link mergeSources} and `loadMcpConfig` return. */
export interface MergeResult {
  /** Servers in precedence order (constructor, project, user, plugin; document order inside one). */
  servers: ResolvedServer[];
  /** Every issue, file-level ones first within each source, sources in precedence order. */
  issues: ConfigIssue[];
}
