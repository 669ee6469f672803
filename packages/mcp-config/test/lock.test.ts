import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '@wave/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { addServer } from '../src/edit';
import { nodeConfigFs } from '../src/fs';
import { acquireConfigLock, ConfigLockTimeout, judgeConfigLock, parseBarePidLock } from '../src/lock';

const info = (createdAt: number, pid = 1) => ({ pid, host: 'h', token: 't', createdAt });
const base = { mtimeMs: 0, staleMs: 30_000, host: 'h', isPidAlive: () => true };

describe('judgeConfigLock (pure)', () => {
  it('a live owner within staleMs holds it', () => {
    expect(judgeConfigLock({ ...base, info: info(1000), now: 2000 }).stale).toBe(false);
  });
  it('a dead owner on this host: stale', () => {
    expect(judgeConfigLock({ ...base, info: info(1000), now: 2000, isPidAlive: () => false })).toMatchObject({
      stale: true,
    });
  });
  it('a dead-looking pid on another host is not judged by pid', () => {
    const o = { ...base, info: { ...info(1000), host: 'other' }, now: 2000, isPidAlive: () => false };
    expect(judgeConfigLock(o).stale).toBe(false);
  });
  it('a bare-pid lock (earlier local-state writers): stale only when that pid is gone', () => {
    const o = { ...base, info: undefined, mtimeMs: 1000, now: 2000, barePid: 4242 };
    expect(judgeConfigLock(o).stale).toBe(false);
    expect(judgeConfigLock({ ...o, isPidAlive: (pid: number) => pid !== 4242 })).toMatchObject({
      stale: true,
      reason: 'its owner process 4242 is no longer running',
    });
  });
  it.each([
    ['4242', 4242],
    [' 17\n', 17],
    ['', undefined],
    ['0', undefined],
    ['-5', undefined],
    ['12abc', undefined],
    ['{"pid":1}', undefined],
  ])('parseBarePidLock(%j) = %j', (text, pid) => {
    expect(parseBarePidLock(text)).toBe(pid);
  });
  it('older than staleMs: stale', () => {
    expect(judgeConfigLock({ ...base, info: info(0), now: 30_001 }).stale).toBe(true);
  });
  it('dated further than staleMs in the future (clock stepped back): stale', () => {
    const v = judgeConfigLock({ ...base, info: info(10_000_000), now: 1000 });
    expect(v.stale).toBe(true);
    expect(v.reason).toContain('future');
  });
  it('no valid record: judged by the file time, in both directions', () => {
    expect(judgeConfigLock({ ...base, info: undefined, mtimeMs: 0, now: 1000 }).stale).toBe(false);
    expect(judgeConfigLock({ ...base, info: undefined, mtimeMs: 0, now: 40_000 }).stale).toBe(true);
    expect(judgeConfigLock({ ...base, info: undefined, mtimeMs: 90_000, now: 1000 }).stale).toBe(true);
  });
});

describe('acquireConfigLock (real files)', () => {
  it('a lock left by a dead process is broken at once and the edit goes through', async () => {
    const dir = tempDir();
    const file = join(dir, 'mcp.json');
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), token: 'x', createdAt: Date.now() }),
    );
    await addServer(file, 'a', { command: 'x' });
    expect(readFileSync(file, 'utf8')).toContain('"a"');
    expect(readdirSync(dir)).toEqual(['mcp.json']);
  });

  it('a live lock makes the edit wait, then fail with CONFIG_CONFLICT naming the lock file; nothing written', async () => {
    const dir = tempDir();
    const file = join(dir, 'mcp.json');
    writeFileSync(file, '{}');
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: process.pid, host: hostname(), token: 'x', createdAt: Date.now() }),
    );
    const err = await addServer(file, 'a', { command: 'x' }, { lockTimeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONFIG_CONFLICT', server: 'a' });
    expect((err as Error).message).toContain(`${file}.lock`);
    expect(readFileSync(file, 'utf8')).toBe('{}');
    expect(existsSync(`${file}.lock`)).toBe(true);
  });

  it('times out with fake sleeps, counting only the waits', async () => {
    const dir = tempDir();
    const lockPath = join(dir, 'f.lock');
    writeFileSync(lockPath, JSON.stringify({ pid: process.pid, host: hostname(), token: 'x', createdAt: 0 }));
    const slept: number[] = [];
    const err = await acquireConfigLock({
      fs: nodeConfigFs,
      lockPath,
      timeoutMs: 1000,
      staleMs: 60_000,
      now: () => 0,
      sleep: async (ms) => {
        slept.push(ms);
      },
      random: () => 0.5,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigLockTimeout);
    expect(slept.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(readdirSync(dir)).toEqual(['f.lock']);
  });

  it('release removes only its own lock', async () => {
    const dir = tempDir();
    const lockPath = join(dir, 'f.lock');
    const lock = await acquireConfigLock({ fs: nodeConfigFs, lockPath, timeoutMs: 0, staleMs: 1 });
    writeFileSync(lockPath, JSON.stringify({ pid: 1, host: 'x', token: 'other', createdAt: 0 }));
    await lock.release();
    expect(existsSync(lockPath)).toBe(true);
  });

  it('a file system without hard links: the lock is created exclusively instead, and still excludes', async () => {
    const dir = tempDir();
    const lockPath = join(dir, 'f.lock');
    const fs = {
      ...nodeConfigFs,
      link: async () => {
        throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
      },
    };
    const lock = await acquireConfigLock({ fs, lockPath, timeoutMs: 0, staleMs: 60_000 });
    expect(readdirSync(dir)).toEqual(['f.lock']);
    await expect(acquireConfigLock({ fs, lockPath, timeoutMs: 10, staleMs: 60_000 })).rejects.toBeInstanceOf(
      ConfigLockTimeout,
    );
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});
