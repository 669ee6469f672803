import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isServerTrusted, type ResolvedServer, trustServer } from '@wave/mcp-config';
import type { ServerRecord } from '@wave/mcp-pool';
import type { Command } from 'commander';
import { loginCommand, needsAuthText, noteNeedsAuth } from '../auth-hints';
import { type GlobalOptions, loadWorld, type World } from '../context';
import { commandPool, ensureEnabled, ensureTrusted } from '../dial';
import { CliError, examples, type Io, oneLine } from '../io';
import { colors } from '../render';
import { isSecretName, redact, secretValues } from '../secrets';
import { disabledBy, toolViews } from '../views';
import { findServer, printJson } from './config';

/** How deep `wave mcp call` arguments may nest (tool schemas need a handful of levels). */
const MAX_ARGS_DEPTH = 64;

/** The nesting depth of a JSON value, counted up to `limit + 1` (no deeper). Pure, no recursion. */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) max = depth + 1;
    if (max > limit) return max;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return max;
}

/**
 * Store the tools of servers that connected, for `wave mcp list` and panels
 * later, and which remote servers need a sign-in.
 */
export async function remember(world: World, records: readonly ServerRecord[]): Promise<void> {
  const seen = records.flatMap((r) => {
    const server = world.servers.find((x) => x.name === r.name);
    if (!server || (r.status !== 'connected' && r.status !== 'needs-auth')) return [];
    return [{ server, needsAuth: r.status === 'needs-auth' }];
  });
  await noteNeedsAuth(world.home, seen);
  const entries = records
    .filter((r) => r.status === 'connected')
    .map((r) => ({
      server: r.name,
      fingerprint: r.fingerprint,
      tools: r.tools.map((t) => ({
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        inputSchema: t.inputSchema as object,
      })),
      ...(r.instructions !== undefined ? { instructions: r.instructions } : {}),
      lastConnectedAt: r.lastConnectedAt ?? Date.now(),
    }));
  if (entries.length === 0) return;
  await world.cache
    .write(
      world.workdir,
      entries,
      world.servers.map((s) => s.name),
    )
    .catch(() => undefined);
}

function recordJson(r: ServerRecord, secrets: readonly string[], ms?: number): Record<string, unknown> {
  return {
    name: r.name,
    source: r.source,
    status: r.status,
    ...(r.error
      ? {
          error: {
            code: r.error.code,
            message: redact(r.error.message, secrets),
            stderrTail: redact(r.error.stderrTail, secrets),
          },
        }
      : {}),
    ...(ms !== undefined ? { ms: Math.round(ms) } : {}),
    instructions: r.instructions,
    tools: toolViews(
      r.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    ),
  };
}

async function dialOne(
  world: World,
  name: string,
  opts: { trust?: boolean; timeout?: string },
): Promise<{
  server: ResolvedServer;
  record: ServerRecord;
  ms: number;
  close(): Promise<void>;
  pool: import('@wave/mcp-pool').McpPool;
}> {
  const s = findServer(world, name);
  ensureEnabled(world, s);
  await ensureTrusted(world, s, opts);
  const connectMs = opts.timeout === undefined ? undefined : parseTimeout(opts.timeout);
  const { pool, close } = await commandPool([s], connectMs !== undefined ? { connectMs } : {});
  const t0 = performance.now();
  const record = await pool.connect(s.name);
  const ms = performance.now() - t0;
  await remember(world, [record]);
  return { server: s, record, ms, close, pool };
}

function parseTimeout(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new CliError(
      `--timeout must be a positive number of milliseconds, not ${JSON.stringify(text)}.`,
      2,
    );
  return n;
}

/** Why a server failed, cleaned of the secret values it was given (`secrets`). */
function failure(r: ServerRecord, secrets: readonly string[]): string {
  const e = r.error;
  if (r.status === 'needs-auth') return needsAuthText(r.name);
  if (!e) return `"${r.name}" is ${r.status}.`;
  return redact(
    e.stderrTail && !e.message.includes(e.stderrTail)
      ? `${e.message}\nLast stderr lines:\n${e.stderrTail}`
      : e.message,
    secrets,
  );
}

/** The secret values of the server `name` in this world (see {@link secretValues}). */
function secretsOf(world: World, name: string): string[] {
  const s = world.servers.find((x) => x.name === name);
  return s ? secretValues(s, world.io.env) : [];
}

