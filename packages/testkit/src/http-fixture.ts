import { type HelloHttpServer, startHelloHttpServer } from '../fixtures/lib/http-server.mjs';

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
export type HttpFixture = HelloHttpServer;

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
