import { randomBytes } from 'node:crypto';
import {
  auth,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  selectResourceURL,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ResolvedServer } from '@wave/mcp-config';
import type { HttpAuth } from './http-auth';
import { CallbackError, parsePastedRedirect, startLoopbackListener } from './loopback';
import { configuredClient, isMachine, MachineProvider, SignInProvider, withExpiry } from './providers';
import { normalizeServerUrl, type StoredAuth, TokenStore } from './token-store';

/** OAuth options of a pool. */
export interface PoolOAuthOptions {
  /**
   * `false`: no OAuth at all (a 401 is a plain connection error).
   * @default true
   */
  enabled?: boolean;
  /** `client_name` sent when registering. @default 'Wave' */
  clientName?: string;
  /**
   * An https URL where the host publishes its client ID metadata document
   * (SEP-991). Used as the client ID by authorization servers that accept
   * them; the others get a dynamic registration.
   */
  clientMetadataUrl?: string;
  /** Refresh an access token this long before it expires. @default 60000 */
  refreshSkewMs?: number;
  /** Longest a sign-in waits for the browser's redirect (or a pasted URL). @default 300000 */
  authorizeTimeoutMs?: number;
  /** Injected fetch for every OAuth request (tests). @default globalThis.fetch */
  fetch?: FetchLike;
}

/** Options of `pool.authorize()`. */
export interface AuthorizeOptions {
  /**
   * Show the authorization URL to the person: open a browser, print it.
   * The pool never opens a browser itself. May resolve at once.
   */
  openUrl: (url: string) => void | Promise<void>;
  /** Abandon the sign-in (rejects with the signal's reason; the listener closes). */
  signal?: AbortSignal;
  /**
   * Headless sign-in (over SSH, where the browser cannot reach this
   * machine's loopback listener): a promise of the final redirect URL the
   * person copies from the browser's address bar (the whole URL, or its
   * query). Raced with the loopback listener; the first valid answer wins.
   */
  pastedRedirect?: Promise<string>;
  /**
   * A redirect URI of the host's own instead of the loopback listener's
   * (`http://127.0.0.1:<port>/callback`). With it no listener is started,
   * so the answer must come through `pastedRedirect`.
   */
  redirectUrl?: string;
}

