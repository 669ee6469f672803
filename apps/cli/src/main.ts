import { resolveHome } from '@wave/mcp-config';
import { Command, CommanderError } from 'commander';
import { registerAgentCommands } from './commands/agent';
import { registerAuthCommands } from './commands/auth';
import { registerConfigCommands, registerPluginCommands } from './commands/config';
import { registerImportCommand } from './commands/import';
import { registerLiveCommands } from './commands/live';
import type { GlobalOptions } from './context';
import { CliError, examples, type Io } from './io';
import { registerUiCommand } from './ui/command';

export const VERSION = '0.0.0';

/** Build the `wave` command tree. */
export function buildProgram(io: Io): Command {
  const program = new Command('wave');
  const globals = () => program.opts<GlobalOptions>();
  program
    .description('wave: MCP servers for AI agents, managed from the command line')
    .version(VERSION, '-v, --version')
    .option('-C, --cwd <dir>', 'the project folder (where .mcp.json lives)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .addHelpText(
      'after',
      [
        '',
        'Environment:',
        '  WAVE_HOME   where wave keeps your config, plugins and state (default ~/.wave)',
        '  NO_COLOR    no colour',
        '',
        'Examples:',
        '  wave mcp list',
        '  wave mcp add memory -- npx -y @modelcontextprotocol/server-memory',
        '  wave mcp doctor',
        '  wave chat --base-url http://localhost:11434/v1 --model llama3.1',
        '  wave run --json "What tools do you have?"',
      ].join('\n'),
    );
  const mcp = program
    .command('mcp')
    .description('configure, inspect and try MCP servers')
    .addHelpText(
      'after',
      examples(
        'wave mcp list',
        'wave mcp add memory -- npx -y @modelcontextprotocol/server-memory',
        'wave mcp connect memory',
        'wave mcp doctor',
      ),
    );
  registerConfigCommands(mcp, io, globals);
  registerImportCommand(mcp, io, globals);
  registerLiveCommands(mcp, io, globals);
  registerAuthCommands(mcp, io, globals);
  registerPluginCommands(program, io, globals);
  registerAgentCommands(program, io, globals);
  registerUiCommand(program, io, globals);
  for (const cmd of [program, mcp, ...mcp.commands, ...program.commands]) {
    cmd.exitOverride().configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  }
  return program;
}

/** Run `wave` with these arguments; resolves with the exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      if (err.code === 'commander.executeSubCommandAsync') return 0;
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof CliError) {
      io.err(`${err.message}\n`);
      return err.exitCode;
    }
    const sys = err as { code?: unknown; syscall?: unknown; path?: unknown };
    if (typeof sys.code === 'string' && typeof sys.syscall === 'string' && typeof sys.path === 'string') {
      // A file-system failure (WAVE_HOME under a file, a read-only disk, no space): say what and where.
      io.err(
        `wave: cannot ${sys.syscall} ${sys.path} (${sys.code}). Check that the folder exists and is writable (WAVE_HOME=${resolveHome({ env: io.env })}).\n`,
      );
      return 1;
    }
    io.err(`wave: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}
