import { resolveHome } from '@wave/mcp-config';
import { describe, expect, it } from 'vitest';
import {
  type CacheRecord,
  checkRecord,
  compareSnapshots,
  entryKey,
  indexRecords,
  isExpired,
  mergeSnapshots,
  normalizeInput,
  parseCacheFile,
  parseCacheText,
  recordOf,
  scanHeader,
  serializeCache,
  serializeEntry,
  snapshotProblem,
} from '../src/core';
import { resolveWaveHome } from '../src/home';
import type { ToolSnapshot } from '../src/types';

const snap = (workdir: string, server: string, extra: Partial<ToolSnapshot> = {}): ToolSnapshot => ({
  workdir,
  server,
  fingerprint: `fp-${server}`,
  tools: [{ name: `${server}_tool` }],
  lastConnectedAt: 1000,
  ...extra,
});
const file = (entries: unknown, version: unknown = 1): string => JSON.stringify({ version, entries });

describe('parseCacheText: whole-file problems read as empty', () => {
  it.each([
    ['empty file', ''],
    ['whitespace only', '  \n\t'],
    ['truncated JSON', file([snap('/a', 's')]).slice(0, 40)],
    ['top level null', 'null'],
    ['top level array', '[]'],
    ['top level string', '"cache"'],
    ['missing version', JSON.stringify({ entries: [] })],
    ['version 2', file([snap('/a', 's')], 2)],
    ['version as string', file([snap('/a', 's')], '1')],
    ['entries not a list', file({ '/a': snap('/a', 's') })],
    ['entries missing', JSON.stringify({ version: 1 })],
  ])('%s', (_label, text) => {
    const parsed = parseCacheText(text);
    expect(parsed.entries).toEqual([]);
    expect(parsed.problem).toMatch(/\w/);
  });

  it.each([
    ['invalid UTF-8 bytes', Uint8Array.from([0xff, 0xfe, 0x00, 0x81, 0xc3, 0x28])],
    ['random binary', Uint8Array.from({ length: 256 }, (_, i) => (i * 7919) % 256)],
    ['NUL bytes', new Uint8Array(64)],
  ])('binary: %s', (_label, bytes) => {
    const parsed = parseCacheText(bytes);
    expect(parsed.entries).toEqual([]);
    expect(parsed.problem).toBeDefined();
  });

  it('accepts a UTF-8 BOM and bytes input', () => {
    const text = `\ufeff${serializeCache([snap('/a', 's')])}`;
    expect(parseCacheText(new TextEncoder().encode(text))).toEqual({
      entries: [snap('/a', 's')],
      dropped: [],
    });
  });
});

describe('parseCacheText: malformed entries are dropped one by one', () => {
  const good = snap('/a', 'good');
  it.each([
    ['not an object', 42],
    ['null', null],
    ['no workdir', { ...snap('/a', 'x'), workdir: undefined }],
    ['empty workdir', snap('', 'x')],
    ['no server', { ...snap('/a', 'x'), server: 5 }],
    ['no fingerprint', { ...snap('/a', 'x'), fingerprint: undefined }],
    ['tools not a list', { ...snap('/a', 'x'), tools: { name: 'a' } }],
    ['tool without name', snap('/a', 'x', { tools: [{ description: 'd' } as never] })],
    ['tool name not a string', snap('/a', 'x', { tools: [{ name: 1 } as never] })],
    ['tool description not a string', snap('/a', 'x', { tools: [{ name: 'a', description: 3 } as never] })],
    ['tool inputSchema an array', snap('/a', 'x', { tools: [{ name: 'a', inputSchema: [] }] })],
    ['tool annotations a string', snap('/a', 'x', { tools: [{ name: 'a', annotations: 'ro' } as never] })],
    ['instructions not a string', snap('/a', 'x', { instructions: ['x'] as never })],
    ['lastConnectedAt a string', snap('/a', 'x', { lastConnectedAt: '1000' as never })],
    ['lastConnectedAt missing', { ...snap('/a', 'x'), lastConnectedAt: undefined }],
  ])('%s', (_label, bad) => {
    const parsed = parseCacheText(file([good, bad]));
    expect(parsed.problem).toBeUndefined();
    expect(parsed.entries).toEqual([good]);
    expect(parsed.dropped).toHaveLength(1);
    expect(parsed.dropped[0]).toMatch(/^entry 1 /);
  });

  it('strips unknown fields of entries and tools', () => {
    const raw = { ...snap('/a', 's'), extra: 1, tools: [{ name: 't', outputSchema: {}, _meta: { x: 1 } }] };
    expect(parseCacheText(file([raw])).entries).toEqual([snap('/a', 's', { tools: [{ name: 't' }] })]);
  });

  it.each([
    ['newer second', 1, 2, 2],
    ['newer first', 2, 1, 2],
    ['tie: later in file', 5, 5, 5],
  ])('duplicate (workdir, server): %s wins', (_label, first, second, winner) => {
    const a = snap('/a', 's', { lastConnectedAt: first, fingerprint: 'first' });
    const b = snap('/a', 's', { lastConnectedAt: second, fingerprint: 'second' });
    const entries = parseCacheText(file([a, b])).entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]?.lastConnectedAt).toBe(winner);
    if (first === second) expect(entries[0]?.fingerprint).toBe('second');
  });
});

