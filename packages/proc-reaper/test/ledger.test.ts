import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
/**
 * The ledger: its file format and concurrency (unit), and the two real
 * scenarios of the issue: a recycled pid is never signalled, and a host
 * killed with SIGKILL leaves a tree that the next process sweeps.
 */
import { waitFor } from '@wave/testkit';
import { tempDir as makeTempDir } from '@wave/testkit/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { createReaper } from '../src/engine';
import { createLedger, isHostAlive, type LedgerFile, parseLedgerFile } from '../src/ledger';
import { spawnTracked } from '../src/spawn';
import { toTable } from '../src/tree';
import { createCleanup, fixture, markerCarriers, readLine, running } from './helpers';

const cleanup = createCleanup();
afterEach(() => {
  cleanup.run();
});

const tempDir = (): string => makeTempDir('proc-reaper-ledger-');

/** The pid of a process that has exited (free, not yet reused). */
async function deadPid(): Promise<number> {
  const c = spawn('true');
  await new Promise((r) => c.once('exit', r));
  return c.pid!;
}

function writeHostFile(dir: string, name: string, content: LedgerFile): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('ledger file format (pure)', () => {
  it.each([
    ['not JSON', '{', undefined],
    ['wrong version', '{"version":2,"host":{"pid":1},"entries":[]}', undefined],
    ['no host pid', '{"version":1,"host":{},"entries":[]}', undefined],
    ['entries not a list', '{"version":1,"host":{"pid":1},"entries":{}}', undefined],
    [
      'bad entries dropped, good kept',
      '{"version":1,"host":{"pid":7,"platform":"linux"},"entries":[{"pid":-1,"marker":"a"},{"pid":5},{"pid":9,"marker":"m","startTime":3,"recordedAt":1}]}',
      {
        version: 1,
        host: { pid: 7, platform: 'linux' },
        entries: [{ pid: 9, marker: 'm', startTime: 3, recordedAt: 1 }],
      },
    ],
    [
      // A mangled start time must not make a live host look dead (its trees would be reaped):
      // it is dropped, and a host without a start time counts as alive while its pid runs.
      'host start time that is not a number is dropped',
      '{"version":1,"host":{"pid":7,"startTime":"123","platform":"linux"},"entries":[]}',
      { version: 1, host: { pid: 7, platform: 'linux' }, entries: [] },
    ],
    ['host pid not a positive integer', '{"version":1,"host":{"pid":-3},"entries":[]}', undefined],
    [
      'entry with an empty marker dropped (it would match any process with an empty WAVE_REAPER_ID)',
      '{"version":1,"host":{"pid":7},"entries":[{"pid":9,"marker":""}]}',
      { version: 1, host: { pid: 7, platform: 'unknown' }, entries: [] },
    ],
  ])('%s', (_name, text, expected) => {
    expect(parseLedgerFile(text)).toEqual(expected);
  });

  const table = toTable([
    { pid: 10, ppid: 1, startTime: 100, state: 'S' },
    { pid: 11, ppid: 1, startTime: 100, state: 'Z' },
  ]);
  it.each([
    ['running, same start', { pid: 10, startTime: 100, platform: 'linux' }, true],
    ['pid reused by another process', { pid: 10, startTime: 99, platform: 'linux' }, false],
    ['zombie', { pid: 11, startTime: 100, platform: 'linux' }, false],
    ['gone', { pid: 12, startTime: 100, platform: 'linux' }, false],
    ['no start time recorded: assume alive', { pid: 10, platform: 'linux' }, true],
  ])('isHostAlive: %s', (_name, host, expected) => {
    expect(isHostAlive(host, table)).toBe(expected);
  });
});

