import { createInterface } from 'node:readline';
import type { Agent, ApprovalAnswer, ApprovalRequest, McpServerView, Message } from '@wave/agent';
import type { ElicitationHandler } from '@wave/mcp-pool';
import {
  type AgentCommandOptions,
  type AgentSession,
  openAgentSession,
  repairHistory,
} from '../agent-session';
import type { GlobalOptions } from '../context';
import { CliError, type Io } from '../io';
import { colors } from '../render';
import { askElicitation } from './elicit';
import {
  CHAT_HELP,
  collapse,
  contentText,
  formatArgs,
  renderServers,
  renderTools,
  statusLabel,
} from './format';

export interface ChatOptions extends AgentCommandOptions {
  allow?: string[];
  deny?: string[];
}

type LineResult = { kind: 'line'; text: string } | { kind: 'interrupt' } | { kind: 'eof' };

/** One input line through readline (history kept across lines). */
function readLine(prompt: string, history: string[]): Promise<LineResult> {
  return new Promise((resolve) => {
    const rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: true,
      history: [...history],
      historySize: 200,
      removeHistoryDuplicates: true,
    });
    let done = false;
    const finish = (r: LineResult) => {
      if (done) return;
      done = true;
      rl.close();
      resolve(r);
    };
    rl.on('line', (text) => {
      if (text.trim() !== '') history.unshift(text);
      finish({ kind: 'line', text });
    });
    rl.on('SIGINT', () => {
      if (rl.line !== '') {
        // Ctrl-C on a typed line clears it, like a shell (Ctrl-E, Ctrl-U).
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
        return;
      }
      process.stdout.write('\n');
      finish({ kind: 'interrupt' });
    });
    rl.on('close', () => finish({ kind: 'eof' }));
    rl.setPrompt(prompt);
    rl.prompt();
  });
}

/**
 * While a turn runs, stdin is in raw mode and read only for Ctrl-C (no echo
 * of stray keys into the streamed answer). Other keys are typed ahead: they
 * are given back to stdin for the next input line. Paused while a prompt
 * owns stdin.
 */
function interruptWatcher(onInterrupt: () => void): { pause(): void; resume(): void; stop(): void } {
  const stdin = process.stdin;
  const typedAhead: Buffer[] = [];
  const onData = (d: Buffer) => {
    // Every Ctrl-C in the chunk counts: two pressed quickly may arrive as one read.
    let start = 0;
    for (let i = d.indexOf(3); i >= 0; i = d.indexOf(3, start)) {
      typedAhead.push(d.subarray(start, i));
      start = i + 1;
      onInterrupt();
    }
    if (start < d.length) typedAhead.push(d.subarray(start));
  };
  let active = false;
  const resume = () => {
    if (active) return;
    active = true;
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
  };
  const pause = () => {
    if (!active) return;
    active = false;
    stdin.off('data', onData);
    stdin.pause();
    if (stdin.isTTY) stdin.setRawMode(false);
  };
  const stop = () => {
    pause();
    const rest = Buffer.concat(typedAhead.splice(0));
    if (rest.length > 0) stdin.unshift(rest);
  };
  resume();
  return { pause, resume, stop };
}

