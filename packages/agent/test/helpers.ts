import { randomUUID } from 'node:crypto';
import {
  type FixtureName,
  findProcessesByMarker,
  fixtureServer,
  killMarked,
  makeTempHome,
  type TempHome,
} from '@wave/testkit';
import { afterEach } from 'vitest';
import { Agent, type AgentOptions } from '../src/agent';
import { type ScriptedStep, scriptedModel } from '../src/models/scripted';

/** One test's world: a temp home + workdir, a marker namespace for its processes, cleanup. */
export interface World {
  tmp: TempHome;
  /** Marker namespace of every server process this test's pools spawn. */
  ns: string;
  /** Live processes of this test. */
  procs(): number[];
  /** A hello-like fixture server entry for `mcpServers` / `.mcp.json`. */
  server(
    name?: FixtureName,
    env?: Record<string, string>,
  ): { command: string; args: string[]; env: Record<string, string> };
  /** Agent.create with this world's home/workdir/marker namespace; destroyed after the test. */
  agent(options: Partial<AgentOptions> & { steps?: ScriptedStep[] }): Promise<Agent>;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  const list = cleanups.splice(0).reverse();
  for (const c of list) await c();
});

export async function world(): Promise<World> {
  const tmp = await makeTempHome();
  const ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'test-agent'}:${randomUUID().slice(0, 8)}`;
  const agents: Agent[] = [];
  cleanups.push(async () => {
    await Promise.allSettled(agents.map((a) => a.destroy()));
    await killMarked(ns);
    await tmp.cleanup();
  });
  return {
    tmp,
    ns,
    procs: () => findProcessesByMarker(ns),
    server: (name = 'hello', env = {}) => fixtureServer(name, env),
    async agent(options) {
      const { steps, ...rest } = options;
      const a = await Agent.create({
        workdir: tmp.workdir,
        home: tmp.home,
        model: rest.model ?? scriptedModel(steps ?? []),
        ...rest,
        poolOptions: { markerNamespace: ns, ...(rest.poolOptions ?? {}) },
      });
      agents.push(a);
      return a;
    },
  };
}

/** The text of a tool result / message content. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b as { text?: string }).text ?? '').join('');
  return String(content);
}
