import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { McpPool } from '@wave/mcp-pool';
import { deferred, findProcessesByMarker, fixtureServer, killMarked, makeTempHome } from '@wave/testkit';
import { afterEach, describe, expect, test } from 'vitest';
import { isAgentError } from '../src/errors';
import { AgentHost } from '../src/host';
import { scriptedModel } from '../src/models/scripted';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function hostWorld() {
  const tmp = await makeTempHome();
  const ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'test-agent'}:${randomUUID().slice(0, 8)}`;
  const host = AgentHost.create({ home: tmp.home, poolOptions: { markerNamespace: ns } });
  cleanups.push(async () => {
    await host.close();
    await killMarked(ns);
    await tmp.cleanup();
  });
  return { tmp, ns, host, procs: () => findProcessesByMarker(ns) };
}

describe('AgentHost', () => {
  test('a destroy that arrives during a reconfigure is queued, shown, and carried out', async () => {
    const { tmp, host, procs } = await hostWorld();
    const hello = { hello: fixtureServer('hello') };
    const a = await host.create('a', {
      workdir: tmp.workdir,
      model: scriptedModel([{ text: 'x' }]),
      mcpServers: hello,
    });
    await a.sendMessage('hi');
    expect(procs().length).toBeGreaterThan(0);

    // The new workdir has a project server: the reconfigure stops inside Agent.create at the host's
    // isServerAllowed gate until the test answers.
    await writeFile(
      join(tmp.root, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: fixtureServer('hello') } }),
    );
    const asked = deferred();
    const answer = deferred<boolean>();
    const reconf = host.reconfigure('a', {
      workdir: tmp.root,
      model: scriptedModel([]),
      mcpServers: hello,
      isServerAllowed: () => {
        asked.resolve();
        return answer.promise;
      },
    });
    await asked.promise;
    const destroyed = host.destroy('a');
    expect(host.pendingReclaims()).toEqual([{ id: 'a', waitingFor: 'reconfigure' }]);
    answer.resolve(true);
    await expect(reconf).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    await destroyed;
    expect(host.pendingReclaims()).toEqual([]);
    expect(host.get('a')).toBeUndefined();
    await expect(a.sendMessage('x')).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    // The shared pool keeps an unused connection until it idles out; close reclaims it.
    await host.close();
    expect(procs()).toEqual([]);
  });

  test('reconfigure replaces the agent under the same id (workdir switch)', async () => {
    const { tmp, host } = await hostWorld();
    const a = await host.create('a', { workdir: tmp.workdir, model: scriptedModel([]) });
    const b = await host.reconfigure('a', { workdir: tmp.root, model: scriptedModel([]) });
    expect(b).not.toBe(a);
    expect(host.get('a')).toBe(b);
    expect(b.workdir).toBe(tmp.root);
    await expect(a.sendMessage('x')).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    await expect(host.create('a', { workdir: tmp.workdir, model: scriptedModel([]) })).rejects.toSatisfy(
      (e: unknown) => isAgentError(e, 'AGENT_EXISTS'),
    );
  });

  test('concurrent reconfigures of one id run one after the other; a destroy during create is carried out', async () => {
    const { tmp, host, procs } = await hostWorld();
    const hello = { hello: fixtureServer('hello') };
    await host.create('a', { workdir: tmp.workdir, model: scriptedModel([]) });
    const made = await Promise.all(
      [1, 2, 3].map((n) =>
        host.reconfigure('a', {
          workdir: tmp.workdir,
          model: scriptedModel([{ text: `agent ${n}` }]),
          mcpServers: hello,
        }),
      ),
    );
    expect(host.get('a')).toBe(made[2]);
    // Only the last one is alive; the others were destroyed by the next reconfigure.
    for (const old of made.slice(0, 2)) {
      await expect(old.sendMessage('x')).rejects.toSatisfy((e: unknown) =>
        isAgentError(e, 'AGENT_DESTROYED'),
      );
    }
    expect((await made[2]?.sendMessage('x'))?.text).toBe('agent 3');

    const creating = host.create('b', { workdir: tmp.workdir, model: scriptedModel([]) });
    const destroyed = host.destroy('b');
    expect(host.pendingReclaims()).toEqual([{ id: 'b', waitingFor: 'create' }]);
    await expect(creating).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    await destroyed;
    expect(host.ids()).toEqual(['a']);
    await host.close();
    expect(procs()).toEqual([]);
  });

  test('50 agents created, used and destroyed through a host leave no process', async () => {
    const { tmp, host, procs } = await hostWorld();
    const hello = { hello: fixtureServer('hello') };
    const ids = Array.from({ length: 50 }, (_, i) => `agent-${i}`);
    const agents = await Promise.all(
      ids.map((id) =>
        host.create(id, {
          workdir: tmp.workdir,
          model: scriptedModel([
            { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: id } }] },
            { text: 'ok' },
          ]),
          mcpServers: hello,
          permissions: { allow: ['*'] },
        }),
      ),
    );
    expect(procs()).toEqual([]);
    await Promise.all(agents.map((a) => a.sendMessage('go')));
    // One shared connection (same fingerprint) serves all 50.
    expect(procs().length).toBeGreaterThan(0);
    for (const a of agents) {
      const tool = a.getMessages().find((m) => m.role === 'tool');
      expect(tool?.content).toBe(a.id);
    }
    await Promise.all(ids.map((id) => host.destroy(id)));
    expect(host.ids()).toEqual([]);
    await host.close();
    expect(procs()).toEqual([]);
    await expect(host.create('late', { workdir: tmp.workdir, model: scriptedModel([]) })).rejects.toSatisfy(
      (e: unknown) => isAgentError(e, 'AGENT_DESTROYED'),
    );
  });

  test('a long-lived host needs no close(): once every agent is destroyed, the released server idles out', async () => {
    const { tmp, host, procs } = await hostWorld();
    // keep-alive: never idles out while an agent uses it; released, it closes after idleTimeoutMs.
    const hello = { hello: { ...fixtureServer('hello'), lifecycle: 'keep-alive', idleTimeoutMs: 100 } };
    const ids = Array.from({ length: 5 }, (_, i) => `long-${i}`);
    const agents = await Promise.all(
      ids.map((id) =>
        host.create(id, {
          workdir: tmp.workdir,
          model: scriptedModel([
            { toolCalls: [{ name: 'mcp__hello__echo', arguments: { text: id } }] },
            { text: 'ok' },
          ]),
          mcpServers: hello,
          permissions: { allow: ['*'] },
        }),
      ),
    );
    await Promise.all(agents.map((a) => a.sendMessage('go')));
    for (const a of agents) expect(a.getMessages().find((m) => m.role === 'tool')?.content).toBe(a.id);
    expect(procs().length).toBeGreaterThan(0);
    await Promise.all(ids.map((id) => host.destroy(id)));
    expect(host.ids()).toEqual([]);
    await expect.poll(() => procs(), { timeout: 30_000, interval: 50 }).toEqual([]);
  });

  test('an agent destroyed during its first turn’s dial leaves no process (no idle wait, no close())', async () => {
    const { tmp, host, procs } = await hostWorld();
    // The handshake would complete a few seconds later: the shared pool must not keep that
    // connection for its idle timeout (10 minutes by default) once nobody wants it.
    const a = await host.create('a', {
      workdir: tmp.workdir,
      model: scriptedModel([{ text: 'never' }]),
      mcpServers: { slow: fixtureServer('slow-init', { SLOW_INIT_MS: '4000' }) },
    });
    const turn = a.sendMessage('hi');
    await expect.poll(() => procs().length, { timeout: 30_000, interval: 25 }).toBeGreaterThan(0);
    expect(a.getMcpServers()[0]?.status).toBe('connecting');
    await host.destroy('a');
    await expect(turn).rejects.toSatisfy((e: unknown) => isAgentError(e, 'AGENT_DESTROYED'));
    await expect.poll(() => procs(), { timeout: 30_000, interval: 25 }).toEqual([]);
  }, 90_000);

  test('a host given a pool never destroys it', async () => {
    const tmp = await makeTempHome();
    const pool = McpPool.create({ shared: true });
    const host = AgentHost.create({ home: tmp.home, pool });
    await host.create('a', { workdir: tmp.workdir, model: scriptedModel([]) });
    await host.close();
    expect(pool.destroyed).toBe(false);
    await pool.destroy();
    await tmp.cleanup();
  });
});