describe('serializeCache', () => {
  it.each([
    ['no entries', []],
    ['one entry', [snap('/a', 's')]],
    [
      'every field',
      [
        snap('/a', 's', {
          instructions: 'line 1\nline 2 "quoted" \u2028 \u00e9\u4e2d',
          tools: [
            {
              name: 't',
              title: 'T',
              description: 'does t',
              inputSchema: { type: 'object', properties: { a: { type: 'number' } } },
              annotations: { readOnlyHint: true },
            },
          ],
        }),
        snap('/b', 'empty', { tools: [] }),
      ],
    ],
  ])('round trips: %s', (_label, entries) => {
    const text = serializeCache(entries);
    expect(text.endsWith('\n')).toBe(true);
    expect(JSON.parse(text)).toEqual({ version: 1, entries });
    expect(parseCacheText(text)).toEqual({ entries, dropped: [] });
  });

  it('puts one entry per line', () => {
    const text = serializeCache([snap('/a', 's'), snap('/a', 't'), snap('/b', 's')]);
    expect(text.split('\n')).toHaveLength(6);
  });
});

describe('mergeSnapshots', () => {
  const now = 10_000;
  const base = [
    snap('/a', 'keep'),
    snap('/a', 'gone'),
    snap('/a', 'upd'),
    snap('/b', 'gone'),
    snap('/b', 'upd'),
  ];
  const input = (server: string, extra: Partial<ToolSnapshot> = {}) => {
    const { workdir: _w, ...rest } = snap('/ignored', server, {
      fingerprint: 'new',
      lastConnectedAt: 9000,
      ...extra,
    });
    return rest;
  };
  const keys = (list: ToolSnapshot[]) => list.map((e) => `${e.workdir}:${e.server}:${e.fingerprint}`);

  it.each([
    {
      label: 'overwrites the written server, prunes unconfigured of this workdir only',
      entries: [input('upd')],
      configured: ['keep', 'upd'],
      want: ['/a:keep:fp-keep', '/a:upd:new', '/b:gone:fp-gone', '/b:upd:fp-upd'],
    },
    {
      label: 'empty configuredNames and no entries wipes this workdir only',
      entries: [],
      configured: [],
      want: ['/b:gone:fp-gone', '/b:upd:fp-upd'],
    },
    {
      label: 'written servers count as configured',
      entries: [input('fresh')],
      configured: ['keep'],
      want: ['/a:fresh:new', '/a:keep:fp-keep', '/b:gone:fp-gone', '/b:upd:fp-upd'],
    },
    {
      label: 'a server written twice: the last wins',
      entries: [input('upd', { fingerprint: 'one' }), input('upd', { fingerprint: 'two' })],
      configured: ['upd'],
      want: ['/a:upd:two', '/b:gone:fp-gone', '/b:upd:fp-upd'],
    },
    {
      label: 'names configured but not written keep their old entry',
      entries: [],
      configured: ['keep', 'upd', 'gone'],
      want: ['/a:gone:fp-gone', '/a:keep:fp-keep', '/a:upd:fp-upd', '/b:gone:fp-gone', '/b:upd:fp-upd'],
    },
  ])('$label', ({ entries, configured, want }) => {
    const merged = mergeSnapshots(base, {
      workdir: '/a',
      entries,
      configuredNames: configured,
      now,
      ttlMs: Infinity,
    });
    expect(keys(merged)).toEqual(want);
  });

  it('an empty tool list replaces the old tools', () => {
    const merged = mergeSnapshots(base, {
      workdir: '/a',
      entries: [input('upd', { tools: [] })],
      configuredNames: ['upd'],
      now,
      ttlMs: Infinity,
    });
    expect(merged.find((e) => e.workdir === '/a' && e.server === 'upd')?.tools).toEqual([]);
  });

  it('does not modify its input', () => {
    const copy = structuredClone(base);
    mergeSnapshots(base, { workdir: '/a', entries: [input('upd')], configuredNames: [], now, ttlMs: 1 });
    expect(base).toEqual(copy);
  });

  it.each([
    { ttlMs: Infinity, want: 3 },
    { ttlMs: 5000, want: 2 }, // /b:old (age 9000) dropped though it is another workdir
    { ttlMs: 500, want: 1 }, // /a:mid (age 1000) dropped too: only the fresh write (age 100) is left
    { ttlMs: 0, want: 0 },
  ])('TTL $ttlMs keeps $want', ({ ttlMs, want }) => {
    const existing = [
      snap('/a', 'mid', { lastConnectedAt: 9000 }),
      snap('/b', 'old', { lastConnectedAt: 1000 }),
    ];
    const merged = mergeSnapshots(existing, {
      workdir: '/a',
      entries: [input('fresh', { lastConnectedAt: 9900 })],
      configuredNames: ['mid'],
      now,
      ttlMs,
    });
    expect(merged).toHaveLength(want);
  });

  it('sorts by workdir then server in code-unit order', () => {
    const merged = mergeSnapshots([snap('/b', 'a'), snap('/a', 'b'), snap('/a', 'B'), snap('/a', 'a')], {
      workdir: '/z',
      entries: [],
      configuredNames: [],
      now,
      ttlMs: Infinity,
    });
    expect(merged.map((e) => `${e.workdir}:${e.server}`)).toEqual(['/a:B', '/a:a', '/a:b', '/b:a']);
    expect(compareSnapshots(snap('/a', 'a'), snap('/a', 'a'))).toBe(0);
  });
});

