import type { ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * An MCP client transport over a child process you spawned yourself (stdin
 * and stdout piped), so a test keeps the `ChildProcess`: its exit code,
 * signal and stderr. `close()` only ends stdin; killing is up to you.
 * `onclose` fires once, when stdout closes or on `close()`.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly child: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private closed = false;
  private started = false;

  constructor(child: ChildProcess) {
    this.child = child;
  }

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    for (;;) {
      try {
        const message = this.buffer.readMessage();
        if (message === null) break;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  };

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onEnd = (): void => {
    this.finish();
  };

  async start(): Promise<void> {
    if (this.started) throw new Error('ChildProcessTransport already started');
    this.started = true;
    const { stdin, stdout } = this.child;
    if (!stdin || !stdout)
      throw new Error('ChildProcessTransport needs a child spawned with stdin and stdout piped');
    stdout.on('data', this.onData);
    stdout.on('error', this.onStreamError);
    stdout.on('close', this.onEnd);
    stdin.on('error', this.onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child.stdin;
    if (this.closed || !stdin || stdin.destroyed || !stdin.writable) throw new Error('Not connected');
    await new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.child.stdin?.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.child.stdout?.off('data', this.onData);
    this.buffer.clear();
    this.onclose?.();
  }
}

/** Shorthand for `new ChildProcessTransport(child)`. */
export function childProcessTransport(child: ChildProcess): ChildProcessTransport {
  return new ChildProcessTransport(child);
}