/** Fix suggestions for a failed server. Pure. */
export function suggestFix(
  s: ResolvedServer,
  r: ServerRecord | undefined,
  issues: readonly { code: string; message: string }[],
): string[] {
  const out: string[] = [];
  for (const i of issues) {
    if (i.code === 'VARIABLE_UNRESOLVED')
      out.push(`Set the missing variable in your environment, or give a default: ${i.message}`);
  }
  const msg = `${r?.error?.message ?? ''}\n${r?.error?.stderrTail ?? ''}`;
  if (/ENOENT|not found|command not found/i.test(msg) && s.config.command !== undefined) {
    out.push(`Install "${s.config.command}" or put it on PATH (or write its absolute path in the config).`);
  }
  // The pool words an HTTP 401/403 as 'Check the "headers" (credentials)'; the SDK's own text may not name the status.
  if (/\b40[13]\b|unauthori[sz]ed|forbidden|"headers" \(credentials\)/i.test(msg))
    out.push(
      'The server refused the credentials (HTTP 401/403): check the Authorization header or token variable.',
    );
  if (/certificate|TLS|SSL|self[- ]signed/i.test(msg))
    out.push('TLS failed: check the server certificate (NODE_EXTRA_CA_CERTS for a private CA).');
  if (/timed? ?out/i.test(msg))
    out.push(
      'It did not answer in time: check that it starts by hand, or raise --timeout / connectTimeoutMs.',
    );
  return out;
}

/** Plain http:// to a host that is not loopback: credentials travel in clear. Pure. */
export function plainHttpWarning(s: ResolvedServer): string | undefined {
  const url = s.config.url;
  if (url === undefined || !/^http:\/\//i.test(url)) return undefined;
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  if (host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host)) return undefined;
  return `"${s.name}" uses plain http:// to ${host}: anything it sends (headers, tokens) travels unencrypted. Use https://.`;
}