describe('isExpired', () => {
  it.each([
    [1000, 1000, 0, false],
    [1000, 1001, 0, true],
    [1000, 1000 + 7 * 86_400_000, 7 * 86_400_000, false],
    [1000, 1001 + 7 * 86_400_000, 7 * 86_400_000, true],
    [0, Number.MAX_SAFE_INTEGER, Infinity, false],
    [5000, 1000, 10, false], // written "in the future" (clock skew): kept
  ])('lastConnectedAt %d at now %d with ttl %d -> %s', (last, now, ttl, want) => {
    expect(isExpired({ lastConnectedAt: last }, now, ttl)).toBe(want);
  });
});

describe('normalizeInput', () => {
  const ok = { server: 's', fingerprint: 'f', tools: [{ name: 't' }], lastConnectedAt: 1 };
  it.each([
    ['not an object', 'x', /not an object/],
    ['no server', { ...ok, server: '' }, /server name/],
    ['no fingerprint', { ...ok, fingerprint: 3 }, /fingerprint/],
    ['tools missing', { ...ok, tools: undefined }, /tools/],
    ['tool without name', { ...ok, tools: [{}] }, /tool 0 has no name/],
    ['lastConnectedAt NaN', { ...ok, lastConnectedAt: Number.NaN }, /lastConnectedAt/],
    ['lastConnectedAt a Date', { ...ok, lastConnectedAt: new Date() }, /lastConnectedAt/],
    ['BigInt in a schema', { ...ok, tools: [{ name: 't', inputSchema: { max: 1n } }] }, /JSON-serializable/],
  ])('rejects %s', (_label, raw, message) => {
    const result = normalizeInput(raw);
    expect(typeof result).toBe('string');
    expect(result).toMatch(message);
  });

  it('copies (no shared references), keeps known fields, drops the rest and undefined values', () => {
    const schema = { type: 'object', properties: {} as Record<string, unknown> };
    const raw = {
      ...ok,
      workdir: '/ignored',
      instructions: undefined,
      tools: [{ name: 't', inputSchema: schema, outputSchema: {}, description: undefined }],
    };
    const result = normalizeInput(raw);
    expect(result).toEqual({
      server: 's',
      fingerprint: 'f',
      tools: [{ name: 't', inputSchema: schema }],
      lastConnectedAt: 1,
    });
    schema.properties.late = 1;
    const stored = (result as { tools: { inputSchema?: object }[] }).tools[0]?.inputSchema;
    expect(stored).not.toBe(schema);
    expect(stored).toEqual({ type: 'object', properties: {} });
  });
});

