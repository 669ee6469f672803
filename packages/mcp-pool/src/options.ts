import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { Lifecycle, ResolvedServer } from '@wave/mcp-config';
import type { PoolOAuthOptions } from './auth/manager';
import type { ReconnectOptions } from './backoff';
import type {
  ClientFeatureOverrides,
  ElicitationHandler,
  RootsProvider,
  SamplingHandler,
} from './client-features';
import type { Clock } from './clock';
import type { TransportFactory } from './transport';
import type { PoolWarning } from './warnings';

/**
 * The pool's defaults, written once: every file that needs one reads it here
 * (the `@default` tags of the options below state the same values).
 */
export const POOL_DEFAULTS = {
  /** A server without `lifecycle` is dialed on first use and closed when idle. */
  lifecycle: 'lazy' satisfies Lifecycle as Lifecycle,
  clientInfo: { name: 'wave-mcp-pool', version: '0.1.0' },
  maxToolsPerServer: 64,
  maxConnections: 16,
  connectMs: 30_000,
  callMs: 600_000,
  callMaxTotalMs: 3_600_000,
  logsPerServer: 100,
  idleMs: 600_000,
  killGraceMs: 2_000,
  stderrBytes: 16_384,
  maxMessageBytes: 10 * 1024 * 1024,
} as const;

/** A server's lifecycle, the default applied. */
export function lifecycleOf(server: ResolvedServer): Lifecycle {
  return server.config.lifecycle ?? POOL_DEFAULTS.lifecycle;
}

/** Hard limits of a pool. */
export interface PoolLimits {
  /**
   * Largest message read from a stdio server (one stdout line), in bytes. A
   * larger response fails its call at once with `RESPONSE_TOO_LARGE` and the
   * connection stays up. @default 10485760 (10 MiB)
   */
  maxMessageBytes?: number;
  /** Tools kept per server; the rest are counted in `toolsDropped`. @default 64 */
  maxToolsPerServer?: number;
  /**
   * Live connections (connecting, connected or reconnecting) per pool. A dial
   * beyond it closes the least recently used idle connection; when every live
   * connection is busy or starting, the dial fails with `CONNECTION_LIMIT`.
   * @default 16
   */
  maxConnections?: number;
  /** Log messages (`notifications/message`) kept per server for `logs(server)`. @default 100 */
  logsPerServer?: number;
}

/** Time limits, in ms. A server's own `connectTimeoutMs` / `callTimeoutMs` / `idleTimeoutMs` wins. */
export interface PoolTimeouts {
  /** Whole dial: spawn/connect, `initialize`, first tool listing. @default 30000 */
  connectMs?: number;
  /**
   * One tool call (the request is cancelled after it). For a call with
   * `onProgress`, this is an idle limit instead: each progress notification
   * starts it again, and `callMaxTotalMs` bounds the whole call.
   * @default 600000
   */
  callMs?: number;
  /** Absolute limit of a call with `onProgress`, however much progress it reports. @default 3600000 */
  callMaxTotalMs?: number;
  /** `lazy` servers unused this long are closed (not sticky). `Infinity` = never. @default 600000 */
  idleMs?: number;
  /** Grace between SIGTERM and SIGKILL when killing a server's process tree. @default 2000 */
  killGraceMs?: number;
}

