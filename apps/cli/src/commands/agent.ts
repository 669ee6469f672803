import { type Command, Option } from 'commander';
import type { GlobalOptions } from '../context';
import type { Io } from '../io';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

const MODEL_HELP = [
  '',
  'Model (flags > environment > <home>/settings.json):',
  '  --base-url, OPENAI_BASE_URL   an OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, ...)',
  '  --model, WAVE_MODEL           the model id',
  '  OPENAI_API_KEY / ANTHROPIC_API_KEY',
  '  settings.json: { "model": { "provider": "openai", "baseURL": "...", "model": "..." } }',
].join('\n');

function modelOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--provider <name>', 'model API').choices(['openai', 'anthropic']))
    .option(
      '--base-url <url>',
      'model API base URL, e.g. http://localhost:11434/v1 (implies --provider openai)',
    )
    .option('-m, --model <id>', 'model id, e.g. llama3.1, gpt-4o-mini, claude-sonnet-4-5')
    .option('--allow <glob>', 'run tools matching this full name without asking (repeatable)', collect)
    .option(
      '--deny <glob>',
      'never run tools matching this full name (repeatable; wins over --allow)',
      collect,
    )
    .option('--trust', 'trust the project and plugin servers as configured now')
    .option('--resume <id>', 'continue the session with this id')
    .option('-c, --continue', "continue this project's latest session")
    .addOption(
      new Option('--tool-mode <mode>', 'how MCP tools are declared to the model').choices([
        'auto',
        'flat',
        'exec',
        'gateway',
      ]),
    );
}

/** `wave chat` and `wave run`. The agent is loaded on demand (other commands start faster). */
export function registerAgentCommands(program: Command, io: Io, globals: () => GlobalOptions): void {
  modelOptions(
    program
      .command('chat')
      .description('talk with an agent that uses your MCP servers (interactive)')
      .addHelpText(
        'after',
        `${MODEL_HELP}\n\nExamples:\n  wave chat --base-url http://localhost:11434/v1 --model llama3.1\n  OPENAI_API_KEY=sk-... wave chat --model gpt-4o-mini\n  wave chat --continue\n\nIn the chat: /mcp, /tools, /expand, /clear, /help, /exit. Ctrl-C cancels the running turn; twice exits.`,
      ),
  ).action(async (opts) => {
    const { runChat } = await import('../chat/repl');
    process.exitCode = await runChat(io, globals(), opts);
  });

  modelOptions(
    program
      .command('run <prompt>')
      .description('one prompt, no questions: print the answer (or --json) for scripts and CI')
      .option('--json', 'print a JSON object: text, tool calls, usage, session id')
      .addHelpText(
        'after',
        `${MODEL_HELP}\n\nTool calls not allowed by --allow are denied (nobody is there to ask).\nThe prompt "-" reads it from stdin.\n\nExamples:\n  wave run "What is in the memory graph?" --allow 'mcp__memory__read_*'\n  wave run --json "Summarize README.md" --allow 'mcp__fs__*' --deny 'mcp__fs__write_*'`,
      ),
  ).action(async (prompt: string, opts) => {
    const { runPrompt } = await import('../run');
    process.exitCode = await runPrompt(io, globals(), prompt, opts);
  });
}
