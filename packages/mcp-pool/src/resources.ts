import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  type GetPromptResult,
  McpError,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { PoolCore, Slot } from './core';
import { McpPoolError } from './errors';

/** Options of the resource and prompt requests of a pool. */
export interface ServerRequestOptions {
  /** Cancels the request (the server gets `notifications/cancelled`); rejects with `CALL_ABORTED`. */
  signal?: AbortSignal | undefined;
  /** Rejects with `CALL_TIMEOUT` after this long. @default server `callTimeoutMs` ?? pool `timeouts.callMs` */
  timeoutMs?: number | undefined;
}

/** Pages read at most for one list (a server that keeps returning cursors is cut off here). */
const MAX_PAGES = 100;
/** The SDK's own request timeout is off: the pool's timer decides (max setTimeout value). */
const NO_SDK_TIMEOUT = 2_147_483_647;

type Sdk = { signal: AbortSignal; timeout: number };

/** A list the pool keeps per connection while the server promises `list_changed`. */
type CachedList = 'prompts' | 'resources' | 'resourceTemplates';

/**
 * Prompt and resource lists of each live connection (keyed by its client), kept
 * only for servers that declare `listChanged` for them: such a server says when
 * a list changes, so the pool refreshes it then (like tools) and answers from
 * memory meanwhile. Other servers are asked every time.
 */
export class ListCache {
  private readonly byClient = new WeakMap<Client, Map<CachedList, readonly unknown[]>>();

  get<T>(client: Client, kind: CachedList): T[] | undefined {
    const items = this.byClient.get(client)?.get(kind) as readonly T[] | undefined;
    return items ? [...items] : undefined;
  }

  set(client: Client, kind: CachedList, items: readonly unknown[]): void {
    let m = this.byClient.get(client);
    if (!m) {
      m = new Map();
      this.byClient.set(client, m);
    }
    m.set(kind, [...items]);
  }

  /** Forget a list; true when it was kept (a host showed it, so it is worth refreshing). */
  invalidate(client: Client, kind: CachedList): boolean {
    return this.byClient.get(client)?.delete(kind) ?? false;
  }
}

function cacheable(client: Client, kind: CachedList): boolean {
  const caps = client.getServerCapabilities();
  return kind === 'prompts' ? caps?.prompts?.listChanged === true : caps?.resources?.listChanged === true;
}

/** Answer from the connection's cache when the server promises `list_changed`; fill it otherwise. */
async function cached<T>(
  core: PoolCore,
  client: Client,
  kind: CachedList,
  list: () => Promise<T[]>,
): Promise<T[]> {
  if (!cacheable(client, kind)) return list();
  const hit = core.lists.get<T>(client, kind);
  if (hit) return hit;
  const items = await list();
  core.lists.set(client, kind, items);
  return [...items];
}

/**
 * A server said its prompts or resources changed: forget what is kept and,
 * if a host had listed it, list it again now (bounded by the call timeout).
 * Resolves when done; never rejects.
 */
export async function refreshLists(core: PoolCore, slot: Slot, list: 'prompts' | 'resources'): Promise<void> {
  const client = core.connectedClient(slot);
  if (!client) return;
  const kinds: CachedList[] = list === 'prompts' ? ['prompts'] : ['resources', 'resourceTemplates'];
  const again = kinds.filter((k) => core.lists.invalidate(client, k));
  const runs = again.map((k) =>
    k === 'prompts'
      ? listPrompts(core, slot, {})
      : k === 'resources'
        ? listResources(core, slot, {})
        : listResourceTemplates(core, slot, {}),
  );
  await Promise.allSettled(runs);
}

/**
 * Run one request on the slot's live connection. Never dials (like
 * `callTool`): a server that is not connected rejects with
 * `SERVER_NOT_CONNECTED`. Bounded by a timeout; counts as in flight meanwhile.
 */
