import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** Options of {@link startOAuthFixture}. */
export interface OAuthFixtureOptions {
  /** `expires_in` of issued access tokens, seconds. @default 3600 */
  expiresIn?: number;
  /** Scopes the protected resource metadata lists (`scopes_supported`). @default ['mcp'] */
  scopesSupported?: string[];
  /** Rotate refresh tokens (every refresh grant revokes the one it used). @default true */
  rotateRefreshTokens?: boolean;
}

/** One issued access token. */
interface IssuedToken {
  clientId: string;
  expiresAt: number;
  scope: string | undefined;
}

/** An authorization server and an MCP resource server (bearer tokens required), on 127.0.0.1. */
export interface OAuthFixture {
  /** The MCP endpoint, e.g. `http://127.0.0.1:1234/mcp`. */
  mcpUrl: string;
  /** The authorization server's issuer URL. */
  issuer: string;
  /** Refresh grants the token endpoint accepted or refused. */
  readonly refreshGrants: number;
  /** Authorization code grants. */
  readonly codeGrants: number;
  /** Dynamic registrations. */
  readonly registrations: number;
  /** Every access token ever issued, in order (tests assert they never leak). */
  readonly issuedAccessTokens: readonly string[];
  /** Every refresh token ever issued. */
  readonly issuedRefreshTokens: readonly string[];
  /** Bearer tokens the MCP server received, in order. */
  readonly seenBearer: readonly (string | undefined)[];
  /** Query of the last authorization request (resource, scope, state...). */
  readonly lastAuthorize: URLSearchParams | undefined;
  /** The refresh grant answers `invalid_grant` while true. */
  failRefresh: boolean;
  /** Delay every refresh grant by this many ms (to make two refreshes overlap). */
  refreshDelayMs: number;
  /** Make every access token issued so far invalid at the resource server (as if expired there). */
  revokeAccessTokens(): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer((req, res) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(err) });
        else res.destroy();
      });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return { server, base: `http://127.0.0.1:${port}`, close } as {
    server: Server;
    base: string;
    close: () => Promise<void>;
  };
}

const b64url = (buf: Buffer) => buf.toString('base64url');
const token = (prefix: string) => `${prefix}_${b64url(randomBytes(24))}`;

/**
 * Start a loopback OAuth 2.1 authorization server (metadata, dynamic
 * registration, authorization endpoint that approves at once with a 302 to
 * the redirect URI, token endpoint with PKCE S256, refresh grants with
 * rotation) and an MCP server at `/mcp` that answers 401 with a
 * `WWW-Authenticate` pointing at its protected resource metadata unless it
 * gets a valid bearer token. Tool: `whoami` (the client ID of the token).
 */
