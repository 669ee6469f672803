import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { describe, expect, it, test } from 'vitest';
import { readOutputTool } from '../../src/builtins/read-output';
import type { BuiltinContext } from '../../src/builtins/types';
import { createOutputGuard } from '../../src/guard/output-guard';

const tempDir = (): string => makeTempDir('wave-read-');

function context(sessionDir: string): BuiltinContext {
  return {
    workdir: sessionDir,
    home: sessionDir,
    sessionDir,
    reloadConfig: async () => {
      throw new Error('ReadOutput must not reload the config');
    },
  };
}

/** A session dir with one spilled file `out/big.txt`. */
function session(content: string): { sessionDir: string; file: string; ctx: BuiltinContext } {
  const base = tempDir();
  const sessionDir = join(base, 'session');
  mkdirSync(join(sessionDir, 'out'), { recursive: true });
  const file = join(sessionDir, 'out', 'big.txt');
  writeFileSync(file, content);
  return { sessionDir, file, ctx: context(sessionDir) };
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}`).join('\n');

/** The page without its last line (the "[ReadOutput: ...]" footer). */
function body(content: string): string {
  return content.slice(0, content.lastIndexOf('\n[ReadOutput:'));
}

/** The call the footer (or a truncation notice) says to make next, if any. */
function nextCall(content: string): Record<string, unknown> | undefined {
  const m = /(?:Continue with|Read on with) ReadOutput (\{.*?\})/.exec(content);
  return m?.[1] ? (JSON.parse(m[1]) as Record<string, unknown>) : undefined;
}

describe('ReadOutput', () => {
  it('is declared with a path and never asks for approval', () => {
    expect(readOutputTool.declaration.name).toBe('ReadOutput');
    expect(readOutputTool.alwaysAsk).toBe(false);
    expect(readOutputTool.declaration.inputSchema.required).toEqual(['path']);
  });

  it('pages by lines and says how many remain', async () => {
    const { file, ctx } = session(numbered(2500));
    const first = await readOutputTool.run({ path: file }, ctx);
    expect(first.isError).toBeUndefined();
    expect(first.content.startsWith('1\n2\n')).toBe(true);
    expect(first.content).toContain(`[ReadOutput: lines 1-1000 of 2500 in ${file}; 1500 lines remain.`);
    expect(nextCall(first.content)).toEqual({ path: file, offset: 1000 });
    const last = await readOutputTool.run({ path: file, offset: 2400, limit: 500 }, ctx);
    expect(last.content).toMatch(/^2401\n/);
    expect(last.content).toContain('lines 2401-2500 of 2500');
    expect(last.content).toContain('end of file.');
    expect(nextCall(last.content)).toBeUndefined();
  });

  it('stops a page of lines at 8000 characters', async () => {
    const { file, ctx } = session(
      Array.from({ length: 2000 }, (_, i) => `row ${String(i).padStart(5, '0')}`).join('\n'),
    );
    const r = await readOutputTool.run({ path: file }, ctx);
    expect(r.content).toContain('lines 1-800 of 2000'); // 800 lines of 10 characters
    expect(nextCall(r.content)).toEqual({ path: file, offset: 800 });
  });

  it('pages by characters', async () => {
    const { file, ctx } = session('abcdefghij');
    const r = await readOutputTool.run({ path: file, unit: 'chars', offset: 2, limit: 3 }, ctx);
    expect(r.content).toBe(
      `cde\n[ReadOutput: characters 2-5 of 10 in ${file}; 5 characters remain. Continue with ReadOutput ${JSON.stringify({ path: file, unit: 'chars', offset: 5 })}.]`,
    );
  });

  it('does not split a surrogate pair at a page end', async () => {
    const { file, ctx } = session('a😀b');
    const r = await readOutputTool.run({ path: file, unit: 'chars', limit: 2 }, ctx);
    expect(r.content.startsWith('a\n')).toBe(true);
    expect(nextCall(r.content)).toMatchObject({ offset: 1 });
  });

  it('shows the start of a line longer than a page and continues by characters', async () => {
    const { file, ctx } = session(`short\n${'w'.repeat(20_000)}\nend`);
    const r = await readOutputTool.run({ path: file, offset: 1 }, ctx);
    expect(r.content.startsWith('w'.repeat(8000))).toBe(true);
    expect(nextCall(r.content)).toEqual({ path: file, unit: 'chars', offset: 6 + 8000 });
  });

  it('accepts a path relative to the session dir', async () => {
    const { ctx } = session('hello');
    const r = await readOutputTool.run({ path: 'out/big.txt' }, ctx);
    expect(r.content).toMatch(/^hello\n\[ReadOutput: lines 1-1 of 1 in .*big\.txt; end of file\.\]$/);
  });

  it('reads back everything the output guard cut, by following its notices', async () => {
    const base = tempDir();
    const sessionDir = join(base, 'session');
    const guard = createOutputGuard({ dir: join(sessionDir, 'outputs') });
    const full = `${Array.from({ length: 3000 }, (_, i) => `row ${i} ${'#'.repeat(i % 40)}`).join('\n')}\n${'z'.repeat(30_000)}\ntail`;
    const guarded = await guard.guard(
      { content: [{ type: 'text', text: full }] },
      { fullName: 'mcp__s__t', supportsVision: false },
    );
    const first = guarded.content as string;
    let got = first.slice(0, first.lastIndexOf('[Output truncated'));
    let call = nextCall(first);
    for (let n = 0; call && n < 100; n++) {
      const page = await readOutputTool.run(call, context(sessionDir));
      expect(page.isError).toBeUndefined();
      got += body(page.content);
      call = nextCall(page.content);
    }
    expect(got.length).toBe(full.length);
    expect(got === full).toBe(true);
  });

  it('pages through random text whole, in any unit and page size (60 seeds)', async () => {
    const ALPHABET = ['a', 'b', ' ', '\n', '\n', 'é', '😀', 'x'.repeat(50), 'y'.repeat(3000)];
    let a = 7;
    const r = () => {
      a = (a * 1103515245 + 12345) % 2147483648;
      return a / 2147483648;
    };
    for (let seed = 1; seed <= 60; seed++) {
      let text = '';
      const length = Math.floor(r() * 300);
      for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(r() * ALPHABET.length)];
      const { file, ctx } = session(text);
      let got = '';
      let call: Record<string, unknown> | undefined =
        r() < 0.5 ? { path: file } : { path: file, unit: 'chars' };
      for (let n = 0; call && n < 10_000; n++) {
        const limit = call.unit === 'chars' ? 1 + Math.floor(r() * 5000) : 1 + Math.floor(r() * 40);
        const page = await readOutputTool.run({ ...call, limit }, ctx);
        expect(page.isError, `seed ${seed}: ${page.content.slice(-200)}`).toBeUndefined();
        got += body(page.content);
        call = nextCall(page.content);
      }
      expect(got === text, `seed ${seed}`).toBe(true);
    }
  });

  describe("reads only this session's files", () => {
    it('rejects ".." in the path', async () => {
      const { ctx } = session('x');
      const r = await readOutputTool.run({ path: 'out/../out/big.txt' }, ctx);
      expect(r).toEqual({ isError: true, content: expect.stringContaining('contains ".."') });
    });

    it('rejects a file outside the session dir, also one of another session', async () => {
      const { ctx, sessionDir } = session('x');
      const other = session('TOPSECRET of another session');
      const outside = join(tempDir(), 'secret.txt');
      writeFileSync(outside, 'TOPSECRET');
      const sibling = `${sessionDir}-evil`;
      mkdirSync(sibling);
      writeFileSync(join(sibling, 'f.txt'), 'TOPSECRET');
      for (const path of [other.file, outside, join(sibling, 'f.txt'), '/etc/passwd']) {
        const r = await readOutputTool.run({ path }, ctx);
        expect(r.isError).toBe(true);
        expect(r.content).toContain('is not a saved output of this session');
        expect(r.content).not.toContain('TOPSECRET');
      }
    });

    it('rejects a symlink that points out of the session dir', async () => {
      const { ctx, sessionDir } = session('x');
      const outside = join(tempDir(), 'secret.txt');
      writeFileSync(outside, 'secret');
      symlinkSync(outside, join(sessionDir, 'out', 'link.txt'));
      symlinkSync(join(outside, '..'), join(sessionDir, 'dirlink'));
      for (const path of [join(sessionDir, 'out', 'link.txt'), join(sessionDir, 'dirlink', 'secret.txt')]) {
        const r = await readOutputTool.run({ path }, ctx);
        expect(r.isError).toBe(true);
        expect(r.content).toContain('is not a saved output of this session');
      }
    });

    it('follows a symlink that stays inside', async () => {
      const { ctx, sessionDir, file } = session('inside');
      symlinkSync(file, join(sessionDir, 'alias.txt'));
      expect((await readOutputTool.run({ path: 'alias.txt' }, ctx)).content).toMatch(/^inside\n/);
    });

    it('reads regular files only', async () => {
      const { ctx, sessionDir } = session('x');
      for (const path of [join(sessionDir, 'out'), sessionDir]) {
        const r = await readOutputTool.run({ path }, ctx);
        expect(r.isError).toBe(true);
      }
    });

    it('says so when the session has no dir yet', async () => {
      const r = await readOutputTool.run({ path: 'a.txt' }, context(join(tempDir(), 'missing')));
      expect(r).toEqual({ isError: true, content: expect.stringContaining('has no saved outputs yet') });
    });
  });

  test.each([
    { args: {}, message: 'ReadOutput needs "path"' },
    { args: { path: '' }, message: 'ReadOutput needs "path"' },
    { args: { path: 7 }, message: 'ReadOutput needs "path"' },
    { args: { path: 'a\u0000b' }, message: 'NUL' },
    { args: { path: 'out/big.txt', offset: -1 }, message: '"offset" must be a whole number >= 0' },
    { args: { path: 'out/big.txt', offset: 1.5 }, message: '"offset" must be a whole number >= 0' },
    { args: { path: 'out/big.txt', limit: 0 }, message: '"limit" must be a whole number >= 1' },
    { args: { path: 'out/big.txt', unit: 'bytes' }, message: '"unit" must be "lines" or "chars"' },
    { args: { path: 'out/big.txt', offset: 5 }, message: 'Offset 5 is past the end' },
    { args: { path: 'out/nope.txt' }, message: 'No such file' },
  ])('bad input $args', async ({ args, message }) => {
    const { ctx } = session('one\ntwo');
    const r = await readOutputTool.run(args, ctx);
    expect(r.isError).toBe(true);
    expect(r.content).toContain(message);
  });
});
