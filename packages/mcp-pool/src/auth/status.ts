import type { ResolvedServer } from '@wave/mcp-config';
import type { ServerErrorInfo } from '../machine';

/**
 * The `error` of a `needs-auth` server: what happened and what to do. Never
 * names a token.
 */
export function needsAuthError(server: ResolvedServer, why: string, at: number): ServerErrorInfo {
  return {
    code: 'AUTH_REQUIRED',
    message: `MCP server "${server.name}" at ${server.displayUrl ?? server.config.url ?? ''} needs you to sign in: ${why}. Sign in with authorize("${server.name}") (wave mcp login ${server.name}); it is not dialed again until then.`,
    at,
  };
}
