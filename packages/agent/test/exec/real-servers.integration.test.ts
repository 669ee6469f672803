import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mergeSources } from '@wave/mcp-config';
import { McpPool } from '@wave/mcp-pool';
import {
  findProcessesByMarker,
  isPidAlive,
  killPids,
  makeTempDir,
  realServer,
  type TempDir,
} from '@wave/testkit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type CatalogTool, renderCatalog } from '../../src/exposure/catalog';
import { createExecSandbox, type ExecHost } from '../../src/exposure/exec/sandbox';
import type { ContentBlock } from '../../src/model';
import { textOf } from './host';

// Nested calls reach the right real MCP server through a pool, and their results come back to the script.
let tmp: TempDir;
let pool: McpPool;
const ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:exec-real-${randomUUID().slice(0, 8)}`;
const sandbox = createExecSandbox({ timeoutMs: 30_000 });

function liveTools(): CatalogTool[] {
  return pool
    .list()
    .filter((s) => s.status === 'connected')
    .flatMap((s) =>
      s.tools.map((t) => ({
        server: s.name,
        name: t.name,
        fullName: `mcp__${s.name}__${t.name}`,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
    );
}

const host: ExecHost = {
  listTools: liveTools,
  async call(fullName, args, signal) {
    const tool = liveTools().find((t) => t.fullName === fullName);
    if (tool === undefined) throw new Error(`${fullName} is not available`);
    const r = await pool.callTool(tool.server, tool.name, args as Record<string, unknown>, { signal });
    const content: ContentBlock[] = [];
    for (const b of r.content as { type: string; text?: string; data?: string; mimeType?: string }[]) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text ?? '' });
      else if (b.type === 'image')
        content.push({ type: 'image', mimeType: b.mimeType ?? '', data: b.data ?? '' });
    }
    return { content, isError: r.isError === true };
  },
  search(query, limit) {
    const q = query.toLowerCase();
    return liveTools()
      .filter((t) => `${t.fullName} ${t.description ?? ''}`.toLowerCase().includes(q))
      .slice(0, limit);
  },
};

beforeAll(async () => {
  tmp = await makeTempDir('exec-real');
  const { servers } = mergeSources(
    [
      {
        source: 'constructor',
        servers: {
          memory: realServer('memory', { memoryFilePath: join(tmp.path, 'memory.jsonl') }),
          everything: realServer('everything'),
        },
      },
    ],
    { workdir: tmp.path },
  );
  pool = McpPool.create({ servers, markerNamespace: ns });
  await Promise.all([pool.connect('memory'), pool.connect('everything')]);
});

afterAll(async () => {
  await sandbox.close();
  await pool?.destroy();
  await tmp?.cleanup();
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

test('a script chains calls on server-memory: store, then read back', async () => {
  const r = await sandbox.run(
    `await tools.mcp__memory__create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] });
     await tools.mcp__memory__add_observations({ observations: [{ entityName: "Ada", contents: ["born 1815"] }] });
     const graph = JSON.parse(await tools.mcp__memory__read_graph());
     return graph.entities.map((e) => ({ name: e.name, observations: e.observations }))`,
    host,
  );
  expect(r.isError, textOf(r.content)).toBe(false);
  expect(JSON.parse(textOf(r.content).slice('Result:\n'.length))).toEqual([
    { name: 'Ada', observations: ['wrote the first program', 'born 1815'] },
  ]);
  expect(r.calls).toBe(3);
});

test('server-everything: arguments arrive unchanged, images come back attached', async () => {
  const r = await sandbox.run(
    `const sum = await tools["mcp__everything__get-sum"]({ a: 2, b: 40 });
     const echo = await tools.mcp__everything__echo({ message: "héllo \\u2028 wörld" });
     const image = await tools["mcp__everything__get-tiny-image"]();
     return { sum, echo, kinds: Array.isArray(image) ? image.map((b) => b.type) : typeof image }`,
    host,
  );
  expect(r.isError, textOf(r.content)).toBe(false);
  const out = JSON.parse(textOf(r.content).slice('Result:\n'.length));
  expect(out.sum).toContain('42');
  expect(out.echo).toContain('héllo \u2028 wörld');
  expect(out.kinds).toContain('image');
  expect(Array.isArray(r.content)).toBe(true);
  expect((r.content as ContentBlock[]).some((b) => b.type === 'image')).toBe(true);
});

test('the catalog of the live pool and a search from inside a script agree', async () => {
  const catalog = renderCatalog(liveTools());
  const r = await sandbox.run('return await tools["$codemode"].search("knowledge graph")', host);
  const hits = JSON.parse(textOf(r.content).slice('Result:\n'.length)) as {
    name: string;
    signature: string;
  }[];
  expect(hits.length).toBeGreaterThan(0);
  for (const hit of hits) {
    expect(hit.name.startsWith('mcp__memory__')).toBe(true);
    expect(catalog).toContain(hit.signature);
  }
});

test('an invalid call to a real tool rejects that await only', async () => {
  const r = await sandbox.run(
    `let error;
     try { await tools["mcp__everything__get-sum"]({ a: "not a number" }) } catch (e) { error = e.message }
     return { error: typeof error, after: await tools["mcp__everything__get-sum"]({ a: 1, b: 1 }) }`,
    host,
  );
  expect(r.isError, textOf(r.content)).toBe(false);
  const out = JSON.parse(textOf(r.content).slice('Result:\n'.length));
  expect(out.error).toBe('string');
  expect(out.after).toContain('2');
});