describe.runIf(process.platform === 'linux')('createLedger (Linux)', () => {
  it('record writes this host and the entry; release of the last entry removes the file', async () => {
    const dir = tempDir();
    const ledger = createLedger({ dir: join(dir, 'nested') });
    const p = spawnTracked('sleep', ['1000'], { stdio: 'ignore' });
    cleanup.pid(p.pid);
    await ledger.record(p);
    const content = JSON.parse(readFileSync(ledger.file, 'utf8')) as LedgerFile;
    expect(content.host.pid).toBe(process.pid);
    expect(typeof content.host.startTime).toBe('number');
    expect(content.entries).toEqual([
      { pid: p.pid, pgid: p.pid, startTime: p.startTime, marker: p.marker, recordedAt: expect.any(Number) },
    ]);
    await ledger.release(p);
    expect(readdirSync(join(dir, 'nested'))).toEqual([]);
    await ledger.release(p); // idempotent
    await p.kill();
  });

  it('concurrent records are serialized: none is lost', async () => {
    const dir = tempDir();
    const ledger = createLedger({ dir });
    const procs = Array.from({ length: 8 }, () => spawnTracked('sleep', ['1000'], { stdio: 'ignore' }));
    cleanup.pid(...procs.map((p) => p.pid));
    await Promise.all(procs.map((p) => ledger.record(p)));
    const content = JSON.parse(readFileSync(ledger.file, 'utf8')) as LedgerFile;
    expect(content.entries.map((e) => e.pid).sort()).toEqual(procs.map((p) => p.pid).sort());
    await Promise.all(procs.slice(0, 5).map((p) => ledger.release(p)));
    const after = JSON.parse(readFileSync(ledger.file, 'utf8')) as LedgerFile;
    expect(after.entries.length).toBe(3);
    await Promise.all(procs.map((p) => p.kill({ graceMs: 100 })));
  });

  it('a folder that cannot be written rejects with LEDGER_IO naming the file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'blocker'), 'a file, not a folder');
    const ledger = createLedger({ dir: join(dir, 'blocker', 'sub') });
    const p = spawnTracked('sleep', ['1000'], { stdio: 'ignore' });
    cleanup.pid(p.pid);
    const err = await ledger.record(p).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LEDGER_IO' });
    expect((err as Error).message).toContain(join(dir, 'blocker', 'sub'));
    // The next write still runs (the queue is not stuck).
    await expect(ledger.release(p)).resolves.toBeUndefined();
    await p.kill();
  });

  it('recycled pid: an entry whose start time does not match is never signalled, nor its group', async () => {
    const dir = tempDir();
    // A live group leader with a group member: what a recycled pid could look like.
    const victim = spawnTracked('sh', ['-c', 'sleep 1000 & echo "M $!"; exec sleep 1000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanup.pid(victim.pid);
    cleanup.marker(victim.marker);
    const member = Number(await readLine(victim.child, 'M '));
    cleanup.pid(member);
    const host = await deadPid();
    writeHostFile(dir, `host-${host}-abc123.json`, {
      version: 1,
      host: { pid: host, startTime: 1, platform: 'linux' },
      entries: [
        {
          pid: victim.pid,
          pgid: victim.pid,
          startTime: (victim.startTime ?? 0) + 1,
          marker: 'wave:not-this-one',
          recordedAt: 0,
        },
      ],
    });
    const results = await createLedger({ dir }).sweep({ graceMs: 200 });
    expect(results).toEqual([expect.objectContaining({ pids: [], survivors: [] })]);
    expect(running(victim.pid)).toBe(true);
    expect(running(member)).toBe(true);
    expect(readdirSync(dir)).toEqual([]); // the dead host's file is done with
    await victim.kill({ graceMs: 200 });
  });

  it("recycled pid of a dead root: a stranger's leftover group and session with that id are never signalled", async () => {
    const dir = tempDir();
    // A classic daemon: a process that led its own session and group (pid R)
    // exited and left its child behind in group R and session R. Say R was
    // once the pid of a tree recorded by a host that died: the ids now belong
    // to the stranger, so the sweep must leave its child alone.
    const starter = spawn('setsid', ['sh', '-c', 'sleep 1000 >/dev/null 2>&1 & echo "R $$ $!"'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanup.pid(starter.pid);
    const [leader, daemon] = (await readLine(starter, 'R ')).split(' ').map(Number) as [number, number];
    cleanup.pid(daemon);
    await waitFor(() => !running(leader));
    const stat = readFileSync(`/proc/${daemon}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect([Number(f[2]), Number(f[3])]).toEqual([leader, leader]); // group and session R
    const host = await deadPid();
    writeHostFile(dir, `host-${host}-ff.json`, {
      version: 1,
      host: { pid: host, startTime: 1, platform: 'linux' },
      entries: [{ pid: leader, pgid: leader, startTime: 1, marker: 'wave:long-gone', recordedAt: 0 }],
    });
    const results = await createLedger({ dir }).sweep({ graceMs: 100 });
    expect(results).toEqual([expect.objectContaining({ pids: [], survivors: [] })]);
    expect(running(daemon)).toBe(true);
  });

  it('host killed with SIGKILL: a new process sweeps the orphaned tree; a live host is left alone', async () => {
    const dir = tempDir();
    // `--import tsx` resolves tsx from the working directory: run from this package.
    const host = spawn(process.execPath, ['--import', 'tsx', fixture('host.ts')], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, LEDGER_DIR: dir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanup.pid(host.pid);
    const info = JSON.parse(await readLine(host, 'HOST ', 60_000)) as {
      host: number;
      root: number;
      marker: string;
      file: string;
      middle: number;
      ignorer: number;
      setsid: number;
      doubleFork: number;
    };
    cleanup.marker(info.marker);
    const tree = [info.root, info.middle, info.ignorer, info.setsid, info.doubleFork];
    cleanup.pid(...tree);
    expect(readdirSync(dir)).toEqual([info.file.slice(dir.length + 1)]);

    // While the host lives, its trees are its own business.
    const ledger = createLedger({ dir });
    expect(await ledger.sweep()).toEqual([]);
    for (const pid of tree) expect(running(pid)).toBe(true);

    host.kill('SIGKILL');
    await waitFor(() => !running(info.host));
    // Control: the tree outlives its host.
    await new Promise((r) => setTimeout(r, 200));
    for (const pid of tree) expect(running(pid)).toBe(true);

    const results = await ledger.sweep({ graceMs: 300 });
    expect(results).toHaveLength(1);
    expect(results[0]?.survivors).toEqual([]);
    expect(new Set(results[0]?.pids)).toEqual(new Set(tree));
    for (const pid of tree) expect(running(pid)).toBe(false);
    expect(markerCarriers(info.marker)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('two sweepers at once reap each dead host file exactly once', async () => {
    const dir = tempDir();
    for (let i = 0; i < 6; i++) {
      const host = await deadPid();
      writeHostFile(dir, `host-${host}-${i}0.json`, {
        version: 1,
        host: { pid: host, startTime: 1, platform: 'linux' },
        entries: [{ pid: await deadPid(), startTime: 1, marker: `wave:dead-${i}`, recordedAt: 0 }],
      });
    }
    const [a, b] = await Promise.all([createLedger({ dir }).sweep(), createLedger({ dir }).sweep()]);
    expect((a?.length ?? 0) + (b?.length ?? 0)).toBe(6);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over a claim left by a sweeper that died; removes a dead host's temp file; warns about a corrupt file", async () => {
    const dir = tempDir();
    const host = await deadPid();
    const sweeper = await deadPid();
    writeHostFile(dir, `host-${host}-aa.json.claim-${sweeper}-bb`, {
      version: 1,
      host: { pid: host, platform: 'linux' },
      entries: [{ pid: await deadPid(), marker: 'wave:x', recordedAt: 0 }],
    });
    writeFileSync(join(dir, `host-${host}-cc.json.tmp`), '{"half');
    writeFileSync(join(dir, `host-${host}-dd.json`), 'not json');
    mkdirSync(join(dir, 'unrelated'));
    const warnings: string[] = [];
    const results = await createLedger({ dir, onWarning: (m) => warnings.push(m) }).sweep();
    expect(results).toHaveLength(1);
    expect(readdirSync(dir).sort()).toEqual([`host-${host}-dd.json`, 'unrelated']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`host-${host}-dd.json`);
  });

  it('sweep of a folder that does not exist returns nothing', async () => {
    expect(await createLedger({ dir: join(tmpdir(), 'proc-reaper-no-such-dir-xyz') }).sweep()).toEqual([]);
  });

  it('an entry without a start time is never taken by pid, only by its marker', async () => {
    const dir = tempDir();
    const victim = spawnTracked('sleep', ['1000'], { stdio: 'ignore' });
    cleanup.pid(victim.pid);
    const host = await deadPid();
    writeHostFile(dir, `host-${host}-ee.json`, {
      version: 1,
      host: { pid: host, platform: 'linux' },
      entries: [{ pid: victim.pid, marker: 'wave:other', recordedAt: 0 }],
    });
    const reaper = createReaper();
    const results = await createLedger({ dir, reaper }).sweep({ graceMs: 100 });
    expect(results[0]?.pids).toEqual([]);
    expect(running(victim.pid)).toBe(true);
    await victim.kill();
  });
});
