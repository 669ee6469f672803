import { describe, expect, it } from 'vitest';
import { fixtureServer } from '../src/fixtures';
import { findProcessesByMarker, isPidAlive, listDescendants, readMarker, readProcStat } from '../src/procfs';
import { waitFor } from '../src/wait';
import { connectStdio, useCleanup } from './support';

interface PidsResult {
  pids: number[];
  kinds: string[];
}

describe.runIf(process.platform === 'linux')('spawner fixture', () => {
  const cleanup = useCleanup();

  async function startSpawner(env: Record<string, string> = {}) {
    const started = await connectStdio(cleanup, fixtureServer('spawner', env));
    const result = await started.client.callTool({ name: 'pids', arguments: {} });
    const { pids, kinds } = result.structuredContent as unknown as PidsResult;
    const serverPid = started.transport.pid;
    if (serverPid === null) throw new Error('spawner not running');
    return {
      ...started,
      pids,
      kinds,
      serverPid,
      byKind: Object.fromEntries(kinds.map((k, i) => [k, pids[i]])),
    };
  }

  it('starts three marked grandchildren and reports them on stderr and via pids()', async () => {
    const { pids, kinds, marker, serverPid, stderr, byKind } = await startSpawner();
    expect(kinds).toEqual(['ignore-term', 'setsid', 'double-fork']);
    expect(pids).toHaveLength(3);
    for (const pid of pids) {
      expect(isPidAlive(pid)).toBe(true);
      expect(readMarker(pid)).toBe(marker);
    }
    await waitFor(() => stderr.text().includes('SPAWNER_PIDS'), { message: 'SPAWNER_PIDS line' });
    const line = stderr.text().match(/^SPAWNER_PIDS (.*)$/m);
    expect(JSON.parse(line?.[1] ?? 'null')).toEqual(pids);

    // The marker finds all of them plus the spawner; the intermediate of the double fork is gone.
    expect(findProcessesByMarker(marker).sort()).toEqual([serverPid, ...pids].sort());
    // A namespace prefix finds them too.
    const ns = marker.slice(0, marker.indexOf(':'));
    expect(findProcessesByMarker(ns)).toEqual(expect.arrayContaining([serverPid, ...pids]));

    const spawnerStat = readProcStat(serverPid);
    const ignore = readProcStat(byKind['ignore-term'] as number);
    const setsid = readProcStat(byKind.setsid as number);
    const doubled = readProcStat(byKind['double-fork'] as number);
    // ignore-term: a plain child in the spawner's group and session.
    expect(ignore?.ppid).toBe(serverPid);
    expect(ignore?.pgid).toBe(spawnerStat?.pgid);
    // setsid: still the spawner's child, but leads its own session and group.
    expect(setsid?.ppid).toBe(serverPid);
    expect(setsid?.sid).toBe(setsid?.pid);
    expect(setsid?.pgid).toBe(setsid?.pid);
    // double-fork: re-parented away from the spawner, still in its process group.
    expect(doubled?.ppid).not.toBe(serverPid);
    expect(doubled?.pgid).toBe(spawnerStat?.pgid);

    const descendants = listDescendants(serverPid);
    expect(descendants).toEqual(expect.arrayContaining([byKind['ignore-term'], byKind.setsid]));
    expect(descendants).not.toContain(byKind['double-fork']);
  });

  it('the ignore-term grandchild really ignores SIGTERM', async () => {
    const { byKind } = await startSpawner({ SPAWNER_MODE: 'ignore-term' });
    const pid = byKind['ignore-term'] as number;
    process.kill(pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isPidAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isPidAlive(pid), { message: `pid ${pid} to die after SIGKILL` });
  });

  it('the other grandchildren die on SIGTERM', async () => {
    const { byKind } = await startSpawner({ SPAWNER_MODE: 'setsid,double-fork' });
    for (const pid of [byKind.setsid, byKind['double-fork']] as number[]) {
      process.kill(pid, 'SIGTERM');
      await waitFor(() => !isPidAlive(pid), { message: `pid ${pid} to die on SIGTERM` });
    }
  });

  it.each([['ignore-term'], ['setsid'], ['double-fork']])(
    'SPAWNER_MODE=%s starts only that one',
    async (mode) => {
      const { kinds, pids, marker, serverPid } = await startSpawner({ SPAWNER_MODE: mode });
      expect(kinds).toEqual([mode]);
      expect(findProcessesByMarker(marker).sort()).toEqual([serverPid, ...pids].sort());
    },
  );

  it('grandchildren outlive the spawner once it is killed (what the reaper must fix)', async () => {
    const { pids, serverPid, marker } = await startSpawner();
    process.kill(serverPid, 'SIGKILL');
    await waitFor(() => !isPidAlive(serverPid), { message: 'spawner to die' });
    for (const pid of pids) expect(isPidAlive(pid)).toBe(true);
    expect(findProcessesByMarker(marker).sort()).toEqual([...pids].sort());
  });

  it('SPAWNER_INHERIT_STDIO=1: grandchildren hold stdout, so the client sees no close until they die', async () => {
    const { pids, serverPid, transport } = await startSpawner({ SPAWNER_INHERIT_STDIO: '1' });
    let closed = false;
    const previous = transport.onclose;
    transport.onclose = () => {
      closed = true;
      previous?.();
    };
    process.kill(serverPid, 'SIGKILL');
    await waitFor(() => !isPidAlive(serverPid), { message: 'spawner to die' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBe(false);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await waitFor(() => closed, { message: 'client transport to close once the pipe holders die' });
  });
});
