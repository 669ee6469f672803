/**
 * Soak: many agents through one AgentHost, and one agent over many turns, with
 * real stdio servers (some with grandchildren). Afterwards no marked process,
 * no leaked listener, timer, handle or file descriptor, and bounded memory.
 *
 * The normal run is short; `pnpm test:soak` (or WAVE_SOAK=long) runs the long
 * version: 200 agents in sequence, 200 in batches of 20, and 2 000 turns.
 * Figures are printed as `SOAK {...}` lines.
 */
import { createHook } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { findProcessesByMarker, fixtureServer, killMarked, makeTempHome, waitFor } from '@wave/testkit';
import { afterEach, describe, expect, test } from 'vitest';
import type { Agent } from '../src/agent';
import { AgentHost } from '../src/host';
import type { ModelAdapter } from '../src/model';
import { scriptedModel } from '../src/models/scripted';

const LONG = process.env.WAVE_SOAK === 'long' || process.env.npm_lifecycle_event === 'test:soak';
const SEQUENTIAL = LONG ? 200 : 10;
const BATCHED = LONG ? 200 : 10;
const BATCH = LONG ? 20 : 10;
const TURNS = LONG ? 2_000 : 200;
/** Every n-th agent gets the spawner fixture (grandchildren: SIGTERM-ignorer, setsid, double fork). */
const SPAWNER_EVERY = 5;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap after a full collection (twice: finalizers free more on the second). */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const fdCount = () => readdirSync('/proc/self/fd').length;

/** Live handles and timers by kind (Timeout, PipeWrap, ProcessWrap, ...), as Node reports them. */
function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

/**
 * Where the timers and handles still alive were created: async_hooks keeps the
 * creation stack of each resource while `track()` runs, so a leak names its origin.
 */
function originTracker() {
  const live = new Map<number, { type: string; stack: string }>();
  const hook = createHook({
    init(id, type) {
      if (type === 'PROMISE') return;
      live.set(id, { type, stack: (new Error().stack ?? '').split('\n').slice(3, 12).join('\n') });
    },
    destroy(id) {
      live.delete(id);
    },
  });
  return {
    start: () => hook.enable(),
    stop: () => hook.disable(),
    /** Creation stacks of live resources of these kinds (as `getActiveResourcesInfo` names them). */
    origins(kinds: string[]): string[] {
      const want = kinds.map((k) => k.toLowerCase());
      return [...live.values()]
        .filter((r) => want.includes(r.type.toLowerCase()))
        .map((r) => `${r.type}\n${r.stack}`);
    },
  };
}

const PROCESS_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'];
const processListeners = () => Object.fromEntries(PROCESS_EVENTS.map((e) => [e, process.listenerCount(e)]));

const mb = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;

