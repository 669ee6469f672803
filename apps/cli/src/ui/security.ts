import { timingSafeEqual } from 'node:crypto';

/** What the security check looks at in a request. */
export interface RequestFacts {
  /** The `Host` header. */
  host: string | undefined;
  /** The `Origin` header, when the browser sent one. */
  origin: string | undefined;
  /** `Sec-Fetch-Site`, when the browser sent one. */
  fetchSite: string | undefined;
  /** The token from `Authorization: Bearer`, `X-Wave-Token` or `?token=`. */
  token: string | undefined;
}

export type CheckResult = { ok: true } | { ok: false; status: number; code: string; message: string };

/** The origins the page may be served from (never `0.0.0.0`, never another host name). */
export function allowedOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Decide whether a request may reach the API. Pure. In order: the `Host`
 * header must name the loopback address and our port (a DNS-rebinding page
 * sends its own host name); an `Origin`, when sent, must be ours (another
 * local page cannot drive the API); a cross-site fetch is refused; and the
 * per-launch token must match.
 */
export function checkRequest(facts: RequestFacts, expected: { port: number; token: string }): CheckResult {
  const hosts = allowedOrigins(expected.port).map((o) => o.slice('http://'.length));
  if (!facts.host || !hosts.includes(facts.host.toLowerCase())) {
    return {
      ok: false,
      status: 421,
      code: 'BAD_HOST',
      message: `Host ${JSON.stringify(facts.host ?? '')} is not served here; open ${allowedOrigins(expected.port)[0]}/.`,
    };
  }
  if (facts.origin !== undefined && !allowedOrigins(expected.port).includes(facts.origin.toLowerCase())) {
    return {
      ok: false,
      status: 403,
      code: 'BAD_ORIGIN',
      message: `Requests from ${facts.origin} are refused: only the wave ui page may call this API.`,
    };
  }
  if (facts.fetchSite === 'cross-site') {
    return { ok: false, status: 403, code: 'BAD_ORIGIN', message: 'Cross-site requests are refused.' };
  }
  if (!facts.token || !sameToken(facts.token, expected.token)) {
    return {
      ok: false,
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'A valid token is required: open the URL wave ui printed (it carries ?token=...).',
    };
  }
  return { ok: true };
}

/** The token of a request: `Authorization: Bearer <t>`, `X-Wave-Token: <t>`, or `?token=<t>`. Pure. */
export function tokenOf(
  headers: Record<string, string | string[] | undefined>,
  url: URL,
): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice('Bearer '.length).trim();
  const header = headers['x-wave-token'];
  if (typeof header === 'string' && header !== '') return header;
  return url.searchParams.get('token') ?? undefined;
}