export function registerLiveCommands(mcp: Command, io: Io, globals: () => GlobalOptions): void {
  mcp
    .command('connect <name>')
    .description('really dial one server: status, tools, instructions, timing; then disconnect cleanly')
    .option('--trust', 'trust a project or plugin server as configured now')
    .option('--timeout <ms>', 'connect timeout in milliseconds')
    .option('--json', 'print JSON')
    .addHelpText('after', examples('wave mcp connect memory', 'wave mcp connect docs --trust --timeout 5000'))
    .action(async (name: string, opts: { trust?: boolean; timeout?: string; json?: boolean }) => {
      const world = await loadWorld(io, globals());
      const d = await dialOne(world, name, opts);
      try {
        const c = colors(io.color && !opts.json);
        if (opts.json) printJson(io, recordJson(d.record, secretsOf(world, name), d.ms));
        else if (d.record.status === 'connected') {
          io.out(
            `${c.green('connected')} ${name} in ${Math.round(d.ms)} ms, ${d.record.tools.length} tools\n`,
          );
          for (const t of toolViews(d.record.tools)) io.out(`  ${oneLine(t.name)} (~${t.tokens} tokens)\n`);
          if (d.record.instructions) io.out(`Instructions:\n${d.record.instructions}\n`);
        }
        if (d.record.status !== 'connected') {
          if (!opts.json) io.err(`${failure(d.record, secretsOf(world, name))}\n`);
          process.exitCode = 1;
        }
      } finally {
        await d.close();
      }
    });

  mcp
    .command('tools [name]')
    .description('the tools of one server (or of every enabled, trusted server), dialed live')
    .option('--trust', 'trust a project or plugin server as configured now')
    .option('--json', 'print JSON')
    .addHelpText('after', examples('wave mcp tools', 'wave mcp tools memory --json'))
    .action(async (name: string | undefined, opts: { trust?: boolean; json?: boolean }) => {
      const world = await loadWorld(io, globals());
      let servers: ResolvedServer[];
      if (name !== undefined) {
        const s = findServer(world, name);
        ensureEnabled(world, s);
        await ensureTrusted(world, s, opts);
        servers = [s];
      } else {
        servers = [];
        for (const s of world.servers) {
          if (disabledBy(s, world.local) || s.connectable === false) continue;
          if (s.source === 'project' || s.source === 'plugin') {
            if (opts.trust) await ensureTrusted(world, s, opts);
            else if (!isServerTrusted(world.local, s)) {
              if (!opts.json)
                io.err(`skipped "${s.name}": not trusted on this machine (wave mcp trust ${s.name})\n`);
              continue;
            }
          }
          servers.push(s);
        }
      }
      const { pool, close } = await commandPool(servers);
      try {
        await pool.ensureConnected();
        const records = pool.list();
        await remember(world, records);
        if (opts.json)
          printJson(io, { servers: records.map((r) => recordJson(r, secretsOf(world, r.name))) });
        else {
          for (const r of records) {
            io.out(`${r.name}: ${r.status === 'connected' ? `${r.tools.length} tools` : r.status}\n`);
            for (const t of toolViews(r.tools)) {
              io.out(
                `  ${oneLine(t.name)} (~${t.tokens} tokens)${t.description ? `  ${t.description.split('\n')[0]?.slice(0, 100)}` : ''}\n`,
              );
            }
            if (r.status !== 'connected') io.err(`${failure(r, secretsOf(world, r.name))}\n`);
          }
        }
        if (records.some((r) => r.status !== 'connected')) process.exitCode = 1;
      } finally {
        await close();
      }
    });

  mcp
    .command('call <server> <tool> [json]')
    .description('call one tool with JSON arguments and print its result')
    .option('--args-file <file>', 'read the JSON arguments from a file')
    .option('--trust', 'trust a project or plugin server as configured now')
    .option('--json', 'print the raw MCP result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  wave mcp call everything echo \'{"message":"hi"}\'\n  wave mcp call memory read_graph',
    )
    .action(
      async (
        server: string,
        tool: string,
        json: string | undefined,
        opts: { argsFile?: string; trust?: boolean; json?: boolean },
      ) => {
        if (json !== undefined && opts.argsFile !== undefined)
          throw new CliError('Give the arguments inline or with --args-file, not both.', 2);
        let text = json ?? '{}';
        if (opts.argsFile !== undefined) text = await readFile(resolve(io.cwd, opts.argsFile), 'utf8');
        let args: unknown;
        try {
          args = JSON.parse(text);
        } catch (err) {
          throw new CliError(`The arguments are not valid JSON (${(err as Error).message}).`, 2);
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new CliError('The arguments must be a JSON object, e.g. \'{"message":"hi"}\'.', 2);
        }
        if (nestingDepth(args, MAX_ARGS_DEPTH) > MAX_ARGS_DEPTH) {
          throw new CliError(`The arguments are nested more than ${MAX_ARGS_DEPTH} levels deep.`, 2);
        }
        const world = await loadWorld(io, globals());
        const d = await dialOne(world, server, opts);
        try {
          if (d.record.status !== 'connected')
            throw new CliError(failure(d.record, secretsOf(world, server)));
          if (!d.record.tools.some((t) => t.name === tool)) {
            throw new CliError(
              `"${server}" has no tool "${tool}". Its tools: ${d.record.tools.map((t) => t.name).join(', ')}.`,
            );
          }
          let result: Awaited<ReturnType<typeof d.pool.callTool>>;
          try {
            result = await d.pool.callTool(server, tool, args as Record<string, unknown>);
          } catch (err) {
            // The call failed (the server went away, refused the request, timed out): say so, exit 1.
            throw new CliError(
              redact(err instanceof Error ? err.message : String(err), secretsOf(world, server)),
            );
          }
          if (opts.json) printJson(io, result);
          else {
            for (const block of result.content ?? []) {
              if (block.type === 'text') io.out(`${block.text}\n`);
              else io.out(`[${block.type}${'mimeType' in block ? ` ${String(block.mimeType)}` : ''}]\n`);
            }
            if ((result.content ?? []).length === 0 && result.structuredContent !== undefined) {
              io.out(`${JSON.stringify(result.structuredContent, null, 2)}\n`);
            }
          }
          if (result.isError) process.exitCode = 1;
        } finally {
          await d.close();
        }
      },
    );

  mcp
    .command('doctor')
    .description('check every source and try every server, in parallel; exit 1 if any fails')
    .option('--timeout <ms>', 'connect timeout per server in milliseconds', '15000')
    .option('--trust', 'also try project and plugin servers not yet trusted (and trust them)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples('wave mcp doctor', 'wave mcp doctor --json --timeout 5000'))
    .action(async (opts: { timeout: string; trust?: boolean; json?: boolean }) => {
      const world = await loadWorld(io, globals());
      const connectMs = parseTimeout(opts.timeout);
      const checks = world.servers.map((s) => ({
        server: s,
        off: disabledBy(s, world.local),
        trusted: isServerTrusted(world.local, s) || opts.trust === true,
      }));
      const runnable = checks
        .filter((c) => !c.off && c.trusted && c.server.connectable !== false)
        .map((c) => c.server);
      if (opts.trust)
        for (const s of runnable)
          if (!isServerTrusted(world.local, s)) world.local = await trustServer(world.home, s);
      const { pool, close } = await commandPool(runnable, { connectMs });
      const timings = new Map<string, number>();
      try {
        await Promise.all(
          runnable.map(async (s) => {
            const t0 = performance.now();
            await pool.connect(s.name);
            timings.set(s.name, performance.now() - t0);
          }),
        );
        const records = new Map(pool.list().map((r) => [r.name, r]));
        await remember(world, [...records.values()]);
        let failed = false;
        const rows = checks.map(({ server: s, off, trusted }) => {
          const r = records.get(s.name);
          const issues = world.issues.filter((i) => i.server === s.name);
          const raw = s.raw ?? s.config;
          const secrets = secretValues(s, io.env);
          const problems: string[] = [];
          let status: string;
          if (off) status = 'disabled';
          else if (s.connectable === false) status = 'invalid';
          else if (!trusted) status = 'not trusted';
          else status = r?.status ?? 'unknown';
          if (
            status === 'invalid' ||
            status === 'error' ||
            (r && r.status !== 'connected' && !off && trusted)
          ) {
            failed = true;
            if (r?.status === 'needs-auth') problems.push(needsAuthText(s.name));
            else if (r?.error) problems.push(redact(r.error.message, secrets));
          }
          const warning = plainHttpWarning(s);
          const tools = r?.status === 'connected' ? toolViews(r.tools) : [];
          return {
            name: s.name,
            source: s.source,
            file: s.file,
            status,
            ms: timings.has(s.name) ? Math.round(timings.get(s.name) ?? 0) : undefined,
            tools: tools.length,
            tokens: tools.reduce((n, t) => n + t.tokens, 0),
            env: Object.fromEntries(
              Object.keys(raw.env ?? {}).map((k) => [k, isSecretName(k) ? '****' : 'set']),
            ),
            unresolved: issues
              .filter((i) => i.code === 'VARIABLE_UNRESOLVED')
              .map((i) => ({ field: i.field, message: i.message })),
            issues: issues.map((i) => ({ severity: i.severity, code: i.code, message: i.message })),
            stderrTail: redact(r?.error?.stderrTail, secrets),
            problems,
            warnings: warning ? [warning] : [],
            fixes:
              status === 'connected' || status === 'disabled'
                ? []
                : status === 'needs-auth'
                  ? [`Sign in: ${loginCommand(s.name)}`]
                  : status === 'not trusted'
                    ? [`Trust it first: wave mcp trust ${s.name} (or run doctor with --trust).`]
                    : suggestFix(s, r, issues).map((f) => redact(f, secrets)),
          };
        });
        const general = world.issues.filter((i) => i.server === undefined);
        if (general.some((i) => i.severity === 'error')) failed = true;
        if (opts.json) printJson(io, { ok: !failed, servers: rows, issues: general });
        else {
          const c = colors(io.color);
          for (const i of general)
            io.out(`${i.severity === 'error' ? c.red('error') : c.yellow('warning')}  ${i.message}\n`);
          if (rows.length === 0) io.out('No MCP servers are configured. See: wave mcp add --help\n');
          for (const row of rows) {
            const mark =
              row.status === 'connected'
                ? c.green('ok')
                : row.status === 'disabled' || row.status === 'not trusted'
                  ? c.dim('--')
                  : row.status === 'needs-auth'
                    ? c.yellow('AUTH')
                    : c.red('FAIL');
            io.out(
              `${mark}  ${row.name} (${row.source})  ${row.status}${row.ms !== undefined ? `  ${row.ms} ms` : ''}${row.status === 'connected' ? `  ${row.tools} tools, ~${row.tokens} tokens` : ''}\n`,
            );
            const envNames = Object.keys(row.env);
            if (envNames.length) io.out(`    env: ${envNames.join(', ')}\n`);
            for (const u of row.unresolved) io.out(`    ${c.red('unresolved')} ${u.message}\n`);
            for (const p of row.problems) io.out(`    ${p.split('\n').join('\n    ')}\n`);
            for (const w of row.warnings) io.out(`    ${c.yellow('warning')} ${w}\n`);
            for (const f of row.fixes) io.out(`    fix: ${f}\n`);
          }
        }
        if (failed) process.exitCode = 1;
      } finally {
        await close();
      }
    });
}