async function world() {
  const tmp = await makeTempHome();
  const ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'test-agent'}:soak-${randomUUID().slice(0, 8)}`;
  const host = AgentHost.create({
    home: tmp.home,
    poolOptions: {
      markerNamespace: ns,
      // A released connection closes soon, so the process count shows leaks quickly.
      timeouts: { idleMs: 1_000, killGraceMs: 300, connectMs: 60_000, callMs: 60_000 },
      limits: { maxConnections: 64 },
    },
  });
  cleanups.push(async () => {
    await host.close();
    await killMarked(ns);
    await tmp.cleanup();
  });
  return { tmp, ns, host, procs: () => findProcessesByMarker(ns) };
}

type World = Awaited<ReturnType<typeof world>>;

/** Create agent `id` with its own server (own env: own fingerprint, own process), send one message that calls echo, destroy it. */
async function oneAgent(w: World, id: string, index: number): Promise<void> {
  const kind = index % SPAWNER_EVERY === 0 ? 'spawner' : 'hello';
  const agent = await w.host.create(id, {
    workdir: w.tmp.workdir,
    model: scriptedModel([
      { toolCalls: [{ name: 'mcp__s__echo', arguments: { text: id } }] },
      { text: 'done' },
    ]),
    mcpServers: { s: fixtureServer(kind, { SOAK_AGENT: id }) },
    permissions: { allow: ['*'] },
  });
  const result = await agent.sendMessage('go');
  expect(result.text).toBe('done');
  const tool = agent.getMessages().find((m) => m.role === 'tool');
  expect(tool?.content, `${id} (${kind})`).toBe(id);
  await w.host.destroy(id);
}

/** Waits (bounded) until no marked process is left: released connections close after their idle time. */
async function noProcesses(w: World, timeoutMs = 60_000): Promise<void> {
  await waitFor(() => w.procs().length === 0, {
    timeoutMs,
    intervalMs: 50,
    message: 'every server process of the soak to exit',
  });
}

/** Waits (bounded) until the fd count is back to `baseline`; returns the last count. */
async function fdsBackTo(baseline: number): Promise<number> {
  let last = fdCount();
  await waitFor(
    () => {
      last = fdCount();
      return last <= baseline;
    },
    { timeoutMs: 30_000, intervalMs: 50, message: `open file descriptors to return to ${baseline}` },
  ).catch(() => undefined);
  return last;
}

/**
 * Waits (bounded) until the handles/timers of each kind are back to the
 * baseline count. It checks after each pause has ended, never inside a timer
 * callback: there the firing timer itself still counts as an active resource.
 */
async function resourcesBackTo(baseline: Record<string, number>): Promise<Record<string, number>> {
  const extra = () => {
    const now = resources();
    const out: Record<string, number> = {};
    for (const [k, n] of Object.entries(now)) if (n > (baseline[k] ?? 0)) out[k] = n - (baseline[k] ?? 0);
    return out;
  };
  const deadline = Date.now() + 30_000;
  let last = extra();
  while (Object.keys(last).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = extra();
  }
  return last;
}

describe(`soak (${LONG ? 'long' : 'short'})`, () => {
  test(
    `${SEQUENTIAL} agents in sequence and ${BATCHED} in batches of ${BATCH} through one AgentHost leave nothing behind`,
    async () => {
      const w = await world();
      // Warm-up: modules, lazy singletons and the first spawn are not leaks.
      await oneAgent(w, 'warm-0', 1);
      await oneAgent(w, 'warm-1', 0);
      await noProcesses(w);
      const fd0 = fdCount();
      const res0 = resources();
      const listeners0 = processListeners();
      const heap0 = heapUsed();
      const rss0 = process.memoryUsage().rss;
      const started = Date.now();
      const tracker = originTracker();
      tracker.start();

      for (let i = 0; i < SEQUENTIAL; i++) await oneAgent(w, `seq-${i}`, i);
      const seqMs = Date.now() - started;
      for (let b = 0; b < BATCHED; b += BATCH) {
        const ids = Array.from({ length: Math.min(BATCH, BATCHED - b) }, (_, k) => b + k);
        await Promise.all(ids.map((i) => oneAgent(w, `batch-${i}`, i)));
      }
      expect(w.host.ids()).toEqual([]);
      await noProcesses(w);

      const fd1 = await fdsBackTo(fd0);
      const extra = await resourcesBackTo(res0);
      tracker.stop();
      const heap1 = heapUsed();
      const rss1 = process.memoryUsage().rss;
      if (Object.keys(extra).length > 0)
        console.log(`SOAK leaked:\n${tracker.origins(Object.keys(extra)).join('\n---\n')}`);
      const figures = {
        soak: 'agents',
        sequential: SEQUENTIAL,
        batched: BATCHED,
        batch: BATCH,
        ms: Date.now() - started,
        sequentialMs: seqMs,
        fdBefore: fd0,
        fdAfter: fd1,
        extraHandles: extra,
        heapMbBefore: mb(heap0),
        heapMbAfter: mb(heap1),
        rssMbBefore: mb(rss0),
        rssMbAfter: mb(rss1),
      };
      console.log(`SOAK ${JSON.stringify(figures)}`);
      expect(fd1).toBeLessThanOrEqual(fd0);
      expect(extra).toEqual({});
      expect(processListeners()).toEqual(listeners0);
      // Bounded: what a run keeps grows far slower than the agents it served.
      expect(heap1 - heap0).toBeLessThan((LONG ? 48 : 24) * 1024 * 1024);

      await w.host.close();
      expect(w.procs()).toEqual([]);
    },
    LONG ? 1_800_000 : 240_000,
  );

  test(
    `one agent, ${TURNS} turns that call a tool, with disconnects and connects in between: memory flat, nothing left`,
    async () => {
      const w = await world();
      // One scripted model per turn (scriptedModel keeps copies of every request it answered).
      let turn: ModelAdapter = scriptedModel([]);
      const model: ModelAdapter = {
        name: 'scripted-per-turn',
        generate: (request) => turn.generate(request),
      };
      const agent: Agent = await w.host.create('solo', {
        workdir: w.tmp.workdir,
        model,
        mcpServers: { s: fixtureServer('hello', { SOAK_AGENT: 'solo' }) },
        permissions: { allow: ['*'] },
      });
      const run = async (i: number) => {
        turn = scriptedModel([
          { toolCalls: [{ name: 'mcp__s__echo', arguments: { text: `t${i}` } }] },
          { text: `done ${i}` },
        ]);
        const r = await agent.sendMessage(`turn ${i}`);
        expect(r.text).toBe(`done ${i}`);
        const tool = r.messages.find((m) => m.role === 'tool');
        expect(tool?.content).toBe(`t${i}`);
      };
      const cycle = async (i: number) => {
        // Every 10 turns: a manual disconnect and connect; every 20: a fresh history (a long chat is
        // compacted or restarted; what is measured is what the agent keeps besides the history).
        if (i % 10 === 9) {
          await agent.disconnectMcpServer('s');
          expect(w.procs()).toEqual([]);
          await agent.connectMcpServer('s');
        }
        if (i % 20 === 19) agent.replaceHistory([]);
      };
      const warm = Math.min(100, TURNS / 4);
      for (let i = 0; i < warm; i++) {
        await run(i);
        await cycle(i);
      }
      const fd0 = fdCount();
      const res0 = resources();
      const heap0 = heapUsed();
      const rss0 = process.memoryUsage().rss;
      const started = Date.now();
      const tracker = originTracker();
      tracker.start();
      const samples: number[] = [];
      for (let i = warm; i < TURNS; i++) {
        await run(i);
        await cycle(i);
        if (i % 100 === 99) samples.push(mb(heapUsed()));
      }
      const ms = Date.now() - started;
      const heap1 = heapUsed();
      const rss1 = process.memoryUsage().rss;
      const fd1 = await fdsBackTo(fd0);
      const extra = await resourcesBackTo(res0);
      tracker.stop();
      if (Object.keys(extra).length > 0)
        console.log(`SOAK leaked:\n${tracker.origins(Object.keys(extra)).join('\n---\n')}`);
      console.log(
        `SOAK ${JSON.stringify({
          soak: 'turns',
          turns: TURNS - warm,
          ms,
          msPerTurn: Math.round((ms / (TURNS - warm)) * 10) / 10,
          heapMbBefore: mb(heap0),
          heapMbAfter: mb(heap1),
          heapMbSamples: samples,
          rssMbBefore: mb(rss0),
          rssMbAfter: mb(rss1),
          fdBefore: fd0,
          fdAfter: fd1,
          extraHandles: extra,
        })}`,
      );
      expect(fd1).toBeLessThanOrEqual(fd0);
      expect(extra).toEqual({});
      // Flat: no growth with the number of turns beyond noise.
      expect(heap1 - heap0).toBeLessThan((LONG ? 24 : 16) * 1024 * 1024);
      await w.host.destroy('solo');
      await noProcesses(w);
      await w.host.close();
      expect(w.procs()).toEqual([]);
    },
    LONG ? 1_800_000 : 240_000,
  );
});
