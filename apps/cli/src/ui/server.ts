/**
 * The HTTP layer of `wave ui`: 127.0.0.1 only, every request checked
 * (Host, Origin, per-launch token), JSON in and out, Server-Sent Events for
 * live updates. See the README section "wave ui: the HTTP API".
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UiErrorBody, UiEvents } from './api-types';
import { checkRequest, tokenOf } from './security';
import { UiError, type UiSession } from './session';

/** The page's static assets, built with the binary. */
export interface UiAssets {
  js: string;
  css: string;
}

export interface UiServerOptions {
  session: UiSession;
  assets: UiAssets;
  /** @default 0 (a free port) */
  port?: number;
  /** @default a random 32-byte hex token */
  token?: string;
  /** SSE keep-alive comment interval. @default 15000 */
  heartbeatMs?: number;
}

export interface RunningUiServer {
  url: string;
  port: number;
  token: string;
  /** Close every connection and the listener (the session is closed by its owner). Idempotent. */
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

const SECURITY_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = type === 'application/json' ? JSON.stringify(body) : String(body);
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8` });
  res.end(text);
}

function fail(res: ServerResponse, status: number, code: string, message: string): void {
  const body: UiErrorBody = { error: { code, message } };
  send(res, status, body);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new UiError('TOO_LARGE', 'The request body is over 1 MB.', 413);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UiError('BAD_REQUEST', 'The request body is not valid JSON.', 400);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new UiError('BAD_REQUEST', 'The request body must be a JSON object.', 400);
  return data as Record<string, unknown>;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page: no inline script (the CSP forbids it); the token rides in a meta tag and the asset URLs. */
export function pageHtml(token: string): string {
  const t = encodeURIComponent(token);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="wave-token" content="${escapeHtml(token)}">
<title>wave</title>
<link rel="stylesheet" href="/app.css?token=${t}">
</head>
<body>
<div id="app"></div>
<script type="module" src="/app.js?token=${t}"></script>
</body>
</html>
`;
}

/** Start listening on 127.0.0.1. */
export async function startUiServer(options: UiServerOptions): Promise<RunningUiServer> {
  const { session, assets } = options;
  const token = options.token ?? randomBytes(32).toString('hex');
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const streams = new Set<ServerResponse>();
  let port = 0;

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && path === '/') return send(res, 200, pageHtml(token), 'text/html');
    if (method === 'GET' && path === '/app.js') return send(res, 200, assets.js, 'text/javascript');
    if (method === 'GET' && path === '/app.css') return send(res, 200, assets.css, 'text/css');
    if (method === 'GET' && path === '/api/state') return send(res, 200, session.state());
    if (method === 'GET' && path === '/api/events') return openStream(res);
    if (method === 'POST' && path === '/api/messages') {
      const body = await readJson(req);
      session.send(body.text as string);
      return send(res, 202, { accepted: true });
    }
    if (method === 'POST' && path === '/api/stop') return send(res, 200, { stopped: session.stop() });
    const approval = /^\/api\/approvals\/([^/]+)$/.exec(path);
    if (method === 'POST' && approval) {
      const body = await readJson(req);
      session.answer(decodeURIComponent(approval[1] as string), String(body.answer));
      return send(res, 200, { answered: true });
    }
    const form = /^\/api\/elicitations\/([^/]+)$/.exec(path);
    if (method === 'POST' && form) {
      session.answerForm(decodeURIComponent(form[1] as string), await readJson(req));
      return send(res, 200, { answered: true });
    }
    if (method === 'GET' && path === '/api/mcp/servers') return send(res, 200, session.mcpSnapshot());
    const action = /^\/api\/mcp\/servers\/([^/]+)(?:\/(connect|disconnect|config-file|sign-in))?$/.exec(path);
    if (action) {
      const name = decodeURIComponent(action[1] as string);
      const verb = action[2];
      if (method === 'POST' && verb === 'connect') return send(res, 200, await session.connect(name));
      if (method === 'POST' && verb === 'sign-in') return send(res, 200, await session.signIn(name));
      if (method === 'POST' && verb === 'disconnect') return send(res, 200, await session.disconnect(name));
      if (method === 'GET' && verb === 'config-file') return send(res, 200, await session.configFile(name));
      if (method === 'DELETE' && verb === undefined) return send(res, 200, await session.remove(name));
    }
    fail(res, 404, 'NOT_FOUND', `No route ${method} ${path}.`);
  };

  const openStream = (res: ServerResponse): void => {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    const write = <K extends keyof UiEvents>(event: K, data: UiEvents[K]) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // The current list first, so a page that (re)connects is never behind.
    write('mcp', session.mcpSnapshot());
    const off = session.subscribe(write);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
    streams.add(res);
    res.on('close', () => {
      off();
      clearInterval(beat);
      streams.delete(res);
    });
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const check = checkRequest(
      {
        host: req.headers.host,
        origin: req.headers.origin,
        fetchSite: req.headers['sec-fetch-site'] as string | undefined,
        token: tokenOf(req.headers, url),
      },
      { port, token },
    );
    if (!check.ok) return fail(res, check.status, check.code, check.message);
    route(req, res, url).catch((err: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (err instanceof UiError) return fail(res, err.status, err.code, err.message);
      fail(res, 500, 'INTERNAL', err instanceof Error ? err.message : String(err));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port,
    token,
    url: `http://127.0.0.1:${port}/?token=${token}`,
    close() {
      if (closing) return closing;
      closing = new Promise<void>((resolve) => {
        for (const res of streams) res.end();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
