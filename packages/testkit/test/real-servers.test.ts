import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realServer } from '../src/real-servers';
import { makeTempDir, type TempDir } from '../src/temp';
import { connectStdio, textOf, useCleanup } from './support';

const cleanup = useCleanup();
const dirs: TempDir[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => d.cleanup()));
});
async function tempDir() {
  const dir = await makeTempDir('wave-testkit-real-');
  dirs.push(dir);
  return dir.path;
}

describe('realServer', () => {
  it('everything: resolves the installed entry, lists its tools, calls echo', async () => {
    const spec = realServer('everything');
    expect(spec.command).toBe(process.execPath);
    expect(spec.args[0]).toMatch(/server-everything[\\/]dist[\\/]index\.js$/);
    const { client } = await connectStdio(cleanup, spec);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(13); // TOOLCHAIN.md: 13 without sampling/elicitation/roots
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']));
    expect((client.getInstructions() ?? '').length).toBeGreaterThan(100);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toContain('hi');
  });

  it('memory: keeps its graph in the given file', async () => {
    const dir = await tempDir();
    const spec = realServer('memory', { memoryFilePath: join(dir, 'memory.jsonl') });
    expect(spec.env.MEMORY_FILE_PATH).toBe(join(dir, 'memory.jsonl'));
    const { client } = await connectStdio(cleanup, spec);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(9);
    expect(names).toEqual(expect.arrayContaining(['create_entities', 'read_graph', 'search_nodes']));
    await client.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'wave', entityType: 'project', observations: ['testkit'] }] },
    });
    expect(textOf(await client.callTool({ name: 'read_graph', arguments: {} }))).toContain('wave');
  });

  it('filesystem: only the allowed directory', async () => {
    const dir = await tempDir();
    const spec = realServer('filesystem', { allowedDirs: [dir] });
    expect(spec.args.slice(1)).toEqual([dir]);
    const { client } = await connectStdio(cleanup, spec);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(14);
    expect(names).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']));
    await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'a.txt'), content: 'wave' } });
    expect(textOf(await client.callTool({ name: 'list_directory', arguments: { path: dir } }))).toContain(
      'a.txt',
    );
  });

  it.each([
    ['memory' as const, {}, /memoryFilePath/],
    ['filesystem' as const, {}, /allowedDirs/],
    ['filesystem' as const, { allowedDirs: [] }, /allowedDirs/],
  ])('%s without its required option throws MISSING_OPTION', (name, options, message) => {
    expect(() => realServer(name, options)).toThrow(message);
    expect(() => realServer(name, options)).toThrow(expect.objectContaining({ code: 'MISSING_OPTION' }));
  });

  it('an unknown name throws UNKNOWN_REAL_SERVER', () => {
    expect(() => realServer('nope' as 'memory')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_REAL_SERVER' }),
    );
  });
});
