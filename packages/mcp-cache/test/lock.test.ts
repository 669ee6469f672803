import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { beforeEach, describe, expect, it } from 'vitest';
import { judgeConfigLock, parseConfigLock } from '../../mcp-config/src/lock';
import { nodeCacheFs } from '../src/fs';
import { acquireLock, backoffDelay, judgeLock, type LockOptions, parseLockInfo } from '../src/lock';
import type { ToolCacheDebugCode } from '../src/types';

describe('parseLockInfo', () => {
  const ok = { pid: 12, host: 'h', token: 't', createdAt: 5 };
  it.each([
    ['valid', JSON.stringify(ok), ok],
    ['extra fields ignored', JSON.stringify({ ...ok, x: 1 }), ok],
    ['empty (being written)', '', undefined],
    ['partial JSON', JSON.stringify(ok).slice(0, 10), undefined],
    ['null', 'null', undefined],
    ['pid not an integer', JSON.stringify({ ...ok, pid: 1.5 }), undefined],
    ['pid a string', JSON.stringify({ ...ok, pid: '12' }), undefined],
    ['no host', JSON.stringify({ ...ok, host: undefined }), undefined],
    ['no token', JSON.stringify({ ...ok, token: 1 }), undefined],
    ['createdAt missing', JSON.stringify({ ...ok, createdAt: null }), undefined],
  ])('%s', (_label, text, want) => {
    expect(parseLockInfo(text)).toEqual(want);
  });
});

describe('judgeLock', () => {
  const info = { pid: 100, host: 'me', token: 't', createdAt: 1000 };
  const alive = () => true;
  const dead = () => false;
  it.each([
    ['fresh, owner alive', info, 0, 2000, alive, false, /held by process 100/],
    ['owner dead on this host', info, 0, 1001, dead, true, /100 is no longer running/],
    ['owner on another host: pid not checked', { ...info, host: 'other' }, 0, 2000, dead, false, /on other/],
    ['older than staleMs, owner alive', info, 0, 1000 + 10_001, alive, true, /limit 10000 ms/],
    ['exactly staleMs old is not stale', info, 0, 1000 + 10_000, alive, false, /held/],
    [
      'other host and too old',
      { ...info, host: 'other' },
      0,
      20_000,
      alive,
      true,
      /ago by process 100 on other/,
    ],
    ['no record, recent mtime', undefined, 1000, 2500, alive, false, /being created/],
    // a record is written microseconds after the file is created: one missing for 2 s was left by a failed write
    [
      'no record, past the grace (a write failed: disk full)',
      undefined,
      1000,
      3001,
      alive,
      true,
      /no valid owner record/,
    ],
    ['no record, old mtime', undefined, 1000, 11_001, alive, true, /no valid owner record/],
    ['no record, mtime in the future', undefined, 100_000, 1000, alive, true, /in the future/],
    [
      'dated in the future beyond staleMs (clock stepped back)',
      { ...info, createdAt: 50_000 },
      0,
      2000,
      alive,
      true,
      /in the future/,
    ],
    ['dated slightly in the future: held', { ...info, createdAt: 5000 }, 0, 2000, alive, false, /held/],
  ])('%s', (_label, lockInfo, mtimeMs, now, isPidAlive, stale, reason) => {
    const verdict = judgeLock({ info: lockInfo, mtimeMs, now, staleMs: 10_000, host: 'me', isPidAlive });
    expect(verdict.stale).toBe(stale);
    expect(verdict.reason).toMatch(reason);
  });
});

describe('backoffDelay', () => {
  it.each([
    [0, 0, 3],
    [0, 0.999, 5],
    [1, 0, 5],
    [2, 0.5, 15],
    [5, 0.999, 100],
    [50, 0, 50],
    [10_000, 0.999, 100],
  ])('attempt %d, random %d -> %d ms', (attempt, random, want) => {
    expect(backoffDelay(attempt, 5, 100, random)).toBe(want);
  });
  it('never returns less than 1 ms', () => {
    expect(backoffDelay(0, 0, 0, 0)).toBe(1);
  });
});

