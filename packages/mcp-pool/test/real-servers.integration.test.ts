import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mergeSources } from '@wave/mcp-config';
import {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  makeTempDir,
  realServer,
  type TempDir,
  waitFor,
} from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpPool } from '../src/pool';
import { countingClock } from './helpers';

let ns: string;
let pool: McpPool | undefined;
let clock = countingClock();
let tmp: TempDir | undefined;

beforeEach(async () => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:real-${randomUUID().slice(0, 8)}`;
  tmp = await makeTempDir('pool-real');
});

afterEach(async () => {
  await pool?.destroy();
  pool = undefined;
  expect(clock.pending()).toBe(0);
  await tmp?.cleanup();
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

function poolOf(
  name: string,
  spec: { command: string; args: string[]; env: Record<string, string> },
): McpPool {
  const { servers } = mergeSources([{ source: 'user', servers: { [name]: spec } }], { workdir: tmp!.path });
  clock = countingClock();
  // The pool works for the temp dir: that is the root it offers to servers.
  pool = McpPool.create({ servers, markerNamespace: ns, clock, workdir: tmp!.path });
  return pool;
}

describe('real MCP servers from npm', () => {
  it('server-everything: connect, tools, instructions, call, disconnect with no survivors', async () => {
    const p = poolOf('everything', realServer('everything'));
    const rec = await p.connect('everything');
    expect(rec.status).toBe('connected');
    expect(rec.tools.length).toBeGreaterThanOrEqual(10);
    expect(rec.instructions?.length ?? 0).toBeGreaterThan(100);
    const echo = rec.tools.find((t) => t.name === 'echo');
    expect(echo).toBeDefined();
    const r = await p.callTool('everything', 'echo', { message: 'hello everything' });
    expect(JSON.stringify(r.content)).toContain('hello everything');
    expect(findProcessesByMarker(ns).filter(isPidAlive).length).toBeGreaterThanOrEqual(1);
    await p.disconnect('everything');
    expect(findProcessesByMarker(ns).filter(isPidAlive)).toEqual([]);
  });

  it('server-memory: connect, create and read entities, disconnect with no survivors', async () => {
    const p = poolOf('memory', realServer('memory', { memoryFilePath: join(tmp!.path, 'memory.jsonl') }));
    const rec = await p.connect('memory');
    expect(rec.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    await p.callTool('memory', 'create_entities', {
      entities: [{ name: 'wave', entityType: 'project', observations: ['leaves no process behind'] }],
    });
    const graph = await p.callTool('memory', 'read_graph', {});
    expect(JSON.stringify(graph)).toContain('leaves no process behind');
    await p.disconnect('memory');
    expect(findProcessesByMarker(ns).filter(isPidAlive)).toEqual([]);
  });

  it('server-filesystem: connect, read a file in the allowed dir, disconnect with no survivors', async () => {
    await writeFile(join(tmp!.path, 'note.txt'), 'pool test content');
    const p = poolOf('fs', realServer('filesystem', { allowedDirs: [tmp!.path] }));
    const rec = await p.connect('fs');
    expect(rec.tools.length).toBeGreaterThanOrEqual(10);
    const toolName = rec.tools.some((t) => t.name === 'read_text_file') ? 'read_text_file' : 'read_file';
    const r = await p.callTool('fs', toolName, { path: join(tmp!.path, 'note.txt') });
    expect(JSON.stringify(r.content)).toContain('pool test content');
    await p.disconnect('fs');
    expect(findProcessesByMarker(ns).filter(isPidAlive)).toEqual([]);
  });

  it('server-filesystem works in the roots the pool offers (its workdir), not in the directories of its command line', async () => {
    const other = await makeTempDir('wave-fs-other-');
    try {
      await writeFile(join(tmp!.path, 'note.txt'), 'in the workdir');
      await writeFile(join(other.path, 'note.txt'), 'outside the roots');
      const p = poolOf('fs', realServer('filesystem', { allowedDirs: [other.path] }));
      const rec = await p.connect('fs');
      expect(rec.status).toBe('connected');
      const toolName = rec.tools.some((t) => t.name === 'read_text_file') ? 'read_text_file' : 'read_file';
      // The server replaces its allowed directories with the roots once it has listed them.
      await waitFor(
        async () => {
          const r = await p.callTool('fs', toolName, { path: join(tmp!.path, 'note.txt') });
          return !r.isError && JSON.stringify(r.content).includes('in the workdir');
        },
        { timeoutMs: 10_000 },
      );
      const outside = await p.callTool('fs', toolName, { path: join(other.path, 'note.txt') });
      expect(outside.isError).toBe(true);
      await p.disconnect('fs');
    } finally {
      await other.cleanup();
    }
  });
});
