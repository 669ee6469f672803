import { startHelloHttpServer } from '../fixtures/lib/http-server.mjs';

/** Options of {@link startHttpFixture}. */
export interface HttpFixtureOptions {
  /** `http`: Streamable HTTP with stateful sessions at `/mcp`; `sse`: HTTP+SSE at `/sse`. @default 'http' */
  transport?: 'http' | 'sse';
  /** HELLO_* variables for the hello tools (the test process's own env is not read). @default {} */
  env?: Record<string, string | undefined>;
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
}

/** A running in-process HTTP fixture server on 127.0.0.1 with the hello tools. */
export interface HttpFixture {
  /** Endpoint for the client transport (`.../mcp` or `.../sse`). */
  readonly url: string;
  /** Port it listens on; `restart()` reuses it. */
  readonly port: number;
  readonly transport: 'http' | 'sse';
  /** Sessions currently known to the server. */
  readonly sessionCount: number;
  /** Whether the listener is up. */
  readonly listening: boolean;
  /**
   * Destroys every open socket (so in-flight requests and SSE streams fail)
   * and forgets every session (so the old session id gets 404), unless
   * `keepSessions` is true. The server keeps listening.
   */
  drop(options?: { keepSessions?: boolean }): Promise<void>;
  /** Stops listening, destroys every socket and session: the server is gone. Idempotent. */
  stop(): Promise<void>;
  /** Listens again on the same port (no-op if listening). Throws after `close()`. */
  restart(): Promise<void>;
  /** `stop()` for good. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the hello tools as an HTTP MCP server inside this process, on
 * 127.0.0.1 and a random port. Close it in `afterEach`.
 */
export function startHttpFixture(options: HttpFixtureOptions = {}): Promise<HttpFixture> {
  return startHelloHttpServer({
    transport: options.transport ?? 'http',
    env: options.env ?? {},
    port: options.port ?? 0,
    host: '127.0.0.1',
  });
}
