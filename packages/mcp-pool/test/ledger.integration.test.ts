/**
 * The pool records every stdio tree in the per-host ledger under the wave
 * home, releases it on teardown, and a new pool sweeps what a killed host
 * left behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeSources, type ResolvedServer } from '@wave/mcp-config';
import {
  findProcessesByMarker,
  fixtureServer,
  isPidAlive,
  killPids,
  makeTempHome,
  type TempHome,
  waitFor,
} from '@wave/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpPool } from '../src/pool';
import type { PoolWarning } from '../src/warnings';

const HOST = fileURLToPath(new URL('./fixtures/pool-host.ts', import.meta.url));
const TSX = fileURLToPath(import.meta.resolve('tsx/esm'));

let ns: string;
let home: TempHome;
const pools: McpPool[] = [];
const hosts: ChildProcess[] = [];

beforeEach(async () => {
  ns = `${process.env.WAVE_REAPER_NAMESPACE ?? 'wave'}:ledger-${randomUUID().slice(0, 8)}`;
  home = await makeTempHome();
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.destroy();
  for (const h of hosts.splice(0)) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
  const left = findProcessesByMarker(ns).filter(isPidAlive);
  killPids(left);
  await home.cleanup();
  expect(left).toEqual([]);
});

const ledgerDir = () => join(home.home, 'processes');
const ledgerFiles = () => {
  try {
    return readdirSync(ledgerDir());
  } catch {
    return [];
  }
};

function resolve(entries: Record<string, unknown>): ResolvedServer[] {
  return mergeSources([{ source: 'constructor', servers: entries }], { workdir: home.workdir }).servers;
}

/** Start a host process running a pool; resolves with it once its servers are connected. */
async function startHost(
  servers: Record<string, unknown>,
): Promise<{ host: ChildProcess; records: { status: string; pid: number }[] }> {
  const host = spawn(process.execPath, ['--conditions=@wave/source', '--import', TSX, HOST], {
    env: {
      ...process.env,
      POOL_HOST_SERVERS: JSON.stringify(servers),
      POOL_HOST_HOME: home.home,
      POOL_HOST_NAMESPACE: ns,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hosts.push(host);
  let out = '';
  let err = '';
  host.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`host not ready within 60 s; stderr:\n${err}`)), 60_000);
    host.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^READY (.*)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    host.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`host exited with ${code}; stderr:\n${err}`));
    });
  });
  return { host, records: JSON.parse(line) };
}

describe('process ledger', () => {
  it('a host SIGKILLed with spawner trees up: a new pool sweeps them on start, 0 survivors', async () => {
    const spawner = (n: string) => ({ ...fixtureServer('spawner', { SPAWNER_MODE: 'all', HELLO_NAME: n }) });
    const { host, records } = await startHost({ one: spawner('one'), two: spawner('two') });
    expect(records.map((r) => r.status)).toEqual(['connected', 'connected']);
    // Each spawner tree is the spawner and its 3 grandchildren.
    await waitFor(() => findProcessesByMarker(ns).filter(isPidAlive).length >= 8, {
      timeoutMs: 30_000,
      message: 'both spawner trees up',
    });
    expect(ledgerFiles()).toHaveLength(1);
    host.kill('SIGKILL');
    await new Promise((r) =>
      host.exitCode !== null || host.signalCode !== null ? r(null) : host.once('exit', r),
    );
    // Control: the dead host's trees outlive it.
    expect(findProcessesByMarker(ns).filter(isPidAlive).length).toBeGreaterThan(0);

    const warnings: PoolWarning[] = [];
    const pool = McpPool.create({
      servers: resolve({ hello: fixtureServer('hello') }),
      home: home.home,
      markerNamespace: ns,
      onWarning: (w) => warnings.push(w),
    });
    pools.push(pool);
    // The first dial starts the sweep; sweepLedgers() shares it.
    await pool.ensureConnected();
    const results = await pool.sweepLedgers();
    expect(results.flatMap((r) => r.survivors)).toEqual([]);
    expect(results.flatMap((r) => r.pids).length).toBeGreaterThanOrEqual(6);
    const helloPid = pool.get('hello')?.pid;
    await waitFor(
      () => findProcessesByMarker(ns).filter((p) => p !== helloPid && isPidAlive(p)).length === 0,
      {
        timeoutMs: 30_000,
        message: 'no survivor of the dead host',
      },
    );
    // The dead host's ledger is gone; only the new pool's own file is left.
    const files = ledgerFiles();
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^host-${process.pid}-`));
    expect(warnings).toEqual([]);
  });

  it('records each stdio tree while it runs and releases it on disconnect and destroy', async () => {
    const pool = McpPool.create({
      servers: resolve({ a: fixtureServer('hello'), b: fixtureServer('hello') }),
      home: home.home,
      markerNamespace: ns,
    });
    pools.push(pool);
    await pool.ensureConnected();
    const files = ledgerFiles();
    expect(files).toHaveLength(1);
    const ledger = JSON.parse(readFileSync(join(ledgerDir(), files[0]!), 'utf8'));
    expect(ledger.host.pid).toBe(process.pid);
    expect(ledger.entries.map((e: { pid: number }) => e.pid).sort()).toEqual(
      [pool.get('a')?.pid, pool.get('b')?.pid].sort(),
    );
    await pool.disconnect('a');
    const after = JSON.parse(readFileSync(join(ledgerDir(), files[0]!), 'utf8'));
    expect(after.entries.map((e: { pid: number }) => e.pid)).toEqual([pool.get('b')?.pid]);
    await pool.destroy();
    expect(ledgerFiles()).toEqual([]);
  });

  it('a ledger that cannot be written never fails a connection: a LEDGER warning names the server', async () => {
    // The home is a regular file: <home>/processes cannot be created.
    const notADir = join(home.root, 'not-a-dir');
    writeFileSync(notADir, 'x');
    const warnings: PoolWarning[] = [];
    const pool = McpPool.create({
      servers: resolve({ hello: fixtureServer('hello') }),
      home: notADir,
      markerNamespace: ns,
      onWarning: (w) => warnings.push(w),
    });
    pools.push(pool);
    await pool.ensureConnected();
    expect(pool.get('hello')?.status).toBe('connected');
    expect(warnings.some((w) => w.code === 'LEDGER' && w.server === 'hello')).toBe(true);
    expect(warnings.find((w) => w.server === 'hello')?.message).toMatch(/"hello".*could not be recorded/);
  });

  it('sweepOnStart: false leaves the ledgers of dead hosts alone', async () => {
    const { host } = await startHost({ one: fixtureServer('spawner', { SPAWNER_MODE: 'setsid' }) });
    await waitFor(() => findProcessesByMarker(ns).filter(isPidAlive).length >= 2, {
      timeoutMs: 30_000,
      message: 'spawner tree up',
    });
    host.kill('SIGKILL');
    await new Promise((r) =>
      host.exitCode !== null || host.signalCode !== null ? r(null) : host.once('exit', r),
    );
    const pool = McpPool.create({
      servers: resolve({ hello: fixtureServer('hello') }),
      home: home.home,
      markerNamespace: ns,
      sweepOnStart: false,
    });
    pools.push(pool);
    await pool.ensureConnected();
    expect(ledgerFiles().filter((f) => !f.startsWith(`host-${process.pid}-`))).toHaveLength(1);
    // An explicit sweep still works.
    await pool.sweepLedgers();
    expect(ledgerFiles().filter((f) => !f.startsWith(`host-${process.pid}-`))).toEqual([]);
  });
});