describe('snapshotProblem / entryKey / indexRecords', () => {
  it('requires a workdir only for stored entries', () => {
    const { workdir: _w, ...noWorkdir } = snap('/a', 's');
    expect(snapshotProblem(noWorkdir, false)).toBeUndefined();
    expect(snapshotProblem(noWorkdir, true)).toMatch(/workdir/);
  });
  it('keys cannot collide across separators', () => {
    expect(entryKey('/a:b', 'c')).not.toBe(entryKey('/a', 'b:c'));
  });
  it('indexes by workdir then server', () => {
    const index = indexRecords([snap('/a', 's'), snap('/a', 't'), snap('/b', 's')].map(recordOf));
    expect([...index.keys()]).toEqual(['/a', '/b']);
    expect(index.get('/a')?.get('t')?.raw).toBe(serializeEntry(snap('/a', 't')));
  });
});

describe('resolveWaveHome', () => {
  it.each([
    ['option wins', '/opt', { WAVE_HOME: '/env' }, '/opt'],
    ['env next', undefined, { WAVE_HOME: '/env' }, '/env'],
    ['empty env counts as unset', undefined, { WAVE_HOME: '' }, 'HOME'],
    ['default ~/.wave', undefined, {}, 'HOME'],
    // Same rule as @wave/mcp-config's resolveHome, so the cache sits beside mcp.json:
    ['empty option counts as unset', '', { WAVE_HOME: '/env' }, '/env'],
    ['empty option and env', '', {}, 'HOME'],
    ['~/ in the option is the user home', '~/wh', {}, 'HOME:wh'],
    ['~/ in $WAVE_HOME is the user home', undefined, { WAVE_HOME: '~/wh' }, 'HOME:wh'],
    ['~ alone', '~', {}, 'HOME:'],
    ['relative is made absolute', 'rel/h', {}, 'CWD:rel/h'],
  ])('%s', async (_label, home, env, want) => {
    const { homedir } = await import('node:os');
    const { join, resolve } = await import('node:path');
    const expected =
      want === 'HOME'
        ? join(homedir(), '.wave')
        : want.startsWith('HOME:')
          ? join(homedir(), want.slice(5))
          : want.startsWith('CWD:')
            ? resolve(want.slice(4))
            : want;
    expect(resolveWaveHome(home, env)).toBe(expected);
    // One rule for the wave home: @wave/mcp-config's resolveHome owns it; this package
    // depends on no other @wave package at run time, so it keeps a copy that must agree.
    expect(resolveHome({ home, env })).toBe(expected);
  });
});

describe('scanHeader (reads workdir, server, lastConnectedAt without parsing tools)', () => {
  it.each([
    ['our layout', serializeEntry(snap('/a', 's')), { workdir: '/a', server: 's', lastConnectedAt: 1000 }],
    [
      'escapes in strings',
      serializeEntry(snap('C:\\work\\"q"', 'x\u2028y', { lastConnectedAt: 1.5e12 })),
      { workdir: 'C:\\work\\"q"', server: 'x\u2028y', lastConnectedAt: 1.5e12 },
    ],
    [
      'negative and fraction',
      '{"workdir":"/a","server":"s","lastConnectedAt":-12.5}',
      { workdir: '/a', server: 's', lastConnectedAt: -12.5 },
    ],
    ['another key order', JSON.stringify(snap('/a', 's')), undefined],
    ['spaces', '{ "workdir":"/a","server":"s","lastConnectedAt":1,', undefined],
    ['unterminated string', '{"workdir":"/a', undefined],
    ['workdir not a string', '{"workdir":1,"server":"s","lastConnectedAt":1,', undefined],
    ['number not followed by , or }', '{"workdir":"/a","server":"s","lastConnectedAt":1x', undefined],
    ['number missing', '{"workdir":"/a","server":"s","lastConnectedAt":"1",', undefined],
    ['bad escape', '{"workdir":"/a\\q","server":"s","lastConnectedAt":1,', undefined],
    ['empty line', '', undefined],
  ])('%s', (_label, line, want) => {
    expect(scanHeader(line)).toEqual(want);
  });

  it('serializeEntry puts the header first and tools last', () => {
    const line = serializeEntry(snap('/a', 's', { instructions: 'i' }));
    expect(Object.keys(JSON.parse(line))).toEqual([
      'workdir',
      'server',
      'lastConnectedAt',
      'fingerprint',
      'instructions',
      'tools',
    ]);
  });
});

