import { appendFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '@wave/testkit';
import { afterEach, describe, expect, test } from 'vitest';
import { isAgentError } from '../src/errors';
import { createJsonlSessionStore, parseTranscript, workdirHash } from '../src/sessions/jsonl';
import { world } from './helpers';

const dirs: { cleanup(): Promise<void> }[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await d.cleanup();
});

describe('JSONL session store', () => {
  test('append, rewrite, load by id and latest, under <home>/sessions/<workdir-hash>/', async () => {
    const d = await makeTempDir();
    dirs.push(d);
    const store = createJsonlSessionStore({ home: d.path });
    await store.append('/w', 's1', [{ role: 'user', content: 'a' }]);
    await store.append('/w', 's1', [{ role: 'assistant', content: 'b' }]);
    const text = await readFile(join(d.path, 'sessions', workdirHash('/w'), 's1.jsonl'), 'utf8');
    expect(text.trim().split('\n')).toHaveLength(2);
    expect((await store.load('/w', 's1'))?.messages.map((m) => m.content)).toEqual(['a', 'b']);
    await new Promise((r) => setTimeout(r, 15)); // distinct mtimes for "latest"
    await store.rewrite('/w', 's2', [{ role: 'user', content: 'z' }]);
    expect((await store.load('/w', 'latest'))?.id).toBe('s2');
    expect(await store.load('/other', 'latest')).toBeUndefined();
    expect(await store.load('/w', 'missing')).toBeUndefined();
    expect(() => store.filesDir('/w', 's1')).not.toThrow();
    await expect(store.append('/w', '../evil', [])).rejects.toSatisfy((e: unknown) =>
      isAgentError(e, 'INVALID_OPTIONS'),
    );
  });

  test('rewrite replaces the file atomically: owner-only, no temp file left, and a failed write keeps the old file', async () => {
    const d = await makeTempDir();
    dirs.push(d);
    const store = createJsonlSessionStore({ home: d.path });
    const dir = join(d.path, 'sessions', workdirHash('/w'));
    await store.rewrite('/w', 's1', [{ role: 'user', content: 'old' }]);
    expect((await stat(join(dir, 's1.jsonl'))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['s1.jsonl']);
    // A directory where the file should be: the rename fails, nothing else is touched.
    await mkdir(join(dir, 's2.jsonl', 'x'), { recursive: true });
    await expect(store.rewrite('/w', 's2', [{ role: 'user', content: 'new' }])).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's2.jsonl']);
    expect((await store.load('/w', 's1'))?.messages.map((m) => m.content)).toEqual(['old']);
  });

  test('parseTranscript: a torn last line is skipped with a warning, the rest loads', () => {
    const text = `${JSON.stringify({ role: 'user', content: 'a' })}\n${JSON.stringify({ role: 'assistant', content: 'b' })}\n{"role":"us`;
    const { messages, warnings } = parseTranscript(text, 'f.jsonl');
    expect(messages.map((m) => m.content)).toEqual(['a', 'b']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/f\.jsonl:3: the last line is incomplete/);
  });

  test('an agent resumes a torn session with a warning, and its next save repairs the file', async () => {
    const w = await world();
    const first = await w.agent({ steps: [{ text: 'first answer' }] });
    await first.sendMessage('hello');
    const id = first.sessionId;
    await first.destroy();
    const file = join(w.tmp.home, 'sessions', workdirHash(w.tmp.workdir), `${id}.jsonl`);
    await appendFile(file, '{"role":"assist');

    const second = await w.agent({ steps: [{ text: 'second answer' }], sessionId: 'latest' });
    expect(second.sessionId).toBe(id);
    const warnings: string[] = [];
    second.on('warning', (x) => warnings.push(x.code));
    expect(warnings).toEqual(['SESSION_TORN']);
    expect(second.getMessages().map((m) => m.content)).toEqual(['hello', 'first answer']);
    await second.sendMessage('again');
    const reread = parseTranscript(await readFile(file, 'utf8'), file);
    expect(reread.warnings).toEqual([]);
    expect(reread.messages.map((m) => m.content)).toEqual([
      'hello',
      'first answer',
      'again',
      'second answer',
    ]);
  });

  test('replaceHistory is persisted as the new transcript; an unknown session id is an error', async () => {
    const w = await world();
    const a = await w.agent({ steps: [{ text: 'x' }, { text: 'y' }] });
    await a.sendMessage('one');
    a.replaceHistory([{ role: 'user', content: 'compacted' }]);
    await a.sendMessage('two');
    const id = a.sessionId;
    await a.destroy();
    const b = await w.agent({ steps: [], sessionId: id });
    expect(b.getMessages().map((m) => m.content)).toEqual(['compacted', 'two', 'y']);
    await expect(w.agent({ steps: [], sessionId: 'nope' })).rejects.toSatisfy((e: unknown) =>
      isAgentError(e, 'SESSION_NOT_FOUND'),
    );
  });
});
