/** The page's client of the `wave ui` HTTP API: every request carries the token. */
import type { McpSnapshot, UiErrorBody, UiState } from '../src/ui/api-types';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function pageToken(): string {
  const meta = document.querySelector('meta[name="wave-token"]');
  return meta?.getAttribute('content') ?? new URLSearchParams(location.search).get('token') ?? '';
}

export function createApi(token: string) {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new ApiError(
        'NETWORK',
        `wave ui is not reachable (${(err as Error).message}). Is it still running?`,
      );
    }
    const data = (await res.json().catch(() => ({}))) as T & Partial<UiErrorBody>;
    if (!res.ok) {
      throw new ApiError(
        data.error?.code ?? 'HTTP',
        data.error?.message ?? `${method} ${path} failed with HTTP ${res.status}.`,
      );
    }
    return data;
  }
  const server = (name: string) => `/api/mcp/servers/${encodeURIComponent(name)}`;
  return {
    state: () => call<UiState>('GET', '/api/state'),
    send: (text: string) => call<{ accepted: boolean }>('POST', '/api/messages', { text }),
    stop: () => call<{ stopped: boolean }>('POST', '/api/stop'),
    answer: (id: string, answer: string) =>
      call<{ answered: boolean }>('POST', `/api/approvals/${encodeURIComponent(id)}`, { answer }),
    answerForm: (id: string, body: { action: string; content?: Record<string, unknown> }) =>
      call<{ answered: boolean }>('POST', `/api/elicitations/${encodeURIComponent(id)}`, body),
    servers: () => call<McpSnapshot>('GET', '/api/mcp/servers'),
    connect: (name: string) => call<McpSnapshot>('POST', `${server(name)}/connect`),
    signIn: (name: string) => call<{ url: string }>('POST', `${server(name)}/sign-in`),
    disconnect: (name: string) => call<McpSnapshot>('POST', `${server(name)}/disconnect`),
    remove: (name: string) => call<McpSnapshot>('DELETE', server(name)),
    configFile: (name: string) =>
      call<{ path: string; content: string }>('GET', `${server(name)}/config-file`),
    events: () => new EventSource(`/api/events?token=${encodeURIComponent(token)}`),
  };
}

export type Api = ReturnType<typeof createApi>;