describe('acquireLock (real files, fake sleep)', () => {
  let dir: string;
  let lockPath: string;
  let events: { code: ToolCacheDebugCode; message: string }[];
  beforeEach(() => {
    dir = tempDir('wave-mcp-cache-');
    lockPath = join(dir, 'cache.json.lock');
    events = [];
  });

  const options = (over: Partial<LockOptions> = {}): LockOptions => ({
    fs: nodeCacheFs(),
    lockPath,
    timeoutMs: 1000,
    staleMs: 10_000,
    retryMinMs: 5,
    retryMaxMs: 100,
    pid: process.pid,
    host: hostname(),
    now: () => Date.now(),
    sleep: fakeSleep().sleep,
    random: () => 0.5,
    isPidAlive: () => true,
    report: (code, message) => events.push({ code, message }),
    ...over,
  });
  const plantLock = (info: object | string) =>
    writeFileSync(lockPath, typeof info === 'string' ? info : JSON.stringify(info));
  const liveLock = { pid: 4242, host: hostname(), token: 'theirs', createdAt: Date.now() };

  it('takes a free lock, records the owner, and removes it on release', async () => {
    const handle = await acquireLock(options());
    expect(handle).toBeDefined();
    const info = parseLockInfo(readFileSync(lockPath, 'utf8'));
    expect(info).toMatchObject({ pid: process.pid, host: hostname() });
    await handle?.release();
    expect(existsSync(lockPath)).toBe(false);
    expect(events).toEqual([]);
  });

  it('waits for a live owner up to timeoutMs in total, then gives up without touching the lock', async () => {
    plantLock(liveLock);
    const clock = fakeSleep();
    const handle = await acquireLock(options({ sleep: clock.sleep }));
    expect(handle).toBeUndefined();
    expect(clock.total()).toBe(1000);
    expect(clock.slept.length).toBeGreaterThan(5);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toEqual(liveLock);
    expect(events).toHaveLength(1);
    expect(events[0]?.code).toBe('lock-timeout');
    expect(events[0]?.message).toContain('held by process 4242');
    expect(events[0]?.message).toContain(lockPath);
  });

  it('gets the lock as soon as the owner releases it', async () => {
    plantLock(liveLock);
    const clock = fakeSleep();
    const sleep = async (ms: number) => {
      await clock.sleep(ms);
      if (clock.slept.length === 3) unlinkSync(lockPath);
    };
    const handle = await acquireLock(options({ sleep }));
    expect(handle).toBeDefined();
    expect(clock.slept).toHaveLength(3);
    expect(events).toEqual([]);
    await handle?.release();
  });

  it.each([
    [
      'owner process is dead',
      liveLock,
      (): boolean => false,
      (): number => Date.now(),
      /4242 is no longer running/,
    ],
    [
      'older than staleMs',
      { ...liveLock, createdAt: 0 },
      (): boolean => true,
      (): number => Date.now(),
      /limit 10000/,
    ],
    [
      'garbage content, old mtime',
      'not a lock',
      (): boolean => true,
      (): number => Date.now() + 20_000,
      /no valid owner/,
    ],
  ] as [string, object | string, () => boolean, () => number, RegExp][])(
    'breaks a stale lock: %s',
    async (_label, planted, isPidAlive, now, reason) => {
      plantLock(planted);
      const clock = fakeSleep();
      const handle = await acquireLock(options({ isPidAlive, now, sleep: clock.sleep }));
      expect(handle).toBeDefined();
      expect(clock.slept).toEqual([]);
      expect(events.map((e) => e.code)).toEqual(['lock-broken']);
      expect(events[0]?.message).toMatch(reason);
      expect(parseLockInfo(readFileSync(lockPath, 'utf8'))?.pid).toBe(process.pid);
      expect(existsSync(`${lockPath}.break`)).toBe(false);
      await handle?.release();
    },
  );

  it('does not break a lock whose content is still being written (fresh, empty)', async () => {
    plantLock('');
    expect(await acquireLock(options())).toBeUndefined();
    expect(events.map((e) => e.code)).toEqual(['lock-timeout']);
    expect(existsSync(lockPath)).toBe(true);
  });

  it('two waiters breaking the same stale lock: exactly one gets it', async () => {
    plantLock(liveLock);
    // The winner's pid must look alive, or the loser would break the winner's fresh lock too.
    const alive = (pid: number) => pid !== 4242;
    const results = await Promise.all([
      acquireLock(options({ isPidAlive: alive, timeoutMs: 200 })),
      acquireLock(options({ isPidAlive: alive, timeoutMs: 200 })),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(events.filter((e) => e.code === 'lock-broken')).toHaveLength(1);
    expect(events.filter((e) => e.code === 'lock-timeout')).toHaveLength(1);
    await results.find(Boolean)?.release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('clears a break guard left behind by a crashed breaker, then breaks the stale lock', async () => {
    plantLock(liveLock);
    writeFileSync(`${lockPath}.break`, '{}');
    const handle = await acquireLock(
      options({ isPidAlive: () => false, now: () => Date.now() + 20_000, sleep: fakeSleep().sleep }),
    );
    expect(handle).toBeDefined();
    expect(existsSync(`${lockPath}.break`)).toBe(false);
    await handle?.release();
  });

  it('a lock path that is a directory cannot be judged: times out and says so', async () => {
    mkdirSync(lockPath);
    expect(await acquireLock(options({ isPidAlive: () => false }))).toBeUndefined();
    expect(events.at(-1)?.message).toMatch(/cannot be read/);
  });

  it('rejects when the lock cannot be created for another reason (missing directory)', async () => {
    await expect(acquireLock(options({ lockPath: join(dir, 'missing', 'x.lock') }))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('release leaves a lock that is no longer ours in place and reports lock-lost', async () => {
    const handle = await acquireLock(options());
    plantLock(liveLock); // someone judged ours stale and took it
    await handle?.release();
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toEqual(liveLock);
    expect(events.map((e) => e.code)).toEqual(['lock-lost']);
  });

  it('release of a lock that vanished reports lock-lost and does not throw', async () => {
    const handle = await acquireLock(options());
    unlinkSync(lockPath);
    await expect(handle?.release()).resolves.toBeUndefined();
    expect(events.map((e) => e.code)).toEqual(['lock-lost']);
  });
});

/** A sleep that records what was asked and only yields to pending I/O (tests never really sleep). */
function fakeSleep(): { sleep(ms: number): Promise<void>; slept: number[]; total(): number } {
  const slept: number[] = [];
  return {
    slept,
    total: () => slept.reduce((a, b) => a + b, 0),
    sleep: async (ms) => {
      slept.push(ms);
      await new Promise((done) => setImmediate(done));
    },
  };
}

describe("agreement with @wave/mcp-config's lock", () => {
  // Both packages lock files under the wave home with the same record; this
  // package may not depend on mcp-config at run time, so it keeps its own copy.
  // Where the copies differ on purpose: a lock without a record (being written,
  // or left by a full disk) is broken here after 2 s, there after `staleMs`.
  const texts = [
    JSON.stringify({ pid: 7, host: 'h', token: 't', createdAt: 5 }),
    JSON.stringify({ pid: 7, host: 'h', token: 't' }),
    JSON.stringify({ pid: 7.5, host: 'h', token: 't', createdAt: 5 }),
    JSON.stringify({ pid: 7, host: 'h', token: 't', createdAt: 5, extra: true }),
    '{"pid":7,"host":"h","token":"t","createdAt":1e999}',
    '',
    'null',
    '4242',
    '{"pid":7,',
  ];
  it.each(texts)('parses %j the same way', (text) => {
    expect(parseLockInfo(text)).toEqual(parseConfigLock(text));
  });

  const record = (createdAt: number, host = 'h', pid = 7) => ({ pid, host, token: 't', createdAt });
  it.each([
    ['live owner, fresh', record(1000), true],
    ['dead owner on this host', record(1000), false],
    ['dead-looking owner on another host', record(1000, 'other'), false],
    ['older than staleMs', record(-40_000), true],
    ['exactly staleMs old', record(-29_000), true],
    ['dated past staleMs in the future', record(100_000), true],
    ['slightly in the future', record(5000), true],
  ])('judges a record the same way: %s', (_label, info, alive) => {
    const o = { info, mtimeMs: 0, now: 1000, staleMs: 30_000, host: 'h', isPidAlive: () => alive };
    expect(judgeLock(o).stale).toBe(judgeConfigLock(o).stale);
  });
});