export async function startOAuthFixture(opts: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const expiresIn = opts.expiresIn ?? 3600;
  const rotate = opts.rotateRefreshTokens !== false;
  const clients = new Map<string, { secret?: string; redirectUris: string[] }>();
  const codes = new Map<
    string,
    { clientId: string; challenge: string; redirectUri: string; scope?: string; resource?: string }
  >();
  const access = new Map<string, IssuedToken>();
  const refresh = new Map<string, { clientId: string; scope?: string }>();
  const issuedAccess: string[] = [];
  const issuedRefresh: string[] = [];
  const seen: (string | undefined)[] = [];
  const counts = { refresh: 0, code: 0, registrations: 0 };
  let lastAuthorize: URLSearchParams | undefined;

  const as = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: as.base,
        authorization_endpoint: `${as.base}/authorize`,
        token_endpoint: `${as.base}/token`,
        registration_endpoint: `${as.base}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      });
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const meta = JSON.parse(await readBody(req)) as {
        redirect_uris?: string[];
        token_endpoint_auth_method?: string;
      };
      counts.registrations += 1;
      const id = token('client');
      const entry: { secret?: string; redirectUris: string[] } = { redirectUris: meta.redirect_uris ?? [] };
      if (meta.token_endpoint_auth_method && meta.token_endpoint_auth_method !== 'none')
        entry.secret = token('secret');
      clients.set(id, entry);
      return json(res, 201, {
        ...meta,
        client_id: id,
        ...(entry.secret ? { client_secret: entry.secret } : {}),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      });
    }
    if (url.pathname === '/authorize' && req.method === 'GET') {
      const q = url.searchParams;
      lastAuthorize = q;
      const clientId = q.get('client_id') ?? '';
      const redirectUri = q.get('redirect_uri') ?? '';
      const client = clients.get(clientId);
      if (!client?.redirectUris.includes(redirectUri)) return json(res, 400, { error: 'invalid_request' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
        return json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' });
      const code = token('code');
      const entry: {
        clientId: string;
        challenge: string;
        redirectUri: string;
        scope?: string;
        resource?: string;
      } = {
        clientId,
        challenge: q.get('code_challenge')!,
        redirectUri,
      };
      const scope = q.get('scope');
      if (scope) entry.scope = scope;
      const resource = q.get('resource');
      if (resource) entry.resource = resource;
      codes.set(code, entry);
      const to = new URL(redirectUri);
      to.searchParams.set('code', code);
      const state = q.get('state');
      if (state !== null) to.searchParams.set('state', state);
      res.writeHead(302, { location: to.href });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(await readBody(req));
      let clientId = form.get('client_id') ?? '';
      let secret = form.get('client_secret') ?? undefined;
      const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
      if (basic?.[1]) {
        const [id, pw] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
        clientId = decodeURIComponent(id ?? '');
        secret = decodeURIComponent(pw ?? '');
      }
      const client = clients.get(clientId);
      if (!client || (client.secret !== undefined && client.secret !== secret))
        return json(res, 401, { error: 'invalid_client' });
      const issue = (scope: string | undefined) => {
        const a = token('at');
        const r = token('rt');
        access.set(a, { clientId, expiresAt: Date.now() + expiresIn * 1000, scope });
        refresh.set(r, scope === undefined ? { clientId } : { clientId, scope });
        issuedAccess.push(a);
        issuedRefresh.push(r);
        return {
          access_token: a,
          token_type: 'Bearer',
          expires_in: expiresIn,
          refresh_token: r,
          ...(scope ? { scope } : {}),
        };
      };
      const grant = form.get('grant_type');
      if (grant === 'authorization_code') {
        counts.code += 1;
        const c = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!c || c.clientId !== clientId || c.redirectUri !== form.get('redirect_uri'))
          return json(res, 400, { error: 'invalid_grant' });
        const verifier = form.get('code_verifier') ?? '';
        if (b64url(createHash('sha256').update(verifier).digest()) !== c.challenge)
          return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        return json(res, 200, issue(c.scope));
      }
      if (grant === 'refresh_token') {
        counts.refresh += 1;
        if (fixture.refreshDelayMs > 0) await new Promise((r) => setTimeout(r, fixture.refreshDelayMs));
        const rt = form.get('refresh_token') ?? '';
        const known = refresh.get(rt);
        if (fixture.failRefresh || !known || known.clientId !== clientId)
          return json(res, 400, { error: 'invalid_grant' });
        if (rotate) refresh.delete(rt);
        return json(res, 200, issue(known.scope));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    json(res, 404, { error: 'not_found' });
  });

  const rs = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const prmPath = '/.well-known/oauth-protected-resource/mcp';
    if (url.pathname === prmPath) {
      return json(res, 200, {
        resource: `${rs.base}/mcp`,
        authorization_servers: [as.base],
        scopes_supported: opts.scopesSupported ?? ['mcp'],
        bearer_methods_supported: ['header'],
      });
    }
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not_found' });
    const m = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
    const bearer = m?.[1];
    seen.push(bearer);
    const info = bearer === undefined ? undefined : access.get(bearer);
    if (!info || info.expiresAt <= Date.now()) {
      const err = bearer === undefined ? '' : ', error="invalid_token"';
      return json(
        res,
        401,
        { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null },
        { 'www-authenticate': `Bearer resource_metadata="${rs.base}${prmPath}"${err}` },
      );
    }
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    const body = JSON.parse(await readBody(req)) as unknown;
    const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'The client ID of the caller', inputSchema: { note: z.string().optional() } },
      () => ({
        content: [{ type: 'text', text: info.clientId }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });

  const fixture: OAuthFixture = {
    mcpUrl: `${rs.base}/mcp`,
    issuer: as.base,
    get refreshGrants() {
      return counts.refresh;
    },
    get codeGrants() {
      return counts.code;
    },
    get registrations() {
      return counts.registrations;
    },
    issuedAccessTokens: issuedAccess,
    issuedRefreshTokens: issuedRefresh,
    seenBearer: seen,
    get lastAuthorize() {
      return lastAuthorize;
    },
    failRefresh: false,
    refreshDelayMs: 0,
    revokeAccessTokens() {
      for (const t of access.values()) t.expiresAt = 0;
    },
    async close() {
      await Promise.all([as.close(), rs.close()]);
    },
  };
  return fixture;
}

/**
 * A fake browser for sign-in tests: GET the authorization URL without
 * following redirects, then GET the `Location` it answers with (the loopback
 * callback), as a browser would. Resolves with the callback's status.
 */
export async function followAuthorizationRedirect(
  authorizationUrl: string,
  rewrite?: (location: URL) => URL,
): Promise<number> {
  const first = await fetch(authorizationUrl, { redirect: 'manual' });
  await first.body?.cancel();
  const location = first.headers.get('location');
  if (first.status < 300 || first.status > 399 || !location)
    throw new Error(`the authorization endpoint answered ${first.status} without a redirect`);
  const target = rewrite ? rewrite(new URL(location, authorizationUrl)) : new URL(location, authorizationUrl);
  const second = await fetch(target, { redirect: 'manual' });
  await second.body?.cancel();
  return second.status;
}
