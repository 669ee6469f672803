import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { addServer, createConfigEditor, removeServer } from '../src/edit';
import { parseConfigText } from '../src/parse';

function serverNames(file: string): string[] {
  const parsed = parseConfigText(readFileSync(file, 'utf8'), file, 'user');
  expect(parsed.ok).toBe(true);
  return Object.keys(parsed.servers).sort();
}

const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('concurrent edits of one file in one process', () => {
  it('20 concurrent addServer calls: every one that resolves is in the file', async () => {
    const file = join(tempDir(), 'mcp.json');
    writeFileSync(file, '{\n  // keep me\n  "mcpServers": {}\n}\n');
    const results = await Promise.allSettled(
      range(20, 's').map((name) => addServer(file, name, { command: 'x' })),
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(serverNames(file)).toEqual(range(20, 's').sort());
    expect(readFileSync(file, 'utf8')).toContain('// keep me');
    expect(readdirSync(join(file, '..'))).toEqual(['mcp.json']);
  });

  it('an editor runs its edits of a file in call order (adds and removes interleaved)', async () => {
    const file = join(tempDir(), 'mcp.json');
    const editor = createConfigEditor();
    const calls: Promise<unknown>[] = [];
    for (const name of range(20, 'e')) calls.push(editor.addServer(file, name, { url: 'https://h/mcp' }));
    for (const name of range(10, 'e')) calls.push(editor.removeServer(file, name));
    await Promise.all(calls);
    expect(serverNames(file)).toEqual(range(20, 'e').slice(10).sort());
  });

  it('plain and editor calls together lose nothing', async () => {
    const file = join(tempDir(), '.mcp.json');
    const editor = createConfigEditor();
    await Promise.all([
      ...range(10, 'p').map((n) => addServer(file, n, { command: 'x' })),
      ...range(10, 'q').map((n) => editor.addServer(file, n, { command: 'x' })),
    ]);
    expect(serverNames(file)).toEqual([...range(10, 'p'), ...range(10, 'q')].sort());
  });

  it('a failed edit does not block the next one in an editor queue', async () => {
    const file = join(tempDir(), 'mcp.json');
    const editor = createConfigEditor();
    const first = editor.removeServer(file, 'nope');
    const second = editor.addServer(file, 'a', { command: 'x' });
    await expect(first).rejects.toMatchObject({ code: 'CONFIG_NOT_FOUND' });
    await expect(second).resolves.toMatchObject({ created: true });
    expect(serverNames(file)).toEqual(['a']);
  });
});

function waitForLine(child: ChildProcess, predicate: (line: string) => boolean): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no expected line from ${child.pid} in 240 s`)), 240_000);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      const hit = lines.find(predicate);
      if (hit !== undefined) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolvePromise(hit);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child ${child.pid} exited (${code}) before the expected line`));
    });
  });
}

describe('concurrent edits of one file from several processes', () => {
  // editor: one createConfigEditor() per process (the way hosts use it), 50 adds each.
  // plain: the module-level addServer, where only the lock file serializes (each call polls it), 20 adds each.
  it.each([
    ['editor', 50],
    ['plain', 20],
  ] as const)(
    '4 processes x concurrent addServer (%s, %i each): every resolved add is present, the file always parses',
    async (mode, count) => {
      const dir = tempDir();
      const file = join(dir, 'mcp.json');
      writeFileSync(file, '{\n  "mcpServers": {}\n}\n');
      const indexUrl = pathToFileURL(resolve('src/index.ts')).href;
      const script = resolve('test/fixtures/edit-child.mjs');
      const children = ['a', 'b', 'c', 'd'].map((prefix) =>
        spawn(process.execPath, ['--import', 'tsx', script, indexUrl, file, prefix, String(count), mode], {
          cwd: resolve('.'),
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      );
      try {
        await Promise.all(children.map((c) => waitForLine(c, (l) => l === 'ready')));
        const done = children.map((c) => waitForLine(c, (l) => l.startsWith('[')));
        for (const c of children) c.stdin?.write('go\n');
        let finished = false;
        const all = Promise.all(done).finally(() => {
          finished = true;
        });
        // Meanwhile the file must always read as a valid config.
        let reads = 0;
        while (!finished) {
          const parsed = parseConfigText(readFileSync(file, 'utf8'), file, 'user');
          expect(parsed.ok).toBe(true);
          reads++;
          await new Promise((r) => setImmediate(r));
        }
        const results = (await all).flatMap((line) => JSON.parse(line) as { name: string; ok: boolean }[]);
        const resolved = results.filter((r) => r.ok).map((r) => r.name);
        expect(resolved.length).toBe(4 * count);
        expect(serverNames(file)).toEqual(resolved.sort());
        expect(reads).toBeGreaterThan(0);
        expect(readdirSync(dir)).toEqual(['mcp.json']);
      } finally {
        for (const c of children)
          if (c.exitCode === null && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
      }
    },
    600_000,
  );

  it('remove is serialized with adds too', async () => {
    const file = join(tempDir(), 'mcp.json');
    await Promise.all(range(10, 'r').map((n) => addServer(file, n, { command: 'x' })));
    await Promise.all([
      ...range(5, 'r').map((n) => removeServer(file, n)),
      ...range(5, 't').map((n) => addServer(file, n, { command: 'x' })),
    ]);
    expect(serverNames(file)).toEqual([...range(10, 'r').slice(5), ...range(5, 't')].sort());
  });
});
