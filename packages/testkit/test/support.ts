import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach } from 'vitest';
import type { StdioServerSpec } from '../src/fixtures';
import { killMarked, makeMarker, markerEnv } from '../src/markers';

/** Per-test cleanup: every marker handed out is SIGKILLed after the test, then clients are closed. */
export function useCleanup() {
  const markers: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    const ms = markers.splice(0);
    const cs = closers.splice(0);
    for (const m of ms) await killMarked(m);
    await Promise.allSettled(cs.map((c) => c()));
  });
  return {
    marker(): string {
      const m = makeMarker();
      markers.push(m);
      return m;
    },
    defer(close: () => Promise<unknown>): void {
      closers.push(close);
    },
  };
}

export type Cleanup = ReturnType<typeof useCleanup>;

/** Collected stderr text of a transport started with `stderr: 'pipe'`. */
export interface StderrTap {
  text(): string;
}

/** Starts `spec` over stdio with a fresh marker and connects an SDK client. */
export async function connectStdio(
  cleanup: Cleanup,
  spec: StdioServerSpec,
  options: { timeoutMs?: number; client?: Client } = {},
) {
  const marker = cleanup.marker();
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { ...getDefaultEnvironment(), ...spec.env, ...markerEnv(marker) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = options.client ?? new Client({ name: 'testkit-test', version: '0.0.0' });
  cleanup.defer(() => client.close());
  await client.connect(
    transport,
    options.timeoutMs === undefined ? undefined : { timeout: options.timeoutMs },
  );
  return { client, transport, marker, stderr: { text: () => stderr } as StderrTap };
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('');
}
