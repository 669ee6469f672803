import { spawn } from 'node:child_process';
import { type Command, Option } from 'commander';
import type { GlobalOptions } from '../context';
import { CliError, type Io } from '../io';

interface UiOptions {
  port?: string;
  open?: boolean;
  cwd?: string;
  provider?: string;
  baseUrl?: string;
  model?: string;
  trust?: boolean;
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new CliError(
      `--port must be a number from 0 to 65535 (0: a free port), not ${JSON.stringify(value)}.`,
      2,
    );
  return n;
}

function openBrowser(url: string): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The URL is printed; opening it is a convenience.
  }
}

/** Serve until SIGINT or SIGTERM, then close the page's streams, the agent and every MCP process. */
async function runUi(io: Io, globals: GlobalOptions, opts: UiOptions): Promise<number> {
  const port = parsePort(opts.port);
  const cwd = opts.cwd ?? globals.cwd;
  const { UiSession } = await import('./session');
  const { startUiServer } = await import('./server');
  const { assets } = await import('./assets');
  const session = await UiSession.create(io, cwd === undefined ? {} : { cwd }, opts);
  let server: Awaited<ReturnType<typeof startUiServer>>;
  try {
    server = await startUiServer({ session, assets, port });
  } catch (err) {
    await session.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new CliError(`Port ${port} is in use; pick another with --port, or omit it.`, 1);
    throw err;
  }
  io.out(`wave ui: ${server.url}\n`);
  io.out(`model ${session.modelName}; press Ctrl-C to stop.\n`);
  if (opts.open) openBrowser(server.url);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      // A second signal while closing ends the process at once.
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  io.err(`wave ui: ${signal}, closing...\n`);
  const started = Date.now();
  await server.close();
  await session.close();
  io.err(`wave ui: closed in ${Date.now() - started} ms.\n`);
  return 0;
}

/** `wave ui`. Loaded on demand (other commands start faster). */
export function registerUiCommand(program: Command, io: Io, globals: () => GlobalOptions): void {
  program
    .command('ui')
    .description('a local web page: conversation and Settings -> MCP, on 127.0.0.1 with a per-launch token')
    .option('--port <n>', 'port on 127.0.0.1 (default: a free one)')
    .option('--open', 'open the page in the default browser')
    .option('--cwd <dir>', 'the project folder (where .mcp.json lives)')
    .addOption(new Option('--provider <name>', 'model API').choices(['openai', 'anthropic']))
    .option('--base-url <url>', 'model API base URL, e.g. http://localhost:11434/v1')
    .option('-m, --model <id>', 'model id')
    .option('--trust', 'trust the project and plugin servers as configured now')
    .addHelpText(
      'after',
      '\nThe model comes from the flags, the environment or <home>/settings.json, as for wave chat.\nThe printed URL carries the token; every request without it is refused.\n\nExamples:\n  wave ui --open --base-url http://localhost:11434/v1 --model llama3.1\n  wave ui --port 7777 --cwd ~/src/my-project',
    )
    .action(async (opts: UiOptions) => {
      process.exitCode = await runUi(io, globals(), opts);
    });
}
