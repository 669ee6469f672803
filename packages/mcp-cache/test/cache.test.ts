import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { fakeClock } from '@wave/testkit';
import { tempDir } from '@wave/testkit/vitest';
import { beforeEach, describe, expect, it } from 'vitest';
import { createToolCache, type ToolCacheOptions } from '../src/cache';
import { parseCacheFile } from '../src/core';
import { McpCacheError } from '../src/errors';
import { type CacheFs, nodeCacheFs } from '../src/fs';
import type { ToolCacheDebugEvent, ToolSnapshotInput } from '../src/types';

const WD_A = '/projects/alpha';
const WD_B = '/projects/beta';
const T0 = Date.UTC(2026, 0, 15);

const tools = (server: string, n = 2) =>
  Array.from({ length: n }, (_, i) => ({
    name: `${server}_tool${i}`,
    description: `Tool ${i} of ${server}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    annotations: { readOnlyHint: i % 2 === 0 },
  }));
const entry = (server: string, extra: Partial<ToolSnapshotInput> = {}): ToolSnapshotInput => ({
  server,
  fingerprint: `fp-${server}`,
  tools: tools(server),
  lastConnectedAt: T0,
  ...extra,
});

let dir: string;
let home: string;
let file: string;
let events: ToolCacheDebugEvent[];
beforeEach(() => {
  dir = tempDir('wave-mcp-cache-');
  home = join(dir, 'home');
  file = join(home, 'mcp-tools-cache.json');
  events = [];
});

const open = (over: ToolCacheOptions = {}) =>
  createToolCache({
    home,
    clock: fakeClock({ start: T0, auto: true }),
    onDebug: (e) => events.push(e),
    ...over,
  });
const onDisk = () =>
  JSON.parse(readFileSync(file, 'utf8')) as {
    version: number;
    entries: { workdir: string; server: string }[];
  };
const codes = () => events.map((e) => e.code);

describe('createToolCache: location and options', () => {
  it.each([
    ['home option', { home: '/h', env: { WAVE_HOME: '/e' } }, '/h/mcp-tools-cache.json'],
    ['$WAVE_HOME from env', { env: { WAVE_HOME: '/e' } }, '/e/mcp-tools-cache.json'],
    ['~/.wave by default', { env: {} }, join(homedir(), '.wave', 'mcp-tools-cache.json')],
    ['file option wins', { home: '/h', file: '/x/cache.json' }, '/x/cache.json'],
    ['~/ home, as @wave/mcp-config reads it', { home: '~/h' }, join(homedir(), 'h', 'mcp-tools-cache.json')],
    ['empty home option: $WAVE_HOME', { home: '', env: { WAVE_HOME: '/e' } }, '/e/mcp-tools-cache.json'],
  ])('%s', (_label, options, want) => {
    // creating does no I/O, so the default location is safe to compute here
    expect(createToolCache(options).file).toBe(want);
  });

  it.each([
    ['ttlMs', { ttlMs: -1 }],
    ['ttlMs NaN', { ttlMs: Number.NaN }],
    ['lockTimeoutMs Infinity', { lockTimeoutMs: Infinity }],
    ['lockStaleMs string', { lockStaleMs: '5' as unknown as number }],
  ])('rejects a bad option: %s', (_label, options) => {
    expect(() => createToolCache({ home, ...options })).toThrowError(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });

  it('creates nothing on disk until the first write', async () => {
    const cache = open();
    expect(await cache.list(WD_A)).toEqual([]);
    expect(existsSync(home)).toBe(false);
    expect(events).toEqual([]); // a missing file is not a problem worth reporting
  });
});

describe('get / list / write', () => {
  it('round trips every field', async () => {
    const cache = open();
    const written = [
      entry('fs', { instructions: 'Use absolute paths.\nMax 10 calls/min.' }),
      entry('git', { tools: [] }),
    ];
    await cache.write(WD_A, written, ['fs', 'git']);
    expect(await cache.get(WD_A, 'fs', 'fp-fs')).toEqual({ workdir: WD_A, ...written[0] });
    expect(await cache.get(WD_A, 'git', 'fp-git')).toEqual({ workdir: WD_A, ...written[1] });
    expect(await cache.list(WD_A)).toEqual(written.map((e) => ({ workdir: WD_A, ...e })));
    // and a second instance (fresh read from disk) sees the same
    expect(await open().list(WD_A)).toEqual(await cache.list(WD_A));
    expect(onDisk().version).toBe(1);
    expect(events).toEqual([]);
  });

  it('returns copies: mutating a result or the written input changes nothing stored', async () => {
    const cache = open();
    const input = entry('fs');
    await cache.write(WD_A, [input], ['fs']);
    input.tools.push({ name: 'injected' });
    const got = await cache.get(WD_A, 'fs', 'fp-fs');
    got?.tools.push({ name: 'mutated' });
    expect((await cache.get(WD_A, 'fs', 'fp-fs'))?.tools.map((t) => t.name)).toEqual([
      'fs_tool0',
      'fs_tool1',
    ]);
  });

  it('hides an entry whose fingerprint differs (config changed)', async () => {
    const cache = open();
    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(await cache.get(WD_A, 'fs', 'fp-fs-changed')).toBeUndefined();
    expect(await cache.get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    expect(await cache.get(WD_B, 'fs', 'fp-fs')).toBeUndefined(); // same server, other workdir
    expect(await cache.get(WD_A, 'nope', 'fp-fs')).toBeUndefined();
  });

  it('an empty tool list overwrites the old tools (not skipped)', async () => {
    const cache = open();
    await cache.write(WD_A, [entry('fs', { instructions: 'old' })], ['fs']);
    await cache.write(WD_A, [entry('fs', { tools: [], lastConnectedAt: T0 + 1 })], ['fs']);
    const got = await cache.get(WD_A, 'fs', 'fp-fs');
    expect(got?.tools).toEqual([]);
    expect(got?.instructions).toBeUndefined();
    expect(got?.lastConnectedAt).toBe(T0 + 1);
  });

  it('prunes a removed server only in its own workdir and never touches other workdirs', async () => {
    const cache = open();
    await cache.write(WD_B, [entry('fs'), entry('git')], ['fs', 'git']);
    const bBefore = onDisk().entries.filter((e) => e.workdir === WD_B);
    await cache.write(WD_A, [entry('fs'), entry('git')], ['fs', 'git']);
    await cache.write(WD_A, [entry('fs', { lastConnectedAt: T0 + 5 })], ['fs']); // git removed from A's config
    expect((await cache.list(WD_A)).map((s) => s.server)).toEqual(['fs']);
    expect((await cache.list(WD_B)).map((s) => s.server)).toEqual(['fs', 'git']);
    expect(onDisk().entries.filter((e) => e.workdir === WD_B)).toEqual(bBefore);
  });

  it('keeps configured servers that were not written this time', async () => {
    const cache = open();
    await cache.write(WD_A, [entry('fs'), entry('git')], ['fs', 'git']);
    await cache.write(WD_A, [entry('fs', { tools: [] })], ['fs', 'git']);
    expect((await cache.get(WD_A, 'git', 'fp-git'))?.tools).toHaveLength(2);
  });

  it('normalizes the workdir (trailing slash, dot segments)', async () => {
    const cache = open();
    await cache.write(`${WD_A}/`, [entry('fs')], ['fs']);
    expect(await cache.get(`${WD_A}/sub/..`, 'fs', 'fp-fs')).toBeDefined();
    expect(onDisk().entries[0]?.workdir).toBe(WD_A);
  });

  it('TTL: old entries are hidden on read and dropped (in every workdir) on write', async () => {
    const clock = fakeClock({ start: T0, auto: true });
    const cache = open({ clock, ttlMs: 1000 });
    await cache.write(WD_B, [entry('old')], ['old']);
    await cache.write(WD_A, [entry('fs')], ['fs']);
    clock.advance(1001);
    expect(await cache.get(WD_A, 'fs', 'fp-fs')).toBeUndefined();
    expect(await cache.list(WD_B)).toEqual([]);
    expect(onDisk().entries).toHaveLength(2); // reads never write
    await cache.write(WD_A, [entry('new', { lastConnectedAt: clock.now() })], ['fs', 'new']);
    expect(onDisk().entries.map((e) => `${e.workdir}:${e.server}`)).toEqual([`${WD_A}:new`]);
  });

  it('sees writes of other instances (and other processes) without restarting', async () => {
    const reader = open();
    expect(await reader.list(WD_A)).toEqual([]);
    await open().write(WD_A, [entry('fs')], ['fs']);
    expect(await reader.get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    await open().write(WD_A, [entry('fs', { tools: [] })], ['fs']);
    expect((await reader.get(WD_A, 'fs', 'fp-fs'))?.tools).toEqual([]);
    // and its own next write merges with what the others wrote
    await open().write(WD_B, [entry('git')], ['git']);
    await reader.write(WD_A, [entry('fs', { instructions: 'new' })], ['fs']);
    expect(onDisk().entries.map((e) => `${e.workdir}:${e.server}`)).toEqual([`${WD_A}:fs`, `${WD_B}:git`]);
    expect((await open().get(WD_A, 'fs', 'fp-fs'))?.instructions).toBe('new');
  });

  it('concurrent writes from two instances in one process lose nothing', async () => {
    // Real time: the lock is held for as long as real file I/O takes, so a fake
    // clock (whose waits cost nothing) would time the waiters out on a loaded machine.
    const one = createToolCache({ home, ttlMs: Infinity, onDebug: (e) => events.push(e) });
    const two = createToolCache({ home, ttlMs: Infinity, onDebug: (e) => events.push(e) });
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const cache = i % 2 ? one : two;
      writes.push(cache.write(`/w/${i}`, [entry('fs'), entry('git')], ['fs', 'git']));
    }
    await Promise.all(writes);
    expect(onDisk().entries).toHaveLength(80);
    expect(events.filter((e) => e.code !== 'lock-broken')).toEqual([]);
  });

  it('leaves no lock or temp file behind', async () => {
    const cache = open({ fsync: true });
    await cache.write(WD_A, [entry('fs')], ['fs']);
    await cache.write(WD_B, [entry('fs')], ['fs']);
    expect(readdirSync(home)).toEqual(['mcp-tools-cache.json']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('a throwing onDebug hook changes nothing', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(file, '{broken');
    const cache = createToolCache({
      home,
      ttlMs: Infinity,
      onDebug: () => {
        throw new Error('logger down');
      },
    });
    expect(await cache.list(WD_A)).toEqual([]);
    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(await cache.get(WD_A, 'fs', 'fp-fs')).toBeDefined();
  });
});

describe('programmer errors reject with McpCacheError', () => {
  const bad = (value: unknown) => value as never;
  it.each([
    ['get: workdir not a string', (c: ReturnType<typeof open>) => c.get(bad(1), 's', 'f'), /workdir/],
    ['get: empty workdir', (c: ReturnType<typeof open>) => c.get('', 's', 'f'), /workdir/],
    [
      'get: fingerprint missing',
      (c: ReturnType<typeof open>) => c.get(WD_A, 's', bad(undefined)),
      /fingerprint/,
    ],
    ['list: workdir null', (c: ReturnType<typeof open>) => c.list(bad(null)), /workdir/],
    [
      'write: entries not an array',
      (c: ReturnType<typeof open>) => c.write(WD_A, bad({}), []),
      /entries must/,
    ],
    [
      'write: configuredNames missing',
      (c: ReturnType<typeof open>) => c.write(WD_A, [], bad(undefined)),
      /configuredNames/,
    ],
    [
      'write: a name not a string',
      (c: ReturnType<typeof open>) => c.write(WD_A, [], bad([1])),
      /configuredNames/,
    ],
    [
      'write: entry without tools',
      (c: ReturnType<typeof open>) =>
        c.write(WD_A, [bad({ server: 's', fingerprint: 'f', lastConnectedAt: 1 })], []),
      /entries\[0\].*tools/,
    ],
    [
      'write: tool without name',
      (c: ReturnType<typeof open>) => c.write(WD_A, [entry('ok'), entry('s', { tools: [bad({})] })], []),
      /entries\[1\].*tool 0/,
    ],
  ])('%s', async (_label, call, message) => {
    const cache = open();
    const error = await call(cache).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpCacheError);
    expect(error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(message),
    });
    expect(existsSync(file)).toBe(false); // nothing half-done
  });
});

/** Emulates a non-root user's view of permissions (tests run as root, which reads even mode 000 files). */
function permissionAwareFs(): CacheFs {
  const base = nodeCacheFs();
  return {
    ...base,
    async readFile(path) {
      if ((statSync(path).mode & 0o444) === 0) {
        throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
      }
      return base.readFile(path);
    },
  };
}

describe('a broken cache file reads as empty, silently, and the next write repairs it', () => {
  const kinds: {
    label: string;
    setup(): void;
    code: string;
    options?: () => ToolCacheOptions;
    after?(): void;
  }[] = [
    { label: 'truncated JSON', setup: () => truncateSync(file, 50), code: 'corrupt' },
    { label: 'empty file', setup: () => writeFileSync(file, ''), code: 'corrupt' },
    {
      label: 'wrong types',
      setup: () => writeFileSync(file, '{"version":1,"entries":{"a":1}}'),
      code: 'corrupt',
    },
    {
      label: 'wrong version',
      setup: () => writeFileSync(file, readFileSync(file, 'utf8').replace('"version":1', '"version":2')),
      code: 'corrupt',
    },
    { label: 'not an object', setup: () => writeFileSync(file, '[1,2,3]'), code: 'corrupt' },
    {
      label: 'binary garbage',
      setup: () =>
        writeFileSync(file, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256))),
      code: 'corrupt',
    },
    {
      label: 'a directory in its place (moved aside, contents kept)',
      setup: () => {
        execFileSync('rm', ['-f', file]);
        mkdirSync(file);
        writeFileSync(join(file, 'keep.txt'), 'user data');
      },
      code: 'corrupt',
      after: () => {
        const aside = readdirSync(home).filter((n) => n.startsWith('mcp-tools-cache.json.moved-aside-'));
        expect(aside).toHaveLength(1);
        expect(readFileSync(join(home, aside[0] as string, 'keep.txt'), 'utf8')).toBe('user data');
        expect(codes()).toContain('moved-aside');
      },
    },
    {
      label: 'no read permission (mode 000; permission-aware fs adapter, since tests run as root)',
      setup: () => chmodSync(file, 0o000),
      code: 'read-failed',
      options: () => ({ fs: permissionAwareFs() }),
    },
    {
      label: 'unreadable even for root: a symlink loop (ELOOP)',
      setup: () => {
        execFileSync('rm', ['-f', file]);
        symlinkSync(file, file);
      },
      code: 'read-failed',
    },
    {
      label: 'a FIFO in its place (must not block)',
      setup: () => {
        execFileSync('rm', ['-f', file]);
        execFileSync('mkfifo', [file]);
      },
      code: 'corrupt',
    },
  ];

  it.each(kinds)('$label', async ({ setup, code, options, after }) => {
    await open().write(WD_B, [entry('other')], ['other']); // a valid file first (so "truncated" is real)
    setup();
    events = [];
    const cache = open(options?.() ?? {});
    expect(await cache.get(WD_B, 'other', 'fp-other')).toBeUndefined();
    expect(await cache.list(WD_B)).toEqual([]);
    expect(codes()).toEqual([code]);
    expect(events[0]?.message).toContain(file);

    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(statSync(file).isFile()).toBe(true);
    expect(onDisk()).toMatchObject({ version: 1, entries: [{ workdir: WD_A, server: 'fs' }] });
    expect(await cache.get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    expect(await open().get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    expect(codes().filter((c) => c === 'write-failed' || c === 'lock-timeout')).toEqual([]);
    after?.();
  });

  it('malformed entries are ignored one by one and dropped by the next write', async () => {
    await open().write(WD_A, [entry('fs'), entry('git')], ['fs', 'git']);
    const doc = onDisk();
    (doc.entries[1] as unknown as { tools: unknown }).tools = 'oops';
    writeFileSync(file, JSON.stringify(doc));
    events = [];
    const cache = open();
    expect((await cache.list(WD_A)).map((s) => s.server)).toEqual(['fs']);
    expect(codes()).toEqual(['entry-dropped']);
    await cache.write(WD_B, [entry('x')], ['x']);
    expect(onDisk().entries.map((e) => `${e.workdir}:${e.server}`)).toEqual([`${WD_A}:fs`, `${WD_B}:x`]);
  });

  it('a malformed line (our layout) costs only that entry, is reported when met, and the next write drops it', async () => {
    await open().write(WD_A, [entry('fs'), entry('git')], ['fs', 'git']);
    await open().write(WD_B, [entry('x')], ['x']);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/("server":"git".*"tools":\[)/, '$1"not a tool",'));
    events = [];
    const cache = open();
    expect((await cache.list(WD_B)).map((s) => s.server)).toEqual(['x']);
    expect(events).toEqual([]); // WD_A's lines were not even parsed
    expect((await cache.list(WD_A)).map((s) => s.server)).toEqual(['fs']);
    expect(codes()).toEqual(['entry-dropped']);
    expect(events[0]?.message).toMatch(/server "git" .*tool 0 is not an object/);
    await cache.list(WD_A);
    expect(codes()).toEqual(['entry-dropped']); // once
    await cache.write(WD_B, [entry('y')], ['x', 'y']);
    expect(onDisk().entries.map((e) => `${e.workdir}:${e.server}`)).toEqual([
      `${WD_A}:fs`,
      `${WD_B}:x`,
      `${WD_B}:y`,
    ]);
  });

  it('a parent that is a file: reads empty, the write is reported and skipped, nothing throws', async () => {
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const cache = open({ file: join(dir, 'not-a-dir', 'cache.json') });
    expect(await cache.list(WD_A)).toEqual([]);
    expect(codes()).toEqual(['read-failed']);
    await expect(cache.write(WD_A, [entry('fs')], ['fs'])).resolves.toBeUndefined();
    expect(codes()).toEqual(['read-failed', 'write-failed']);
    expect(events[1]?.message).toMatch(/nothing was written/);
  });

  it.each(['EMFILE', 'EIO'])(
    'a transient read error (%s): reads empty, but the write is skipped instead of replacing other workdirs',
    async (code) => {
      await open().write(WD_B, [entry('other')], ['other']);
      const before = readFileSync(file, 'utf8');
      const base = nodeCacheFs();
      const cache = open({
        fs: {
          ...base,
          readFile: async (path) => {
            if (path !== file) return base.readFile(path); // the lock file reads fine
            throw Object.assign(new Error(`${code}: failed`), { code });
          },
        },
      });
      expect(await cache.list(WD_B)).toEqual([]);
      await cache.write(WD_A, [entry('fs')], ['fs']);
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(codes()).toEqual(['read-failed', 'write-failed']);
      expect(events[1]?.message).toContain(`failed with ${code}`);
      expect(existsSync(`${file}.lock`)).toBe(false);
    },
  );

  it('a failed rename (no permission) leaves the old file intact and no temp file', async () => {
    await open().write(WD_A, [entry('fs')], ['fs']);
    const before = readFileSync(file, 'utf8');
    const base = nodeCacheFs();
    const cache = open({
      fs: {
        ...base,
        rename: async () => {
          throw Object.assign(new Error('EACCES: permission denied, rename'), { code: 'EACCES' });
        },
      },
    });
    await cache.write(WD_A, [entry('fs', { tools: [] })], ['fs']);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(home)).toEqual(['mcp-tools-cache.json']);
    expect(codes()).toEqual(['write-failed']);
    expect(events[0]?.message).toMatch(/EACCES.*left as it was/);
  });
});

describe('locking from the caller side', () => {
  it('a lock held by a live process: the write waits (bounded), is skipped and reported; reads do not wait', async () => {
    const cache = open({ lockTimeoutMs: 2000 });
    await cache.write(WD_A, [entry('fs')], ['fs']);
    const before = readFileSync(file, 'utf8');
    const other = { pid: process.pid, host: hostname(), token: 'x', createdAt: T0 };
    writeFileSync(`${file}.lock`, JSON.stringify(other));
    await cache.write(WD_A, [entry('fs', { tools: [] })], ['fs']);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(codes()).toEqual(['lock-timeout']);
    expect(events[0]?.message).toMatch(/Gave up waiting 2000 ms .*skipped/);
    expect((await cache.get(WD_A, 'fs', 'fp-fs'))?.tools).toHaveLength(2);
    expect(existsSync(`${file}.lock`)).toBe(true); // not ours to remove
  });

  it.each([
    ['its owner process is dead (this host)', () => hostname(), T0, /no longer running/],
    [
      'it is older than lockStaleMs (another host: pid not checked)',
      () => 'elsewhere',
      T0 - 15_001,
      /limit 15000 ms/,
    ],
  ])('a lock is broken when %s, and the write goes through', async (_label, host, createdAt, reason) => {
    mkdirSync(home, { recursive: true });
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 999_999, host: host(), token: 'x', createdAt }));
    const cache = open({ isPidAlive: (pid) => pid !== 999_999 });
    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(codes()).toEqual(['lock-broken']);
    expect(events[0]?.message).toMatch(reason);
    expect(await open().get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a reader never sees a half-written file (temp + rename)', async () => {
    const cache = open();
    await cache.write(WD_A, [entry('fs')], ['fs']);
    const before = readFileSync(file, 'utf8');
    let releaseRename: () => void = () => {};
    let renameReached: () => void = () => {};
    const reached = new Promise<void>((r) => {
      renameReached = r;
    });
    const base = nodeCacheFs();
    const slow = open({
      fs: {
        ...base,
        rename: async (from, to) => {
          renameReached();
          await new Promise<void>((r) => {
            releaseRename = r;
          });
          return base.rename(from, to);
        },
      },
    });
    const writing = slow.write(WD_A, [entry('fs', { tools: [] })], ['fs']);
    await reached;
    // the new content is fully written to a temp file, but the cache file is still the old one
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect((await open().get(WD_A, 'fs', 'fp-fs'))?.tools).toHaveLength(2);
    releaseRename();
    await writing;
    expect((await open().get(WD_A, 'fs', 'fp-fs'))?.tools).toEqual([]);
  });
});

describe('locks a failed or skewed writer left behind do not block writes', () => {
  it('an empty lock (its writer failed on a full disk) is broken after a 2 s grace, not after lockStaleMs', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(`${file}.lock`, '');
    utimesSync(`${file}.lock`, T0 / 1000, T0 / 1000);
    const clock = fakeClock({ start: T0, auto: true });
    await open({ clock }).write(WD_A, [entry('fs')], ['fs']);
    expect(codes()).toEqual(['lock-broken']);
    expect(clock.now() - T0).toBeLessThan(2500);
    expect(await open().get(WD_A, 'fs', 'fp-fs')).toBeDefined();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a lock file system that fails mid-write: the next write still goes through', async () => {
    const base = nodeCacheFs();
    let failed = false;
    const fs: CacheFs = {
      ...base,
      writeFile: async (path, data, opts) => {
        if (path.endsWith('.lock') && !failed) {
          failed = true;
          writeFileSync(path, ''); // created, then the disk is full: an adapter that leaves it behind
          utimesSync(path, T0 / 1000, T0 / 1000);
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        return base.writeFile(path, data, opts);
      },
    };
    mkdirSync(home, { recursive: true });
    const clock = fakeClock({ start: T0, auto: true });
    const cache = open({ clock, fs });
    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(codes()).toEqual(['write-failed']);
    const start = clock.now();
    await cache.write(WD_A, [entry('fs')], ['fs']);
    expect(codes()).toEqual(['write-failed', 'lock-broken']);
    expect(clock.now() - start).toBeLessThan(5000);
    expect(await open().get(WD_A, 'fs', 'fp-fs')).toBeDefined();
  });

  it('a lock dated an hour in the future (a clock stepped back, a skewed host) is broken', async () => {
    mkdirSync(home, { recursive: true });
    const skewed = { pid: 4242, host: 'elsewhere', token: 'x', createdAt: T0 + 3_600_000 };
    writeFileSync(`${file}.lock`, JSON.stringify(skewed));
    await open({ isPidAlive: () => true }).write(WD_A, [entry('fs')], ['fs']);
    expect(codes()).toEqual(['lock-broken']);
    expect(events[0]?.message).toMatch(/in the future/);
    expect(await open().get(WD_A, 'fs', 'fp-fs')).toBeDefined();
  });
});

describe('a huge or deeply nested cache file is not parsed', () => {
  it('a file over maxFileBytes reads as empty (reported once), and the next write replaces it', async () => {
    await open().write(WD_A, [entry('fs')], ['fs']);
    const size = readFileSync(file).length;
    const capped = open({ maxFileBytes: size - 1 });
    expect(await capped.get(WD_A, 'fs', 'fp-fs')).toBeUndefined();
    expect(await capped.list(WD_A)).toEqual([]);
    expect(codes()).toEqual(['corrupt']);
    expect(events[0]?.message).toMatch(/larger than/);
    expect(await open({ maxFileBytes: size }).get(WD_A, 'fs', 'fp-fs')).toBeDefined();
  });

  it('the size cap is counted while reading', async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(file, 'x'.repeat(1000));
    await expect(nodeCacheFs().readFile(file, 999)).rejects.toMatchObject({ code: 'EFBIG' });
    expect((await nodeCacheFs().readFile(file, 1000)).data.length).toBe(1000);
  });

  it('20 MB of "[" is rejected by a linear scan before JSON.parse', () => {
    const start = performance.now();
    const parsed = parseCacheFile('['.repeat(20_000_000));
    expect(performance.now() - start).toBeLessThan(2000);
    expect(parsed.problem).toMatch(/nested deeper than 128/);
  });

  it('a deeply nested entry in the line layout is dropped, the others are kept', async () => {
    await open().write(WD_A, [entry('fs'), entry('git')], ['fs', 'git']);
    const text = readFileSync(file, 'utf8');
    const deep = `{"workdir":${JSON.stringify(WD_A)},"server":"zz","lastConnectedAt":${T0},"fingerprint":"f","tools":[${'['.repeat(10_000)}${']'.repeat(10_000)}]}`;
    writeFileSync(file, text.replace('\n]}', `,\n${deep}\n]}`));
    const cache = open();
    expect((await cache.list(WD_A)).map((s) => s.server)).toEqual(['fs', 'git']);
    expect(codes()).toEqual(['entry-dropped']);
    expect(events[0]?.message).toMatch(/nested deeper/);
  });
});