/** Options of {@link McpPool.create}. */
export interface McpPoolOptions {
  /**
   * Told about what the pool tolerated or could not do, without failing a
   * call or a connection: a malformed tool dropped from a server's list
   * (`TOOL_DROPPED`, naming server, tool and why), a ledger that could not
   * be written or swept (`LEDGER`). A throwing listener is ignored.
   * @default ignore
   */
  onWarning?: (warning: PoolWarning) => void;
  /**
   * The wave home: every stdio process tree the pool spawns is recorded in a
   * ledger under `<home>/processes/` (released when the tree is killed), so
   * a later host can reap what a crashed one left behind.
   * @default $WAVE_HOME, else ~/.wave (as `@wave/mcp-config` resolves it)
   */
  home?: string;
  /**
   * Reap the trees recorded by hosts that are no longer running, once, when
   * the pool first dials (see {@link McpPool.sweepLedgers}).
   * @default true
   */
  sweepOnStart?: boolean;
  /**
   * OAuth for remote servers that need a sign-in: tokens are kept under
   * `<home>/oauth/`. `{ enabled: false }` turns it off. See `PoolOAuthOptions`.
   * @default {}
   */
  oauth?: PoolOAuthOptions;
  /** The servers of this pool (usually `loadMcpConfig().servers`). @default [] */
  servers?: readonly ResolvedServer[];
  /** How the pool introduces itself in `initialize`. @default { name: 'wave-mcp-pool', version: '0.1.0' } */
  clientInfo?: Implementation;
  limits?: PoolLimits;
  /** Reconnection of dropped http/sse connections (see `DEFAULT_RECONNECT`). */
  reconnect?: ReconnectOptions;
  timeouts?: PoolTimeouts;
  /** Creates transports; tests inject fakes. @default defaultTransportFactory */
  transportFactory?: TransportFactory;
  /**
   * One pool for many agents: connections are keyed by config fingerprint and
   * shared between the leases of {@link McpPool.lease}. @default false
   */
  shared?: boolean;
  /** Time and timers. @default systemClock() */
  clock?: Clock;
  /** Randomness for backoff jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Bytes of stderr kept per stdio server. @default 16384 */
  stderrBytes?: number;
  /** proc-reaper marker namespace of spawned servers. @default process.env.WAVE_REAPER_NAMESPACE ?? 'wave' */
  markerNamespace?: string;
  /** The directory the pool works for: the default root offered to servers. @default process.cwd() */
  workdir?: string;
  /**
   * Answers servers' form-mode elicitation requests. Declared in `initialize`
   * only when given. On `accept`, fields left out get the schema's defaults.
   * @default undefined (not declared)
   */
  onElicitation?: ElicitationHandler;
  /** Answers servers' sampling requests. Declared only when given. @default undefined (not declared) */
  onSampling?: SamplingHandler;
  /**
   * The roots servers may work in (`roots/list`); `false` declares no roots.
   * @default () => [{ uri: <workdir as file:// URL>, name: <its base name> }]
   */
  roots?: RootsProvider | false;
  /**
   * Per-server client features, by server name: a key given here replaces
   * the pool's `onElicitation` / `onSampling` / `roots` for that server
   * (`undefined` or `false` turns it off). @default {}
   */
  perServer?: ClientFeatureOverrides;
}

export interface ResolvedPoolSettings {
  clientInfo: Implementation;
  maxToolsPerServer: number;
  maxConnections: number;
  connectMs: number;
  callMs: number;
  callMaxTotalMs: number;
  logsPerServer: number;
  idleMs: number;
  killGraceMs: number;
  stderrBytes: number;
  maxMessageBytes: number;
}

function num(v: number | undefined, d: number, min: number): number {
  return typeof v === 'number' && !Number.isNaN(v) && v >= min ? v : d;
}

export function resolveSettings(o: McpPoolOptions): ResolvedPoolSettings {
  const d = POOL_DEFAULTS;
  return {
    clientInfo: o.clientInfo ?? { ...d.clientInfo },
    maxToolsPerServer: Math.floor(num(o.limits?.maxToolsPerServer, d.maxToolsPerServer, 0)),
    maxConnections: Math.floor(num(o.limits?.maxConnections, d.maxConnections, 1)),
    connectMs: num(o.timeouts?.connectMs, d.connectMs, 1),
    callMs: num(o.timeouts?.callMs, d.callMs, 1),
    callMaxTotalMs: num(o.timeouts?.callMaxTotalMs, d.callMaxTotalMs, 1),
    logsPerServer: Math.floor(num(o.limits?.logsPerServer, d.logsPerServer, 0)),
    idleMs: num(o.timeouts?.idleMs, d.idleMs, 0),
    killGraceMs: num(o.timeouts?.killGraceMs, d.killGraceMs, 0),
    stderrBytes: Math.floor(num(o.stderrBytes, d.stderrBytes, 256)),
    maxMessageBytes: Math.floor(num(o.limits?.maxMessageBytes, d.maxMessageBytes, 1024)),
  };
}
