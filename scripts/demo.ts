/**
 * Quick-start demo: the packages working together, end to end, on real
 * processes. It never touches your real ~/.wave: everything lives in a temp
 * directory that is removed at the end.
 *
 *   1. mcp-config writes a project `.mcp.json` (hello fixture + the real
 *      server-everything) and loads it back, merged with the (empty) user file.
 *   2. mcp-pool registers the servers: nothing is spawned until the first
 *      `ensureConnected()`, which dials both in parallel.
 *   3. The tools of each server are listed and one tool of each is called.
 *   4. mcp-instructions computes the one message that announces the servers'
 *      `instructions`; mcp-cache stores the tool snapshot for panels.
 *   5. The pool is destroyed and the demo checks that no process it started
 *      (found by the proc-reaper marker) is still alive.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolCache } from '@wave/mcp-cache';
import { addServer, loadMcpConfig, projectConfigPath } from '@wave/mcp-config';
import { computeInstructionsDelta } from '@wave/mcp-instructions';
import { McpPool } from '@wave/mcp-pool';
import { findProcessesByMarker, fixtureServer, realServer } from '@wave/testkit';

const t0 = performance.now();
const ms = () => `${Math.round(performance.now() - t0)} ms`.padStart(8);
const log = (line: string) => console.log(`${ms()}  ${line}`);

function textOf(result: { content?: unknown }): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  return blocks
    .map((b: { type?: string; text?: string }) => (b.type === 'text' ? b.text : `[${b.type}]`))
    .join(' ')
    .slice(0, 120);
}

async function main(): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), 'wave-demo-'));
  const home = join(root, 'home');
  const workdir = join(root, 'project');
  // Every process the pool spawns carries WAVE_REAPER_ID=<namespace>:<uuid>.
  const namespace = `wave-demo-${process.pid}`;
  process.env.WAVE_REAPER_NAMESPACE = namespace;
  let pool: McpPool | undefined;
  try {
    // 1. Config: write a project .mcp.json the way `wave mcp add` will, then load it.
    await mkdir(workdir, { recursive: true });
    const file = projectConfigPath(workdir);
    await addServer(file, 'hello', fixtureServer('hello'));
    await addServer(file, 'everything', realServer('everything'));
    const { servers, issues } = await loadMcpConfig({ workdir, home, env: process.env });
    log(`config: ${servers.length} servers from ${file} (${issues.length} issues)`);
    for (const issue of issues) log(`  ${issue.severity}: ${issue.message}`);

    // 2. Pool: creating it spawns nothing.
    pool = McpPool.create({ servers, clientInfo: { name: 'wave-demo', version: '0.0.0' } });
    log(
      `pool: ${pool
        .list()
        .map((r) => `${r.name}=${r.status}`)
        .join(', ')}`,
    );
    log(`live marked processes before the first turn: ${findProcessesByMarker(`${namespace}:`).length}`);

    // The first "turn": dial every pending server in parallel.
    await pool.ensureConnected();
    for (const r of pool.list()) {
      const extra = r.error ? ` (${r.error.message})` : '';
      log(`${r.name}: ${r.status}, pid ${r.pid ?? '-'}, ${r.tools.length} tools${extra}`);
      log(`  tools: ${r.tools.map((t) => t.name).join(', ')}`);
    }

    // 3. Call one tool on each server.
    const echo = await pool.callTool('hello', 'echo', { text: 'hi from the demo' });
    log(`hello.echo -> ${textOf(echo)}`);
    const sum = await pool.callTool('everything', 'get-sum', { a: 2, b: 40 });
    log(`everything.get-sum -> ${textOf(sum)}`);

    // 4. Instructions: one meta message announcing each server's instructions.
    const records = pool.list();
    const delta = computeInstructionsDelta(
      [],
      records.map((r) => ({
        name: r.name,
        available: r.status === 'connected',
        instructions: r.instructions,
        permitted: true,
      })),
    );
    log(
      `instructions delta: ${delta ? `announces ${delta.mcpInstructions.announced.map((a) => a.server).join(', ')} (${delta.content.length} chars)` : 'nothing to say'}`,
    );

    // Tool snapshot cache for panels (display only, never model tools).
    const cache = createToolCache({ home });
    await cache.write(
      workdir,
      records.map((r) => ({
        server: r.name,
        fingerprint: r.fingerprint,
        tools: r.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
        lastConnectedAt: r.lastConnectedAt ?? Date.now(),
      })),
      records.map((r) => r.name),
    );
    const cached = await cache.list(workdir);
    log(`cache: ${cached.map((s) => `${s.server}=${s.tools.length} tools`).join(', ')}`);

    // 5. Teardown: every process tree goes, grandchildren included.
    const beforeDestroy = findProcessesByMarker(`${namespace}:`).length;
    const td = performance.now();
    await pool.destroy();
    pool = undefined;
    const left = findProcessesByMarker(`${namespace}:`);
    log(
      `destroy: ${beforeDestroy} marked processes -> ${left.length} left, in ${Math.round(performance.now() - td)} ms`,
    );
    return left.length === 0 && records.every((r) => r.status === 'connected') ? 0 : 1;
  } finally {
    await pool?.destroy();
    await rm(root, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