/** `wave chat`: an interactive session. Resolves with the exit code. */
export async function runChat(io: Io, globals: GlobalOptions, opts: ChatOptions): Promise<number> {
  if (!io.interactive) {
    throw new CliError('wave chat needs a terminal. For scripts and CI use: wave run "<prompt>" [--json]', 2);
  }
  const c = colors(io.color);
  const out = (t: string) => io.out(t);
  let watcher: ReturnType<typeof interruptWatcher> | undefined;
  let turn: AbortController | undefined;
  let interrupts = 0;
  let exitRequested = false;

  const canUseTool = async (req: ApprovalRequest): Promise<ApprovalAnswer> => {
    watcher?.pause();
    try {
      unspin();
      endLine();
      const { select, isCancel } = await import('@clack/prompts');
      // The call line is printed already; show the arguments again only when it cut them.
      const full = formatArgs(req.arguments, 2000);
      const lines = full === formatArgs(req.arguments) ? [] : [c.dim(full)];
      if (req.reason === 'definition-changed')
        lines.push(c.yellow('The server changed this tool since you allowed it always.'));
      if (req.requestedApprovals?.length)
        lines.push(c.dim(`(its config asks to auto-approve: ${req.requestedApprovals.join(', ')})`));
      if (lines.length > 0) out(`${lines.join('\n')}\n`);
      const answer = await select<ApprovalAnswer>({
        message: `Allow ${req.fullName}?`,
        options: [
          { value: 'allow', label: 'Allow once' },
          { value: 'allow-always', label: 'Allow always (this session, also when resumed)' },
          { value: 'deny', label: 'Deny' },
        ],
        initialValue: 'allow',
        ...(req.signal ? { signal: req.signal } : {}),
      });
      if (isCancel(answer)) {
        // Ctrl-C on the question: deny and cancel the turn (unless the turn is
        // being cancelled already, which is what closed the question).
        if (!req.signal?.aborted && !turn?.signal.aborted) interrupt();
        return 'deny';
      }
      return answer;
    } finally {
      if (turn) watcher?.resume();
    }
  };

  const onElicitation: ElicitationHandler = async (server, request, ctx) => {
    watcher?.pause();
    try {
      unspin();
      endLine();
      return await askElicitation(server, request, ctx.signal, out);
    } finally {
      if (turn) watcher?.resume();
    }
  };

  const session = await openAgentSession(io, globals, opts, {
    ask: true,
    permissions: { allow: opts.allow ?? [], deny: opts.deny ?? [] },
    canUseTool,
    onElicitation,
  });
  const { agent } = session;

  // ---- rendering of the agent's events ----
  let atLineStart = true;
  // A spinner while waiting (terminal with colour only); it owns the current
  // line, so it runs only at the start of a line and stops before any output.
  let spinner: import('yocto-spinner').Spinner | undefined;
  const { default: yoctoSpinner } = io.color ? await import('yocto-spinner') : { default: undefined };
  const spin = (text: string) => {
    if (!yoctoSpinner || !atLineStart) return;
    spinner?.stop();
    spinner = yoctoSpinner({ text: c.dim(text), stream: process.stdout, handleSignals: false }).start();
  };
  const unspin = () => {
    spinner?.stop();
    spinner = undefined;
  };
  const write = (t: string) => {
    if (t === '') return;
    unspin();
    out(t);
    atLineStart = t.endsWith('\n');
  };
  function endLine() {
    if (!atLineStart) write('\n');
  }
  const calls = new Map<string, { blocked: boolean; isError: boolean; ms: number }>();
  let lastOutput: { name: string; text: string } | undefined;
  agent.on('warning', (w) => {
    endLine();
    write(`${c.yellow('warning')} ${w.message}\n`);
  });
  agent.on('modelEvent', (e) => {
    if (e.type === 'text-delta') write(e.text);
  });
  const announced = new Set<string>();
  agent.on('toolCall', (e) => {
    if (e.callId !== undefined && announced.has(e.callId)) {
      calls.set(e.callId, { blocked: e.blocked, isError: e.isError, ms: e.ms });
      return;
    }
    // A call made from inside another tool (an Exec script, the gateway).
    const mark = e.blocked ? c.red('denied') : e.isError ? c.red('failed') : c.green('ok');
    endLine();
    write(
      `  ${c.dim('↳')} ${e.fullName} ${c.dim(formatArgs(e.arguments, 80))} ${mark}${c.dim(` ${Math.round(e.ms)} ms`)}\n`,
    );
  });
  agent.on('message', (m: Message) => {
    if (m.role === 'assistant' && m.toolCalls) {
      endLine();
      for (const call of m.toolCalls) announced.add(call.id);
      for (const call of m.toolCalls)
        write(`${c.cyan('●')} ${c.bold(call.name)} ${c.dim(formatArgs(call.arguments))}\n`);
      spin(`Running ${m.toolCalls.map((t) => t.name).join(', ')}…`);
    } else if (m.role === 'tool') {
      const info = calls.get(m.toolCallId);
      const text = contentText(m.content);
      lastOutput = { name: m.name, text };
      const { lines, hiddenLines } = collapse(text);
      const head = info?.blocked
        ? c.red('denied')
        : info?.isError || m.isError
          ? c.red('failed')
          : c.green('ok');
      const ms = info ? c.dim(` ${Math.round(info.ms)} ms`) : '';
      endLine();
      write(`  ${c.dim('⎿')} ${head}${ms}\n`);
      for (const l of lines) write(`    ${c.dim(l)}\n`);
      if (hiddenLines > 0) write(`    ${c.dim(`… ${hiddenLines} more lines (/expand to see all)`)}\n`);
      spin('Thinking…');
    }
  });

  function interrupt() {
    interrupts += 1;
    if (interrupts >= 2) {
      exitRequested = true;
      turn?.abort();
      // Whatever the turn is doing, leave now: the agent stops every server first.
      void agent.destroy().finally(() => process.exit(130));
      return;
    }
    endLine();
    if (turn) {
      write(c.yellow('Cancelling… (Ctrl-C again to exit)\n'));
      turn.abort();
    } else write(c.dim('(Ctrl-C again to exit, or /exit)\n'));
  }

  async function sendTurn(text: string): Promise<void> {
    turn = new AbortController();
    watcher = interruptWatcher(interrupt);
    spin('Thinking…');
    try {
      await agent.sendMessage(text, { signal: turn.signal });
      endLine();
    } catch (err) {
      endLine();
      const code = (err as { code?: string }).code;
      if (code === 'TURN_ABORTED' || turn.signal.aborted) {
        repairHistory(agent);
        write(`${c.yellow('Cancelled.')}\n`);
      } else write(`${c.red('error')} ${(err as Error)?.message ?? String(err)}\n`);
    } finally {
      unspin();
      watcher.stop();
      watcher = undefined;
      turn = undefined;
    }
  }

  // ---- banner ----
  const views = agent.getMcpServers();
  write(
    `${c.bold('wave chat')} ${c.dim(`· ${session.model.name} · session ${agent.sessionId}`)}\n` +
      `${c.dim(`${views.length} MCP server${views.length === 1 ? '' : 's'} (connected on your first message) · /help for commands`)}\n`,
  );
  const earlier = agent.getMessages().filter((m) => !(m.role === 'user' && m.isMeta));
  if (earlier.length > 0) {
    write(c.dim(`Resumed: ${earlier.length} earlier messages. Last ones:\n`));
    for (const m of earlier.slice(-4)) {
      const t = m.role === 'tool' ? `[${m.name}]` : contentText(m.content).split('\n')[0]?.slice(0, 100);
      write(c.dim(`  ${m.role === 'user' ? '>' : m.role === 'assistant' ? '<' : ' '} ${t}\n`));
    }
  }

  // A closed terminal or a kill: the agent (and every server it started) goes first.
  const onSignal = (signal: NodeJS.Signals) => {
    void agent.destroy().finally(() => process.exit(signal === 'SIGHUP' ? 129 : 143));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  // Ctrl-C reaches us as a key in raw mode; as a signal (from outside, or
  // in a moment stdin is not raw) it means the same.
  const onSigint = () => interrupt();
  process.on('SIGINT', onSigint);
  const history: string[] = [];
  try {
    for (;;) {
      if (exitRequested) return 130;
      const r = await readLine(`${c.bold('>')} `, history);
      if (r.kind === 'eof') return 0;
      if (r.kind === 'interrupt') {
        interrupts += 1;
        if (interrupts >= 2) return 130;
        write(c.dim('(Ctrl-C again to exit, or /exit)\n'));
        continue;
      }
      interrupts = 0;
      const text = r.text.trim();
      if (text === '') continue;
      if (text.startsWith('/')) {
        const done = await command(text, { io, agent, session, write, c, lastOutput: () => lastOutput });
        if (done === 'exit') return 0;
        continue;
      }
      await sendTurn(text);
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('SIGINT', onSigint);
    await agent.destroy();
    await session.flush();
    write(c.dim(`Session ${agent.sessionId} saved. Resume it with: wave chat --resume ${agent.sessionId}\n`));
  }
}

interface CommandContext {
  io: Io;
  agent: Agent;
  session: AgentSession;
  write(t: string): void;
  c: ReturnType<typeof colors>;
  lastOutput(): { name: string; text: string } | undefined;
}

async function command(line: string, ctx: CommandContext): Promise<'exit' | undefined> {
  const [cmd, ...rest] = line.split(/\s+/);
  const { agent, write, c } = ctx;
  switch (cmd) {
    case '/exit':
    case '/quit':
      return 'exit';
    case '/help':
      write(`${CHAT_HELP.join('\n')}\n`);
      return undefined;
    case '/clear':
      agent.replaceHistory([]);
      write(c.dim('Conversation cleared. The model starts fresh (MCP servers stay connected).\n'));
      return undefined;
    case '/tools':
      write(`${renderTools(agent.getMcpServers()).join('\n')}\n`);
      return undefined;
    case '/expand': {
      const last = ctx.lastOutput();
      write(last ? `${c.bold(last.name)}\n${last.text}\n` : 'No tool output yet.\n');
      return undefined;
    }
    case '/mcp':
      await mcpCommand(rest, ctx);
      return undefined;
    default:
      write(`Unknown command ${cmd}. ${CHAT_HELP[0]} /help\n`);
      return undefined;
  }
}

type McpAction = 'connect' | 'disconnect' | 'reconnect' | 'trust' | 'details' | 'back';

async function mcpAction(action: McpAction, name: string, ctx: CommandContext): Promise<void> {
  const { agent, write, c, session } = ctx;
  const find = () => agent.getMcpServers().find((v) => v.name === name);
  const v = find();
  if (!v) {
    write(
      `No MCP server named "${name}". Configured: ${
        agent
          .getMcpServers()
          .map((s) => s.name)
          .join(', ') || 'none'
      }.\n`,
    );
    return;
  }
  const off = session.off.get(name);
  if (off === 'disabled' && action !== 'details') {
    write(`"${name}" is switched off on this machine. Turn it on with: wave mcp enable ${name}\n`);
    return;
  }
  if (off === 'not trusted' && (action === 'connect' || action === 'reconnect')) action = 'trust';
  let view: McpServerView | undefined;
  switch (action) {
    case 'back':
      return;
    case 'details':
      write(`${detail(v, session.off)}\n`);
      return;
    case 'trust':
      await session.trust(name);
      write(`Trusted "${name}" on this machine.\n`);
      view = await agent.connectMcpServer(name);
      break;
    case 'disconnect':
      view = await agent.disconnectMcpServer(name);
      break;
    case 'reconnect':
      await agent.disconnectMcpServer(name);
      view = await agent.connectMcpServer(name);
      break;
    case 'connect':
      view = await agent.connectMcpServer(name);
      break;
  }
  if (!view) return;
  if (view.status === 'connected') write(`${c.green('connected')} ${name}, ${view.toolCount} tools\n`);
  else if (view.status === 'error')
    write(`${c.red('failed')} ${name}: ${view.error?.message ?? 'unknown error'}\n`);
  else write(`${name}: ${statusLabel(view, session.off)}\n`);
}

function detail(v: McpServerView, off: ReadonlyMap<string, string>): string {
  const lines = [`${v.name} (${v.source}${v.file ? `, ${v.file}` : ''}): ${statusLabel(v, off)}`];
  const cfg = v.config as { command?: string; args?: string[]; url?: string };
  if (cfg.url !== undefined) lines.push(`  url: ${cfg.url}`);
  else if (cfg.command !== undefined) lines.push(`  runs: ${[cfg.command, ...(cfg.args ?? [])].join(' ')}`);
  if (v.error) {
    lines.push(`  error: ${v.error.message}`);
    if (v.error.stderrTail)
      lines.push(`  last stderr lines:\n    ${v.error.stderrTail.split('\n').join('\n    ')}`);
  }
  return lines.join('\n');
}

async function mcpCommand(args: string[], ctx: CommandContext): Promise<void> {
  const { agent, write, session } = ctx;
  const [sub, name] = args;
  if (sub !== undefined) {
    if (!['connect', 'disconnect', 'reconnect', 'details'].includes(sub) || name === undefined) {
      write('Usage: /mcp [connect|disconnect|reconnect|details <name>]\n');
      return;
    }
    await mcpAction(sub as McpAction, name, ctx);
    return;
  }
  const views = agent.getMcpServers();
  write(`${renderServers(views, session.off).join('\n')}\n`);
  if (views.length === 0) return;
  const { select, isCancel } = await import('@clack/prompts');
  const picked = await select<string>({
    message: 'Which server?',
    options: [
      ...views.map((v) => ({ value: v.name, label: v.name, hint: statusLabel(v, session.off) })),
      { value: '', label: 'Done' },
    ],
  });
  if (isCancel(picked) || picked === '') return;
  const v = views.find((x) => x.name === picked) as McpServerView;
  const live = v.status === 'connected' || v.status === 'connecting' || v.status === 'reconnecting';
  const options: { value: McpAction; label: string }[] = [];
  if (session.off.get(v.name) === 'not trusted') options.push({ value: 'trust', label: 'Trust and connect' });
  else if (live) {
    options.push({ value: 'disconnect', label: 'Disconnect' });
    options.push({ value: 'reconnect', label: 'Reconnect' });
  } else options.push({ value: 'connect', label: v.status === 'error' ? 'Retry (connect)' : 'Connect' });
  options.push({ value: 'details', label: v.status === 'error' ? 'Why it failed' : 'Details' });
  options.push({ value: 'back', label: 'Back' });
  const action = await select<McpAction>({ message: `${v.name}: ${statusLabel(v, session.off)}`, options });
  if (isCancel(action)) return;
  await mcpAction(action, v.name, ctx);
}
