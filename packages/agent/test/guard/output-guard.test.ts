import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { createOutputGuard, type GuardedResult, type ToolCallResultLike } from '../../src/guard/output-guard';

const tempDir = (): string => makeTempDir('wave-guard-');

const ctx = { fullName: 'mcp__fx__tool', supportsVision: false };
const vision = { fullName: 'mcp__fx__shot', supportsVision: true };
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');

function text(result: GuardedResult): string {
  if (typeof result.content === 'string') return result.content;
  return result.content.map((b) => (b.type === 'text' ? b.text : `<${b.mimeType}>`)).join('|');
}

/** The file a result names ("saved at <path>" / "saved to <path>"). */
function savedPath(result: GuardedResult): string {
  const m = /saved (?:at|to) (\/\S+?\.(?:txt|json|png|bin|wav))/.exec(text(result));
  if (!m?.[1]) throw new Error(`no saved path in: ${text(result)}`);
  return m[1];
}

describe('createOutputGuard', () => {
  it('passes a small result through and creates no directory', async () => {
    const dir = join(tempDir(), 'out');
    const g = createOutputGuard({ dir });
    const r = await g.guard(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'text', text: 'world' },
        ],
      },
      ctx,
    );
    expect(r).toEqual({ content: 'hello\nworld', isError: false });
    expect(existsSync(dir)).toBe(false);
  });

  it('keeps isError', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    expect(await g.guard({ content: [{ type: 'text', text: 'boom' }], isError: true }, ctx)).toEqual({
      content: 'boom',
      isError: true,
    });
  });

  it('cuts text over 8 KB, spills the whole text to a 0600 file and says how to read on', async () => {
    const dir = join(tempDir(), 'out');
    const g = createOutputGuard({ dir });
    const full = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(50)}`).join('\n');
    const r = await g.guard({ content: [{ type: 'text', text: full }] }, ctx);
    const out = text(r);
    expect(Buffer.byteLength(out)).toBeLessThan(8192 + 600);
    expect(out.startsWith('line 0 ')).toBe(true);
    const path = savedPath(r);
    expect(path.startsWith(`${dir}/`)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(full);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const shown = out.split('\n').length - 1; // the notice is the last line
    expect(out).toContain(`ReadOutput {"path":"${path}","offset":${shown}}`);
  });

  it('cuts text over 1 000 lines even when it is small in bytes', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const full = Array.from({ length: 1500 }, (_, i) => String(i % 10)).join('\n');
    const r = await g.guard({ content: [{ type: 'text', text: full }] }, ctx);
    expect(text(r)).toContain('showing the first 1000 of 1500 lines');
  });

  it('honours custom limits', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out'), limits: { maxTextLines: 2 } });
    expect(g.limits.maxTextLines).toBe(2);
    expect(g.limits.maxTextBytes).toBe(8192);
    const r = await g.guard({ content: [{ type: 'text', text: 'a\nb\nc' }] }, ctx);
    expect(text(r)).toMatch(/^a\nb\n\[Output truncated: showing the first 2 of 3 lines/);
  });

  it('sends small structured content once (the JSON text copy is not repeated)', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const structuredContent = { temperature: 21, unit: 'C' };
    const r = await g.guard(
      { content: [{ type: 'text', text: JSON.stringify(structuredContent, null, 2) }], structuredContent },
      ctx,
    );
    expect(r.content).toBe('{"temperature":21,"unit":"C"}');
  });

  it('sends structured content up to 16 KB whole, though it is over the 8 KB text limit', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const structuredContent = {
      rows: Array.from({ length: 120 }, (_, i) => ({ id: i, name: `row-${i}`.padEnd(80, '.') })),
    };
    const json = JSON.stringify(structuredContent);
    expect(Buffer.byteLength(json)).toBeGreaterThan(8192);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(16384);
    const r = await g.guard(
      { content: [{ type: 'text', text: JSON.stringify(structuredContent, null, 2) }], structuredContent },
      ctx,
    );
    expect(r.content).toBe(json);
  });

  it('keeps a text that is not the JSON copy, and then does not add the structured content', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const r = await g.guard(
      { content: [{ type: 'text', text: 'It is 21 C' }], structuredContent: { t: 21 } },
      ctx,
    );
    expect(r.content).toBe('It is 21 C');
  });

  it('summarizes structured content over 16 KB and saves the full JSON', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const structuredContent = {
      query: 'cats',
      results: Array.from({ length: 300 }, (_, i) => ({ type: 'hit', id: i, snippet: 's'.repeat(200) })),
    };
    const r = await g.guard({ content: [], structuredContent }, ctx);
    const out = text(r);
    expect(out).toMatch(/^\[Structured result of \d+ bytes, summarized; the full JSON is saved at /);
    expect(out).toContain('Small fields: {"query":"cats"}');
    expect(out).toContain('Field "results": 300 blocks (hit x300)');
    expect(out).toContain('  [19] ');
    expect(out).not.toContain('  [20] ');
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(16384 + 400);
    expect(JSON.parse(readFileSync(savedPath(r), 'utf8'))).toEqual(structuredContent);
  });

  it('sends images as image blocks to a vision model', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const r = await g.guard(
      {
        content: [
          { type: 'text', text: 'a screenshot' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
        ],
      },
      vision,
    );
    expect(r.content).toEqual([
      { type: 'text', text: 'a screenshot' },
      { type: 'image', mimeType: 'image/png', data: PNG },
    ]);
  });

  it('saves images to files for a model without vision, and names the file', async () => {
    const dir = join(tempDir(), 'out');
    const g = createOutputGuard({ dir });
    const r = await g.guard({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }, ctx);
    expect(typeof r.content).toBe('string');
    expect(text(r)).toMatch(
      /^\[image \(image\/png, 16 bytes\) saved to .+\.png; this model cannot see images\]$/,
    );
    const path = savedPath(r);
    expect(readFileSync(path)).toEqual(Buffer.from(PNG, 'base64'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('counts images against the per-turn limit; startTurn() starts the count again', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out'), limits: { maxImagesPerTurn: 3 } });
    const two = { content: [0, 1].map(() => ({ type: 'image', data: PNG, mimeType: 'image/png' })) };
    const first = await g.guard(two, vision);
    const second = await g.guard(two, vision);
    const blocks = (r: GuardedResult) =>
      Array.isArray(r.content) ? r.content.filter((b) => b.type === 'image').length : 0;
    expect(blocks(first)).toBe(2);
    expect(blocks(second)).toBe(1);
    expect(text(second)).toContain('the limit of 3 images per turn is reached');
    g.startTurn();
    expect(blocks(await g.guard(two, vision))).toBe(2);
  });

  it('saves an image over maxImageBytes instead of sending it', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out'), limits: { maxImageBytes: 8 } });
    const r = await g.guard({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }, vision);
    expect(text(r)).toContain('larger than 8 bytes');
  });

  it('renders resources, links, audio and unknown blocks', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    const r = await g.guard(
      {
        content: [
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'A' } },
          {
            type: 'resource',
            resource: { uri: 'file:///b.bin', blob: PNG, mimeType: 'application/x-thing' },
          },
          { type: 'resource_link', uri: 'file:///c', name: 'c', description: 'the c file' },
          { type: 'audio', data: PNG, mimeType: 'audio/wav' },
          { type: 'hologram', depth: 3 },
          'junk',
          null,
        ],
      },
      ctx,
    );
    const out = text(r);
    expect(out).toContain('[resource file:///a.txt]\nA');
    expect(out).toContain('[resource link: c file:///c - the c file]');
    expect(out).toContain('[hologram block: {"type":"hologram","depth":3}]');
    expect(out).toMatch(
      /\[resource file:\/\/\/b\.bin \(application\/x-thing, 16 bytes\) saved to \S+\.bin\]/,
    );
    expect(out).toMatch(/\[audio \(audio\/wav, 16 bytes\) saved to \S+\.wav\]/);
  });

  it('never throws on malformed results', async () => {
    const g = createOutputGuard({ dir: join(tempDir(), 'out') });
    for (const bad of [
      null,
      undefined,
      42,
      'x',
      { content: 'nope' },
      { content: [{ type: 'text' }] },
      { structuredContent: 10n },
    ]) {
      const r = await g.guard(bad as unknown as ToolCallResultLike, ctx);
      expect(typeof r.isError).toBe('boolean');
    }
  });

  it('says so when the spill directory cannot be created, and still cuts', async () => {
    const base = tempDir();
    writeFileSync(join(base, 'file'), 'x');
    const g = createOutputGuard({ dir: join(base, 'file', 'out') });
    const r = await g.guard({ content: [{ type: 'text', text: 'y'.repeat(20_000) }] }, ctx);
    expect(text(r)).toMatch(/The full output could not be saved \((ENOTDIR|EEXIST)/);
    expect(r.isError).toBe(false);
  });

  it('two guards on one directory never overwrite each other', async () => {
    const dir = join(tempDir(), 'out');
    const a = createOutputGuard({ dir });
    const b = createOutputGuard({ dir });
    const big = (c: string) => ({ content: [{ type: 'text', text: c.repeat(10_000) }] });
    const [ra, rb] = await Promise.all([a.guard(big('a'), ctx), b.guard(big('b'), ctx)]);
    expect(savedPath(ra)).not.toBe(savedPath(rb));
    expect(readFileSync(savedPath(ra), 'utf8')).toBe('a'.repeat(10_000));
    expect(readFileSync(savedPath(rb), 'utf8')).toBe('b'.repeat(10_000));
    expect(readdirSync(dir)).toHaveLength(2);
  });
});
