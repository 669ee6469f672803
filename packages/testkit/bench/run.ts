/**
 * Fixture start-up cost: time from spawn to a connected SDK client (initialize
 * answered), per fixture, against bare `node -e 0`. Prints medians and p95;
 * asserts nothing. Run: pnpm --filter @wave/testkit bench
 */
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type FixtureName,
  fixtureServer,
  killMarked,
  makeMarker,
  markerEnv,
  startHttpFixture,
} from '../src/index';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95) };
}

/** `once` does the measured work and returns the (unmeasured) cleanup. */
async function measure(name: string, once: () => Promise<() => Promise<void>>) {
  await (await once())(); // warm the file cache
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const cleanup = await once();
    samples.push(performance.now() - t0);
    await cleanup();
  }
  const { median, p95 } = stats(samples);
  console.log(
    `${name.padEnd(28)} median ${median.toFixed(1).padStart(7)} ms   p95 ${p95.toFixed(1).padStart(7)} ms`,
  );
  return median;
}

async function bareNode() {
  await new Promise((resolve) =>
    spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }).once('exit', resolve),
  );
  return async () => {};
}

function connectFixture(name: FixtureName, env: Record<string, string> = {}, tool?: string) {
  return async () => {
    const marker = makeMarker('bench');
    const spec = fixtureServer(name, { ...env, ...markerEnv(marker) });
    const client = new Client({ name: 'bench', version: '0' });
    await client.connect(new StdioClientTransport({ ...spec, stderr: 'ignore' }));
    if (tool) await client.callTool({ name: tool, arguments: {} });
    return async () => {
      await killMarked(marker);
      await client.close();
    };
  };
}

const base = await measure('node -e 0 (spawn to exit)', bareNode);
const hello = await measure('hello (spawn to connected)', connectFixture('hello'));
await measure('crashy', connectFixture('crashy'));
await measure('noisy-stdout (before)', connectFixture('noisy-stdout'));
await measure('spawner (until pids())', connectFixture('spawner', {}, 'pids'));
const http = await startHttpFixture();
await measure('in-process http connect', async () => {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  return async () => {
    await client.close();
  };
});
await http.close();
console.log(`hello / bare node: ${(hello / base).toFixed(2)}x`);