describe('parseCacheFile (lazy fast path for our layout, full parse otherwise)', () => {
  const a = snap('/a', 's');
  const b = snap('/b', 't', { instructions: 'x' });

  it('our layout: records carry header and line, unchecked until needed', () => {
    const parsed = parseCacheFile(serializeCache([a, b]));
    expect(parsed.problem).toBeUndefined();
    expect(parsed.records.map((r) => [r.workdir, r.server, r.lastConnectedAt, r.valid])).toEqual([
      ['/a', 's', 1000, undefined],
      ['/b', 't', 1000, undefined],
    ]);
    const first = parsed.records[0] as CacheRecord;
    expect(checkRecord(first)).toEqual(a);
    expect(first.valid).toBe(true);
    expect(checkRecord(first)).not.toBe(checkRecord(first)); // a fresh object each time
  });

  it('a malformed body is found only when the record is checked, and only that record is lost', () => {
    const lines = [serializeEntry(a), serializeEntry(b).replace('"tools":[', '"tools":[7,')];
    const text = `{"version":1,"entries":[\n${lines.join(',\n')}\n]}\n`;
    const parsed = parseCacheFile(text);
    expect(parsed.records).toHaveLength(2);
    const bad = parsed.records[1] as CacheRecord;
    expect(checkRecord(bad)).toBeUndefined();
    expect(bad).toMatchObject({ valid: false, invalid: expect.stringMatching(/tool 0 is not an object/) });
    expect(parseCacheText(text).entries).toEqual([a]);
  });

  it.each([
    [
      'a line that is not JSON',
      '{"workdir":"/b","server":"t","lastConnectedAt":1000,"tools":[',
      /not valid JSON/,
    ],
    [
      'a header that repeats a key',
      '{"workdir":"/b","server":"t","lastConnectedAt":1000,"fingerprint":"f","tools":[],"workdir":"/c"}',
      /repeats a header key/,
    ],
  ])('drops %s (the rest of the file is kept)', (_label, line, reason) => {
    const text = `{"version":1,"entries":[\n${serializeEntry(a)},\n${line}\n]}\n`;
    const full = parseCacheText(text);
    expect(full.entries).toEqual([a]);
    expect(full.dropped[0]).toMatch(reason);
  });

  it('lines in another key order inside our envelope are parsed at once', () => {
    const text = `{"version":1,"entries":[\n${JSON.stringify(a)},\n[1]\n]}\n`;
    const parsed = parseCacheFile(text);
    expect(parsed.records).toHaveLength(1);
    expect(parsed.records[0]?.valid).toBe(true);
    expect(parsed.dropped).toEqual(['entry 1 is not an object']);
  });

  it('any other layout (pretty-printed by hand) is parsed in full', () => {
    const text = JSON.stringify({ version: 1, entries: [a, b] }, null, 2);
    const parsed = parseCacheFile(text);
    expect(parsed.records.every((r) => r.valid === true)).toBe(true);
    expect(parseCacheText(text).entries).toEqual([a, b]);
  });

  it('reuses the validity of lines it has seen before (keyed by line)', () => {
    const first = parseCacheFile(serializeCache([a, b]));
    for (const r of first.records) checkRecord(r);
    const previous = new Map(first.records.map((r) => [r.raw, r]));
    const c = snap('/c', 'u');
    const second = parseCacheFile(serializeCache([a, b, c]), previous);
    expect(second.records.map((r) => r.valid)).toEqual([true, true, undefined]);
    expect(second.records[0]).not.toBe(first.records[0]); // copied, pointing at the new text
  });

  it('empty envelope variants', () => {
    expect(parseCacheFile('{"version":1,"entries":[]}\n')).toEqual({ records: [], dropped: [] });
    expect(parseCacheFile('{"version":1,"entries":[\n]}')).toEqual({ records: [], dropped: [] });
  });

  it('duplicates in our layout: the newest lastConnectedAt wins', () => {
    const older = snap('/a', 's', { lastConnectedAt: 1, fingerprint: 'old' });
    const newer = snap('/a', 's', { lastConnectedAt: 2, fingerprint: 'new' });
    const text = `{"version":1,"entries":[\n${serializeEntry(newer)},\n${serializeEntry(older)}\n]}\n`;
    expect(parseCacheText(text).entries).toEqual([newer]);
  });
});