/** Why a sign-in failed. Messages never carry a token, code or secret. */
export type AuthorizeErrorReason = 'state' | 'denied' | 'malformed' | 'timeout' | 'aborted' | 'failed';

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * True when the pool handles OAuth for `server`: http/sse, and either an
 * `oauth` entry or no `Authorization` header of its own (a configured header
 * is the user's credential; a 401 then means that header is wrong).
 */
export function usesOAuth(server: ResolvedServer): boolean {
  if (server.transport !== 'http' && server.transport !== 'sse') return false;
  if (server.config.oauth !== undefined) return true;
  return !Object.keys(server.config.headers ?? {}).some((k) => k.toLowerCase() === 'authorization');
}

/**
 * OAuth for one pool: token files, refresh (one at a time per server across
 * pools and processes), and the interactive sign-in.
 */
export class AuthManager {
  readonly store: TokenStore;
  /** Last read of each token file; `null`: no file (so a server without OAuth costs no read per request). */
  private readonly cache = new Map<string, StoredAuth | null>();
  private readonly refreshing = new Map<string, Promise<string | undefined>>();
  /** The last `WWW-Authenticate` hints of each server (resource metadata URL, scope). */
  private readonly challenges = new Map<string, { resourceMetadataUrl?: URL; scope?: string }>();
  private readonly fetchFn: FetchLike;
  private readonly skewMs: number;
  /** Refresh grants this manager sent (diagnostics and tests). */
  refreshCount = 0;

  constructor(private readonly opts: PoolOAuthOptions & { home?: string | undefined; now: () => number }) {
    this.store = new TokenStore({ home: opts.home, now: opts.now });
    this.fetchFn = opts.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.skewMs = opts.refreshSkewMs ?? 60_000;
  }

  /** The token file of a server. */
  fileOf(server: ResolvedServer): string {
    return this.store.path(server.config.url ?? '', server.config.oauth?.clientId);
  }

  /** The transport's view of OAuth for `server`, or undefined when the pool does not handle OAuth for it. */
  forServer(server: ResolvedServer): HttpAuth | undefined {
    if (this.opts.enabled === false || !usesOAuth(server)) return undefined;
    const file = this.fileOf(server);
    return {
      token: () => this.token(server, file),
      challenge: (res, sent) => this.challenge(server, file, res, sent),
    };
  }

  private expiring(tokens: NonNullable<StoredAuth['tokens']>): boolean {
    return tokens.expiresAt !== undefined && this.opts.now() + this.skewMs >= tokens.expiresAt;
  }

  private async load(file: string): Promise<StoredAuth | undefined> {
    const rec = await this.store.read(file);
    this.cache.set(file, rec ?? null);
    return rec;
  }

  private async token(server: ResolvedServer, file: string): Promise<string | undefined> {
    let rec = this.cache.has(file) ? this.cache.get(file) : await this.load(file);
    if (!rec?.tokens) return undefined;
    if (!this.expiring(rec.tokens)) return rec.tokens.access_token;
    // Another pool or process may have refreshed it already.
    rec = await this.load(file);
    if (!rec?.tokens) return undefined;
    if (!this.expiring(rec.tokens)) return rec.tokens.access_token;
    const fresh = await this.refresh(server, file, rec.tokens.access_token);
    if (fresh !== undefined) return fresh;
    // Refresh failed: the old token may still be good for the last seconds of its life.
    const t = this.cache.get(file)?.tokens;
    return t?.expiresAt !== undefined && this.opts.now() < t.expiresAt ? t.access_token : undefined;
  }

  private async challenge(
    server: ResolvedServer,
    file: string,
    res: Response,
    sent: string | undefined,
  ): Promise<string | undefined> {
    const params = extractWWWAuthenticateParams(res);
    const hint: { resourceMetadataUrl?: URL; scope?: string } = {};
    if (params.resourceMetadataUrl) hint.resourceMetadataUrl = params.resourceMetadataUrl;
    if (params.scope) hint.scope = params.scope;
    this.challenges.set(file, hint);
    if (res.status === 403) {
      // insufficient_scope: only a new sign-in with more scope helps (step-up).
      if (params.scope) await this.remember(file, server, (rec) => ({ ...rec, stepUpScope: params.scope }));
      return undefined;
    }
    if (sent === undefined) {
      // We had no token: another pool or process may have signed in since we last looked.
      const rec = await this.load(file);
      if (!rec?.tokens) return isMachine(server) ? this.refresh(server, file, '') : undefined;
      if (!this.expiring(rec.tokens)) return rec.tokens.access_token;
      return this.refresh(server, file, rec.tokens.access_token);
    }
    return this.refresh(server, file, sent);
  }

  private async remember(file: string, server: ResolvedServer, fn: (rec: StoredAuth) => StoredAuth) {
    try {
      await this.store.withLock(file, async () => {
        const rec = (await this.store.read(file)) ?? this.emptyRecord(server);
        const next = fn(rec);
        await this.store.write(file, next);
        this.cache.set(file, next);
      });
    } catch {
      // Best effort: the sign-in asks for what the server says next time anyway.
    }
  }

  private emptyRecord(server: ResolvedServer): StoredAuth {
    const rec: StoredAuth = { serverUrl: normalizeServerUrl(server.config.url ?? '') };
    const id = server.config.oauth?.clientId;
    if (id !== undefined) rec.configuredClientId = id;
    return rec;
  }

  /**
   * Refresh after `rejected` stopped working (or is about to), once per
   * server at a time in this pool, and under the file lock across pools and
   * processes. After taking the lock the file is read again: when another
   * holder refreshed already, its token is used and no refresh is sent
   * (refresh tokens may rotate: a second refresh with the old one would fail).
   */
  private refresh(server: ResolvedServer, file: string, rejected: string): Promise<string | undefined> {
    const running = this.refreshing.get(file);
    if (running) return running;
    const p = this.refreshLocked(server, file, rejected).finally(() => this.refreshing.delete(file));
    this.refreshing.set(file, p);
    return p;
  }

  private async refreshLocked(server: ResolvedServer, file: string, rejected: string) {
    try {
      return await this.store.withLock(file, async () => {
        const rec = await this.load(file);
        const t = rec?.tokens;
        if (isMachine(server) && !t) return this.machineGrantUnlocked(server, file);
        if (!rec || !t) return undefined;
        if (t.access_token !== rejected && !this.expiring(t)) return t.access_token;
        if (isMachine(server)) return this.machineGrantUnlocked(server, file);
        const client = configuredClient(server) ?? rec.client;
        if (!t.refresh_token || !rec.discovery || !client) return undefined;
        let next: OAuthTokens;
        try {
          this.refreshCount += 1;
          const options: Parameters<typeof refreshAuthorization>[1] = {
            clientInformation: client,
            refreshToken: t.refresh_token,
            fetchFn: this.fetchFn,
          };
          if (rec.discovery.authorizationServerMetadata)
            options.metadata = rec.discovery.authorizationServerMetadata;
          if (rec.resource !== undefined) options.resource = rec.resource;
          next = await refreshAuthorization(rec.discovery.authorizationServerUrl, options);
        } catch (err) {
          // The grant is dead (revoked, expired, rotated elsewhere without us): forget the tokens.
          if (err instanceof OAuthError && !(err instanceof ServerError)) {
            const { tokens: _dropped, ...rest } = rec;
            await this.store.write(file, rest);
            this.cache.set(file, rest);
          }
          return undefined;
        }
        const tokens = withExpiry(
          { ...next, refresh_token: next.refresh_token ?? t.refresh_token },
          this.opts.now(),
        );
        if (tokens && t.issuer !== undefined) tokens.issuer = t.issuer;
        const updated: StoredAuth = { ...rec };
        if (tokens) updated.tokens = tokens;
        await this.store.write(file, updated);
        this.cache.set(file, updated);
        return tokens?.access_token;
      });
    } catch {
      // Lock timeout or an unwritable home: this connection cannot refresh; the user signs in again.
      return undefined;
    }
  }

  /** The pool's clock (epoch ms). */
  now(): number {
    return this.opts.now();
  }

  /** Forget the tokens (and the registration) of `server`. */
  async logout(server: ResolvedServer): Promise<void> {
    const file = this.fileOf(server);
    this.cache.delete(file);
    this.challenges.delete(file);
    await this.store.withLock(file, () => this.store.remove(file));
  }

  /**
   * Sign in to `server` interactively (authorization code + PKCE through the
   * SDK's `auth()`: protected resource and authorization server discovery,
   * client ID metadata document or dynamic registration or the configured
   * client, the `resource` parameter, scopes from `WWW-Authenticate`, then
   * `scopes_supported`). Resolves once tokens are stored. Rejects with
   * {@link AuthorizeError}.
   */
  async authorize(server: ResolvedServer, opts: AuthorizeOptions): Promise<void> {
    const url = server.config.url;
    if (!url || !usesOAuth(server) || this.opts.enabled === false) {
      throw new AuthorizeError(
        'failed',
        `MCP server "${server.name}" does not use OAuth (it is not an http/sse server, or it sends its own Authorization header).`,
      );
    }
    const file = this.fileOf(server);
    const signal = opts.signal;
    signal?.throwIfAborted();
    if (isMachine(server)) {
      // No browser: the client's own credentials (client_credentials grant).
      const token = await this.step(
        this.store.withLock(file, () => this.machineGrantUnlocked(server, file, true)),
        signal,
      ).catch((err: unknown) => {
        if (err instanceof AuthorizeError) throw err;
        throw new AuthorizeError(
          'failed',
          `Sign-in to MCP server "${server.name}" failed: ${scrub(errText(err))}`,
        );
      });
      if (token === undefined)
        throw new AuthorizeError(
          'failed',
          `The authorization server issued no token to client "${server.config.oauth?.clientId}".`,
        );
      return;
    }
    const state = randomBytes(32).toString('base64url');
    const listener =
      opts.redirectUrl === undefined
        ? await startLoopbackListener({
            state,
            ...(server.config.oauth?.callbackPort !== undefined
              ? { port: server.config.oauth.callbackPort }
              : {}),
          })
        : undefined;
    const redirectUrl = opts.redirectUrl ?? listener!.redirectUrl;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const stored = (await this.store.read(file)) ?? this.emptyRecord(server);
      const record: StoredAuth = { ...stored };
      delete record.tokens;
      const hint = this.challenges.get(file) ?? (await this.probe(server));
      const scope = this.scopeFor(server, record, hint.scope);
      const provider = new SignInProvider({
        server,
        record,
        redirectUrl,
        state,
        clientName: this.opts.clientName ?? 'Wave',
        clientMetadataUrl: this.opts.clientMetadataUrl,
        now: this.opts.now,
        openUrl: opts.openUrl,
      });
      const authOptions: Parameters<typeof auth>[1] = { serverUrl: url, fetchFn: this.fetchFn };
      if (scope !== undefined) authOptions.scope = scope;
      if (hint.resourceMetadataUrl) authOptions.resourceMetadataUrl = hint.resourceMetadataUrl;

      const first = await this.step(auth(provider, authOptions), signal);
      if (first !== 'AUTHORIZED') {
        const answers: Promise<{ code: string }>[] = [];
        if (listener) answers.push(listener.result);
        if (opts.pastedRedirect)
          answers.push(opts.pastedRedirect.then((text) => parsePastedRedirect(text, state)));
        if (answers.length === 0) {
          throw new AuthorizeError(
            'failed',
            'A custom redirectUrl needs pastedRedirect to receive the answer.',
          );
        }
        const timeoutMs = this.opts.authorizeTimeoutMs ?? 300_000;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new AuthorizeError(
                  'timeout',
                  `No sign-in answer arrived within ${Math.round(timeoutMs / 1000)} s.`,
                ),
              ),
            timeoutMs,
          );
        });
        const { code } = await this.step(Promise.race([firstValid(answers), timeout]), signal);
        await listener?.close();
        await this.step(auth(provider, { ...authOptions, authorizationCode: code }), signal);
      }
      if (!record.tokens) throw new AuthorizeError('failed', 'The authorization server issued no token.');
      if (record.discovery) {
        try {
          const selected = await selectResourceURL(url, provider, record.discovery.resourceMetadata);
          const resource =
            selected && record.discovery.resourceMetadata
              ? record.discovery.resourceMetadata.resource
              : selected?.href;
          if (resource !== undefined) record.resource = resource;
        } catch {
          // auth() already checked it; nothing more to remember.
        }
      }
      delete record.stepUpScope;
      await this.store.withLock(file, () => this.store.write(file, record));
      this.cache.set(file, record);
      this.challenges.delete(file);
    } catch (err) {
      if (err instanceof AuthorizeError) throw err;
      if (err instanceof CallbackError) throw new AuthorizeError(err.reason, err.message);
      if (signal?.aborted)
        throw new AuthorizeError('aborted', 'The sign-in was cancelled.', { cause: signal.reason });
      throw new AuthorizeError(
        'failed',
        `Sign-in to MCP server "${server.name}" failed: ${scrub(errText(err))}`,
      );
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      await listener?.close();
    }
  }

  /**
   * The client_credentials grant (SEP-1046) through the SDK's `auth()`:
   * discovery, then a token request authenticated with client_secret_basic
   * (or what the server supports) or private_key_jwt. Call holding the lock.
   * Resolves with the access token, or undefined (`strict`: rejects) on failure.
   */
  private async machineGrantUnlocked(server: ResolvedServer, file: string, strict = false) {
    const url = server.config.url!;
    const record: StoredAuth = { ...((await this.store.read(file)) ?? this.emptyRecord(server)) };
    delete record.tokens;
    const hint = this.challenges.get(file) ?? {};
    const provider = new MachineProvider(
      server,
      record,
      this.opts.clientName ?? 'Wave',
      this.opts.now,
      hint.scope,
    );
    const options: Parameters<typeof auth>[1] = { serverUrl: url, fetchFn: this.fetchFn };
    if (hint.resourceMetadataUrl) options.resourceMetadataUrl = hint.resourceMetadataUrl;
    try {
      this.refreshCount += 1;
      await auth(provider, options);
    } catch (err) {
      if (strict) throw err;
      return undefined;
    }
    // `auth()` filled the record in through the provider (TypeScript cannot see that).
    const tokens = (record as { tokens?: StoredAuth['tokens'] }).tokens;
    if (!tokens) return undefined;
    await this.store.write(file, record);
    this.cache.set(file, record);
    return tokens.access_token;
  }

  private scopeFor(
    server: ResolvedServer,
    record: StoredAuth,
    challenged: string | undefined,
  ): string | undefined {
    const configured = server.config.oauth?.scopes;
    const parts = new Set<string>();
    for (const s of configured ?? []) parts.add(s);
    for (const s of (record.stepUpScope ?? '').split(' ')) if (s) parts.add(s);
    if (parts.size > 0) {
      if (configured === undefined && challenged) for (const s of challenged.split(' ')) if (s) parts.add(s);
      return [...parts].join(' ');
    }
    return challenged || undefined;
  }

  /** Ask the server once without a token, to read its `WWW-Authenticate` hints. */
  private async probe(server: ResolvedServer): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    const url = server.config.url!;
    const headers: Record<string, string> = {
      ...(server.config.headers ?? {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const out: { resourceMetadataUrl?: URL; scope?: string } = {};
    try {
      const res =
        server.transport === 'sse'
          ? await this.fetchFn(url, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } })
          : await this.fetchFn(url, {
              method: 'POST',
              headers,
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 0,
                method: 'initialize',
                params: {
                  protocolVersion: '2025-11-25',
                  capabilities: {},
                  clientInfo: { name: this.opts.clientName ?? 'Wave', version: '0' },
                },
              }),
            });
      if (res.status === 401 || res.status === 403) {
        const p = extractWWWAuthenticateParams(res);
        if (p.resourceMetadataUrl) out.resourceMetadataUrl = p.resourceMetadataUrl;
        if (p.scope) out.scope = p.scope;
      }
      await res.body?.cancel().catch(() => {});
    } catch {
      // Unreachable now: discovery below says what is wrong.
    }
    return out;
  }

  private step<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (!signal) return p;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () =>
        reject(new AuthorizeError('aborted', 'The sign-in was cancelled.', { cause: signal.reason }));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}

/** The first promise that fulfils; rejects only when all have rejected (with the first rejection). */
function firstValid<T>(promises: Promise<T>[]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let failed = 0;
    let firstError: unknown;
    for (const p of promises) {
      p.then(resolve, (err) => {
        firstError ??= err;
        failed += 1;
        if (failed === promises.length) reject(firstError);
      });
    }
  });
}

/** Remove anything that looks like a token or code from a message (SDK messages may quote responses). */
function scrub(text: string): string {
  return text
    .replace(
      /("?(?:access_token|refresh_token|id_token|code|client_secret)"?\s*[:=]\s*)"?[^"&\s,}]+"?/gi,
      '$1****',
    )
    .slice(0, 500);
}

/** A failed sign-in. */
export class AuthorizeError extends Error {
  override readonly name = 'AuthorizeError';
  constructor(
    readonly reason: AuthorizeErrorReason,
    message: string,
    opts?: { cause?: unknown },
  ) {
    super(message, opts);
  }
}
