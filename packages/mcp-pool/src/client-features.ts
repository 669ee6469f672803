import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
  type LoggingLevel,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';

/** What the host answers to a form-mode elicitation. */
export interface ElicitationResponse {
  action: 'accept' | 'decline' | 'cancel';
  /** The values the user gave (on `accept`). Fields left out get the schema's `default` (SEP-1034). */
  content?: Record<string, string | number | boolean | string[]>;
}

/** Context of a server-to-client request. */
export interface ClientRequestContext {
  /** Aborted when the server cancels the request or the connection closes. */
  signal: AbortSignal;
}

/**
 * Answers a server's `elicitation/create` (form mode): ask the user, return
 * what they chose. Given = the pool declares the `elicitation` capability.
 */
export type ElicitationHandler = (
  server: string,
  request: ElicitRequestFormParams,
  ctx: ClientRequestContext,
) => ElicitationResponse | Promise<ElicitationResponse>;

/**
 * Answers a server's `sampling/createMessage` with a model completion. Given =
 * the pool declares the `sampling` capability.
 */
export type SamplingHandler = (
  server: string,
  request: CreateMessageRequest['params'],
  ctx: ClientRequestContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/** The roots (directories, as `file://` URIs) the host exposes to servers. */
export type RootsProvider = () => Root[] | Promise<Root[]>;

/** MCP client features of a pool, or of one server (see `McpPoolOptions.perServer`). */
export interface ClientFeatures {
  /** Form-mode elicitation. None = not declared in `initialize`. @default undefined */
  onElicitation?: ElicitationHandler | undefined;
  /** Sampling. None = not declared in `initialize`. @default undefined */
  onSampling?: SamplingHandler | undefined;
  /**
   * Roots. `false` = not declared. @default the pool's `workdir` as one `file://` root
   */
  roots?: RootsProvider | false | undefined;
}

/** Per-server override: a key present (even `undefined`, or `false` for roots) replaces the pool's value. */
export type ClientFeatureOverrides = Record<string, ClientFeatures>;

/** One log message a server sent (`notifications/message`). */
export interface ServerLogEntry {
  server: string;
  level: LoggingLevel;
  /** The server's logger name, if it gave one. */
  logger?: string;
  /** What the server sent: a string or any JSON value. */
  data: unknown;
  /** When it arrived (epoch ms, pool clock). */
  at: number;
}

/** Which server list changed (`notifications/<list>/list_changed`). */
export interface ListChangedEvent {
  server: string;
  list: 'tools' | 'prompts' | 'resources';
}

/** The default roots: the workdir the pool was created for, as one `file://` root. */
export function workdirRoots(workdir: string): RootsProvider {
  const root: Root = { uri: pathToFileURL(workdir).href, name: basename(workdir) || workdir };
  return () => [{ ...root }];
}

/** The features in effect for one server: the pool's, with the server's override on top. */
export function featuresFor(
  server: string,
  pool: ClientFeatures,
  overrides: ClientFeatureOverrides | undefined,
): ClientFeatures {
  const o = overrides && Object.hasOwn(overrides, server) ? overrides[server] : undefined;
  if (!o) return pool;
  const out: ClientFeatures = { ...pool };
  if (Object.hasOwn(o, 'onElicitation')) out.onElicitation = o.onElicitation;
  if (Object.hasOwn(o, 'onSampling')) out.onSampling = o.onSampling;
  if (Object.hasOwn(o, 'roots')) out.roots = o.roots;
  return out;
}

/** The capabilities to declare in `initialize`: only what has a handler. */
export function clientCapabilities(f: ClientFeatures): ClientCapabilities {
  const caps: ClientCapabilities = {};
  if (f.roots) caps.roots = { listChanged: true };
  if (f.onSampling) caps.sampling = {};
  if (f.onElicitation) caps.elicitation = {};
  return caps;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * SEP-1034: on `accept`, every field of the requested schema that the host
 * left out (or set to `undefined`) and that has a `default` gets that default.
 * Pure: returns a new result, never changes its input.
 */
export function fillElicitationDefaults(
  schema: ElicitRequestFormParams['requestedSchema'] | undefined,
  response: ElicitationResponse,
): ElicitResult {
  if (response.action !== 'accept') return { action: response.action };
  const content: Record<string, unknown> = { ...(response.content ?? {}) };
  const props = (schema?.properties ?? {}) as Record<string, { default?: Json }>;
  for (const [key, prop] of Object.entries(props)) {
    if (content[key] === undefined && prop && typeof prop === 'object' && Object.hasOwn(prop, 'default')) {
      content[key] = prop.default;
    }
    if (content[key] === undefined) delete content[key];
  }
  return { action: 'accept', content: content as ElicitResult['content'] };
}

/** What {@link installClientFeatures} reports back to the pool. */
export interface ClientFeatureSinks {
  /** A log message arrived. */
  log(entry: Omit<ServerLogEntry, 'server' | 'at'>): void;
  /** A prompts or resources list changed. */
  listChanged(list: 'prompts' | 'resources'): void;
}

/**
 * Wire the handlers of server-to-client requests (only for the features
 * given, matching {@link clientCapabilities}) and the notifications the pool
 * surfaces (log messages, prompts/resources list changes) on a new client.
 */
export function installClientFeatures(
  client: Client,
  server: string,
  f: ClientFeatures,
  sinks: ClientFeatureSinks,
): void {
  const onElicitation = f.onElicitation;
  if (onElicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      // Only form mode is declared; the SDK refuses url mode before we get here.
      const params = request.params as ElicitRequestFormParams;
      const response = await onElicitation(server, params, { signal: extra.signal });
      return fillElicitationDefaults(params.requestedSchema, response);
    });
  }
  const onSampling = f.onSampling;
  if (onSampling) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      onSampling(server, request.params, { signal: extra.signal }),
    );
  }
  const roots = f.roots;
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: await roots() }));
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const p = n.params;
    sinks.log(
      p.logger === undefined
        ? { level: p.level, data: p.data }
        : { level: p.level, logger: p.logger, data: p.data },
    );
  });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => sinks.listChanged('prompts'));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => sinks.listChanged('resources'));
}

/** The last `limit` log messages of each server (keyed by connection slot). */
export class ServerLogs {
  private readonly byServer = new Map<string, ServerLogEntry[]>();

  constructor(private readonly limit: number) {}

  add(key: string, entry: ServerLogEntry): void {
    if (this.limit <= 0) return;
    let list = this.byServer.get(key);
    if (!list) {
      list = [];
      this.byServer.set(key, list);
    }
    list.push(entry);
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
  }

  /** A copy of what is kept under `key`, oldest first. */
  get(key: string): ServerLogEntry[] {
    return (this.byServer.get(key) ?? []).map((e) => ({ ...e }));
  }
}
