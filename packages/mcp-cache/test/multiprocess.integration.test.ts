import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '@wave/testkit/vitest';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createToolCache } from '../src/cache';

const here = dirname(fileURLToPath(import.meta.url));
const writer = join(here, 'fixtures', 'writer.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const WRITERS = 4;
const PER_WRITER = 100;

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = tempDir('wave-mcp-cache-');
});
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
  }
});

interface Outcome {
  code: number | null;
  lines: string[];
  stderr: string;
}

function startWriter(
  file: string,
  workdir: string,
): { child: ChildProcess; ready: Promise<void>; done: Promise<Outcome> } {
  const namespace = process.env.WAVE_REAPER_NAMESPACE ?? 'wave';
  const child = spawn(
    process.execPath,
    ['--conditions=@wave/source', '--import', tsx, writer, file, workdir, String(PER_WRITER)],
    {
      cwd: join(here, '..'),
      env: { ...process.env, WAVE_REAPER_ID: `${namespace}:${randomUUID()}` },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const lines: string[] = [];
  let stderr = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (line === 'ready') onReady();
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<Outcome>((resolve) => {
    child.on('close', (code) => resolve({ code, lines, stderr }));
  });
  return { child, ready, done };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]);
}

it(`${WRITERS} processes writing ${PER_WRITER} entries each, concurrently, lose nothing`, async () => {
  const file = join(dir, 'home', 'mcp-tools-cache.json');
  const workdirs = Array.from({ length: WRITERS }, (_, k) => `/projects/p${k}`);
  const writers = workdirs.map((wd) => startWriter(file, wd));
  await within(Promise.all(writers.map((w) => w.ready)), 120_000, 'writer start-up');
  for (const w of writers) w.child.stdin?.end('go\n');
  const outcomes = await within(Promise.all(writers.map((w) => w.done)), 240_000, 'the writers');

  let lockWaits = 0;
  for (const outcome of outcomes) {
    expect(outcome.code, outcome.stderr).toBe(0);
    const report = JSON.parse(outcome.lines.at(-1) ?? '{}') as { problems: string[]; lockWaits: number };
    // every writer is alive throughout: no lock may be judged stale, nothing else may go wrong
    expect(report.problems).toEqual([]);
    lockWaits += report.lockWaits;
  }
  // the writes really contended for the lock (otherwise this test proves little)
  expect(lockWaits).toBeGreaterThan(0);

  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    version: number;
    entries: { workdir: string; server: string; fingerprint: string }[];
  };
  expect(doc.version).toBe(1);
  expect(doc.entries).toHaveLength(WRITERS * PER_WRITER);
  const cache = createToolCache({ file });
  for (const wd of workdirs) {
    const listed = await cache.list(wd);
    expect(listed).toHaveLength(PER_WRITER);
    for (let i = 0; i < PER_WRITER; i++) {
      expect(await cache.get(wd, `server-${i}`, `fp-${i}`), `${wd} server-${i}`).toBeDefined();
    }
  }
  expect(readdirSync(dirname(file))).toEqual(['mcp-tools-cache.json']);
  console.log(`multiprocess: ${WRITERS}x${PER_WRITER} writes, ${lockWaits} lock waits in total`);
}, 400_000);