export async function onServer<T>(
  core: PoolCore,
  slot: Slot,
  what: string,
  opts: ServerRequestOptions,
  run: (client: Client, sdk: Sdk) => Promise<T>,
): Promise<T> {
  const name = slot.server.name;
  if (core.destroyed) {
    throw new McpPoolError('POOL_DESTROYED', `The MCP pool was destroyed; cannot ${what} on "${name}".`, {
      server: name,
    });
  }
  const client = core.connectedClient(slot);
  if (!client) throw core.notConnected(slot, what);
  const user = opts.signal;
  if (user?.aborted) {
    throw new McpPoolError('CALL_ABORTED', `${what} on MCP server "${name}" was aborted before it started.`, {
      server: name,
      cause: user.reason,
    });
  }
  const timeoutMs = opts.timeoutMs ?? slot.server.config.callTimeoutMs ?? core.settings.callMs;
  const abort = new AbortController();
  let timedOut = false;
  const timer =
    Number.isFinite(timeoutMs) && timeoutMs > 0
      ? core.clock.setTimeout(() => {
          timedOut = true;
          abort.abort(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
  const onUserAbort = () => abort.abort(user?.reason);
  user?.addEventListener('abort', onUserAbort, { once: true });
  const end = core.beginUse(slot);
  try {
    return await run(client, { signal: abort.signal, timeout: NO_SDK_TIMEOUT });
  } catch (err) {
    if (timedOut) {
      throw new McpPoolError(
        'CALL_TIMEOUT',
        `MCP server "${name}" did not answer ${what} within ${timeoutMs} ms; the request was cancelled.`,
        { server: name, cause: err },
      );
    }
    if (user?.aborted) {
      throw new McpPoolError('CALL_ABORTED', `${what} on MCP server "${name}" was aborted.`, {
        server: name,
        cause: err,
      });
    }
    if ((err instanceof McpError && err.code === ErrorCode.ConnectionClosed) || !client.transport) {
      throw new McpPoolError(
        'CONNECTION_CLOSED',
        `${what} on MCP server "${name}" failed: the connection was closed.`,
        { server: name, cause: err },
      );
    }
    const detail =
      err instanceof McpError
        ? `MCP error ${err.code}: ${err.message.replace(/^(?:MCP error -?\d+:\s*)+/, '')}`
        : err instanceof Error
          ? err.message
          : String(err);
    throw new McpPoolError('SERVER_ERROR', `MCP server "${name}" failed ${what}: ${detail}`, {
      server: name,
      cause: err,
    });
  } finally {
    if (timer !== undefined) core.clock.clearTimeout(timer);
    user?.removeEventListener('abort', onUserAbort);
    end();
  }
}

async function allPages<T>(
  list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await list(cursor);
    all.push(...r.items);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return all;
}

const params = (cursor: string | undefined) => (cursor === undefined ? undefined : { cursor });

/** Every resource of the server (all pages); `[]` when it offers no resources. */
export function listResources(core: PoolCore, slot: Slot, opts: ServerRequestOptions): Promise<Resource[]> {
  return onServer(core, slot, 'resources/list', opts, (client, sdk) =>
    client.getServerCapabilities()?.resources
      ? cached(core, client, 'resources', () =>
          allPages(async (c) => {
            const r = await client.listResources(params(c), sdk);
            return { items: r.resources, nextCursor: r.nextCursor };
          }),
        )
      : Promise.resolve([]),
  );
}

/** Every resource template of the server (all pages); `[]` when it offers no resources. */
export function listResourceTemplates(
  core: PoolCore,
  slot: Slot,
  opts: ServerRequestOptions,
): Promise<ResourceTemplate[]> {
  return onServer(core, slot, 'resources/templates/list', opts, (client, sdk) =>
    client.getServerCapabilities()?.resources
      ? cached(core, client, 'resourceTemplates', () =>
          allPages(async (c) => {
            const r = await client.listResourceTemplates(params(c), sdk);
            return { items: r.resourceTemplates, nextCursor: r.nextCursor };
          }),
        )
      : Promise.resolve([]),
  );
}

/** Read one resource. */
export function readResource(
  core: PoolCore,
  slot: Slot,
  uri: string,
  opts: ServerRequestOptions,
): Promise<ReadResourceResult> {
  return onServer(core, slot, `resources/read "${uri}"`, opts, (client, sdk) =>
    client.readResource({ uri }, sdk),
  );
}

/** Every prompt of the server (all pages); `[]` when it offers no prompts. */
export function listPrompts(core: PoolCore, slot: Slot, opts: ServerRequestOptions): Promise<Prompt[]> {
  return onServer(core, slot, 'prompts/list', opts, (client, sdk) =>
    client.getServerCapabilities()?.prompts
      ? cached(core, client, 'prompts', () =>
          allPages(async (c) => {
            const r = await client.listPrompts(params(c), sdk);
            return { items: r.prompts, nextCursor: r.nextCursor };
          }),
        )
      : Promise.resolve([]),
  );
}

/** Get one prompt, filled with `args`. */
export function getPrompt(
  core: PoolCore,
  slot: Slot,
  name: string,
  args: Record<string, string> | undefined,
  opts: ServerRequestOptions,
): Promise<GetPromptResult> {
  return onServer(core, slot, `prompts/get "${name}"`, opts, (client, sdk) =>
    client.getPrompt(args ? { name, arguments: args } : { name }, sdk),
  );
}
