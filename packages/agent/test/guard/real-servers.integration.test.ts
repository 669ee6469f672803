import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readOutputTool } from '../../src/builtins/read-output';
import type { BuiltinContext } from '../../src/builtins/types';
import { buildFlatTools } from '../../src/exposure/flat';
import { createOutputGuard, type ToolCallResultLike } from '../../src/guard/output-guard';
import { schemaProblems } from '../exposure/schema-check';

let ns: string;
let pool: McpPool | undefined;
let tmp: TempDir | undefined;

beforeEach(async () => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:guard-${randomUUID().slice(0, 8)}`;
  tmp = await makeTempDir('agent-guard-real');
});

afterEach(async () => {
  await pool?.destroy();
  pool = undefined;
  await tmp?.cleanup();
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  expect(left).toEqual([]);
});

function poolOf(
  servers: Record<string, { command: string; args: string[]; env: Record<string, string> }>,
): McpPool {
  const merged = mergeSources([{ source: 'user', servers }], { workdir: tmp?.path as string });
  // No roots: server-filesystem would replace its allowed directories with the client's roots.
  pool = McpPool.create({ servers: merged.servers, markerNamespace: ns, roots: false });
  return pool;
}

function ctxOf(sessionDir: string): BuiltinContext {
  return { workdir: sessionDir, home: sessionDir, sessionDir, reloadConfig: async () => {} };
}

// The pool's result type must fit the guard's input without a cast.
type PoolResult = Awaited<ReturnType<McpPool['callTool']>>;
const fits: (r: PoolResult) => ToolCallResultLike = (r) => r;

describe('output guard and ReadOutput on real servers', () => {
  it('server-filesystem: a long file is cut, spilled, and read back whole with ReadOutput', async () => {
    const dir = tmp?.path as string;
    const sessionDir = join(dir, 'session');
    const text = Array.from({ length: 5000 }, (_, i) => `${i}: ${'lorem ipsum '.repeat((i % 7) + 1)}`).join(
      '\n',
    );
    await writeFile(join(dir, 'big.txt'), text);
    const p = poolOf({ fs: realServer('filesystem', { allowedDirs: [dir] }) });
    const rec = await p.connect('fs');
    expect(rec.status).toBe('connected');

    const flat = buildFlatTools(rec.tools.map((t) => ({ ...t, server: 'fs' })));
    for (const d of flat.declarations) expect(schemaProblems(d.inputSchema)).toEqual([]);
    const target = flat.resolve('mcp__fs__read_text_file');
    expect(target?.tool).toBe('read_text_file');
    expect(target?.readOnly).toBe(true);

    const raw = await p.callTool('fs', target?.tool as string, { path: join(dir, 'big.txt') });
    const guard = createOutputGuard({ dir: join(sessionDir, 'outputs') });
    const guarded = await guard.guard(fits(raw), {
      fullName: target?.fullName as string,
      supportsVision: false,
    });
    const first = guarded.content as string;
    expect(Buffer.byteLength(first)).toBeLessThan(8192 + 600);
    expect(first).toContain('[Output truncated: showing the first');

    let got = first.slice(0, first.lastIndexOf('[Output truncated'));
    let call: Record<string, unknown> | undefined = JSON.parse(
      /Read on with ReadOutput (\{.*?\})/.exec(first)?.[1] ?? 'null',
    );
    let pages = 0;
    while (call && pages < 100) {
      const page = await readOutputTool.run(call, ctxOf(sessionDir));
      expect(page.isError).toBeUndefined();
      got += page.content.slice(0, page.content.lastIndexOf('\n[ReadOutput:'));
      const next = /Continue with ReadOutput (\{.*?\})/.exec(page.content)?.[1];
      call = next ? JSON.parse(next) : undefined;
      pages += 1;
    }
    expect(pages).toBeGreaterThan(1);
    expect(got === text).toBe(true);
  });

  it('server-everything: the tiny image as an image block for vision, a saved PNG otherwise', async () => {
    const dir = tmp?.path as string;
    const p = poolOf({ everything: realServer('everything') });
    const rec = await p.connect('everything');
    const flat = buildFlatTools(rec.tools.map((t) => ({ ...t, server: 'everything' })));
    for (const d of flat.declarations) expect(schemaProblems(d.inputSchema)).toEqual([]);

    const raw = await p.callTool('everything', 'get-tiny-image', {});
    const guard = createOutputGuard({ dir: join(dir, 'session', 'outputs') });
    const seen = await guard.guard(fits(raw), {
      fullName: 'mcp__everything__get-tiny-image',
      supportsVision: true,
    });
    expect(Array.isArray(seen.content)).toBe(true);
    expect((seen.content as { type: string }[]).some((b) => b.type === 'image')).toBe(true);

    const blind = await guard.guard(fits(raw), {
      fullName: 'mcp__everything__get-tiny-image',
      supportsVision: false,
    });
    expect(typeof blind.content).toBe('string');
    const path = /saved to (\/\S+?\.png)/.exec(blind.content as string)?.[1] as string;
    expect(readFileSync(path).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    const structured = await p.callTool('everything', 'get-structured-content', { location: 'New York' });
    const s = await guard.guard(fits(structured), {
      fullName: 'mcp__everything__get-structured-content',
      supportsVision: false,
    });
    expect(s.isError).toBe(false);
    expect(s.content).toBe(JSON.stringify(structured.structuredContent));
  });
});
