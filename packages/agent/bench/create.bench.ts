/**
 * `Agent.create` with 32 configured servers (constructor + project file):
 * median time, and the number of processes it started (goal: <= 20 ms, 0).
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { findProcessesByMarker, fixtureServer, makeTempHome } from '@wave/testkit';
import { Agent } from '../src/agent';
import { scriptedModel } from '../src/models/scripted';
import { fmt, quantile } from './stats';

/** `Agent.create` times (ms), the most processes alive at once, and the servers the agent saw. */
export interface CreateSamples {
  times: number[];
  maxProcs: number;
  servers: number;
}

/** Creates and destroys an agent with 32 configured servers `runs` times (after 5 unmeasured). */
export async function measureAgentCreate(
  opts: { runs?: number; warmup?: number } = {},
): Promise<CreateSamples> {
  const runs = opts.runs ?? Number(process.env.BENCH_CREATES ?? 50);
  const warmup = opts.warmup ?? 5;
  const ns = `wave-bench-agent:${randomUUID().slice(0, 8)}`;
  const tmp = await makeTempHome();
  const constructorServers: Record<string, unknown> = {};
  const projectServers: Record<string, unknown> = {};
  for (let i = 0; i < 16; i++)
    constructorServers[`code-${i}`] = fixtureServer('hello', { HELLO_NAME: `code-${i}` });
  for (let i = 0; i < 16; i++)
    projectServers[`proj-${i}`] = fixtureServer('hello', { HELLO_NAME: `proj-${i}` });
  await writeFile(join(tmp.workdir, '.mcp.json'), JSON.stringify({ mcpServers: projectServers }, null, 2));

  const times: number[] = [];
  let maxProcs = 0;
  let servers = 0;
  for (let i = 0; i < runs + warmup; i++) {
    const t0 = performance.now();
    const agent = await Agent.create({
      workdir: tmp.workdir,
      home: tmp.home,
      model: scriptedModel([]),
      mcpServers: constructorServers,
      poolOptions: { markerNamespace: ns },
    });
    const ms = performance.now() - t0;
    if (i >= warmup) times.push(ms);
    servers = agent.getMcpServers().length;
    maxProcs = Math.max(maxProcs, findProcessesByMarker(ns).length);
    await agent.destroy();
  }
  await tmp.cleanup();
  return { times, maxProcs, servers };
}

export default async function run(): Promise<void> {
  const { times, maxProcs, servers } = await measureAgentCreate();
  const runs = times.length;
  console.log(`Agent.create with ${servers} configured servers, ${runs} runs:`);
  console.log(`  median ${fmt(quantile(times, 0.5))}  p95 ${fmt(quantile(times, 0.95))} (goal <= 20 ms)`);
  console.log(`  processes started: ${maxProcs} (goal 0)`);
}
