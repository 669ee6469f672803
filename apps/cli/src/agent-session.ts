import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  Agent,
  ApprovalAnswer,
  ApprovalRequest,
  ModelAdapter,
  PermissionRules,
  SessionStore,
} from '@wave/agent';
import { isServerTrusted, type ResolvedServer, trustServer } from '@wave/mcp-config';
import { closeUnansweredToolCalls } from './chat/history';
import { type GlobalOptions, loadWorld, type World } from './context';
import { trustSummary } from './dial';
import { CliError, type Io } from './io';
import {
  type ModelFlags,
  type ModelSettings,
  readModelFileSettings,
  resolveModelSettings,
  settingsPath,
} from './model-settings';
import { disabledBy } from './views';

/** Options shared by `wave chat` and `wave run`. */
export interface AgentCommandOptions extends ModelFlags {
  trust?: boolean;
  resume?: string;
  continue?: boolean;
  toolMode?: string;
}

export interface AgentSession {
  agent: Agent;
  world: World;
  settings: ModelSettings;
  model: ModelAdapter;
  /** Servers that stay off in this session (not trusted, or switched off locally), with why. */
  off: Map<string, string>;
  /** Trust a repository or plugin server now (bound to its fingerprint) and let the agent use it. */
  trust(name: string): Promise<void>;
  /** Wait for the session's "allow always" answers to be written. */
  flush(): Promise<void>;
}

/**
 * "Allow always" answers of a session live beside its transcript
 * (`<session files dir>/approvals.json`: full tool name -> definition hash),
 * so `--resume` / `--continue` restore them. Missing or unreadable: none.
 */
async function readApprovals(file: string): Promise<Record<string, string>> {
  try {
    const data = JSON.parse(await readFile(file, 'utf8')) as unknown;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return {};
    return Object.fromEntries(
      Object.entries(data).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch {
    return {};
  }
}

async function writeApprovals(file: string, approvals: Record<string, string>): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(approvals, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

const TOOL_MODES = ['auto', 'flat', 'exec', 'gateway'] as const;

/** Build the model adapter for these settings. */
export async function createModel(settings: ModelSettings): Promise<ModelAdapter> {
  const { openaiCompatible, anthropic } = await import('@wave/agent');
  if (settings.provider === 'anthropic') {
    return anthropic({ apiKey: settings.apiKey ?? '', model: settings.model, baseURL: settings.baseURL });
  }
  return openaiCompatible({
    baseURL: settings.baseURL,
    model: settings.model,
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
  });
}

/** Resolve the model (flags > environment > settings.json); a usage error says how when none is configured. */
export async function modelSettingsFor(io: Io, home: string, flags: ModelFlags): Promise<ModelSettings> {
  const file = await readModelFileSettings(home);
  return resolveModelSettings(flags, io.env, file, settingsPath(home));
}

/**
 * Create the agent of a chat or run: the model, every config source with
 * the installed plugins, and the trust gate for repository and plugin
 * servers (asked on a terminal when `ask` is set; `--trust` trusts them now;
 * otherwise they stay off with a hint on stderr). Starts no process.
 */
/** Answer tool calls a cancelled (or crashed) turn left without a result, so the next request is valid. */
export function repairHistory(agent: Agent): void {
  const fixed = closeUnansweredToolCalls(agent.getMessages());
  if (fixed) agent.replaceHistory(fixed);
}

export async function openAgentSession(
  io: Io,
  globals: GlobalOptions,
  opts: AgentCommandOptions,
  extra: {
    ask: boolean;
    permissions?: PermissionRules;
    canUseTool?: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
    onElicitation?: import('@wave/mcp-pool').ElicitationHandler;
  },
): Promise<AgentSession> {
  if (opts.resume !== undefined && opts.continue)
    throw new CliError('Give --resume <id> or --continue, not both.', 2);
  if (opts.toolMode !== undefined && !(TOOL_MODES as readonly string[]).includes(opts.toolMode))
    throw new CliError(`--tool-mode must be one of ${TOOL_MODES.join(', ')}.`, 2);
  const world = await loadWorld(io, globals);
  const settings = await modelSettingsFor(io, world.home, opts);
  const model = await createModel(settings);
  const off = new Map<string, string>();
  const isServerAllowed = async (server: ResolvedServer): Promise<boolean> => {
    if (disabledBy(server, world.local)) {
      off.set(server.name, 'disabled');
      return false;
    }
    if (isServerTrusted(world.local, server)) {
      off.delete(server.name);
      return true;
    }
    // Asked once per session: a reload does not ask again.
    if (off.get(server.name) === 'not trusted') return false;
    if (!opts.trust) {
      if (!extra.ask) {
        off.set(server.name, 'not trusted');
        io.err(
          `wave: skipped the ${server.source} server "${server.name}": not trusted on this machine (run with --trust, or: wave mcp trust ${server.name})\n`,
        );
        return false;
      }
      io.err(`${trustSummary(server)}\n`);
      const { confirm, isCancel } = await import('@clack/prompts');
      const answer = await confirm({ message: `Trust and allow "${server.name}"?`, initialValue: false });
      if (isCancel(answer) || answer !== true) {
        off.set(server.name, 'not trusted');
        return false;
      }
    }
    world.local = await trustServer(world.home, server);
    return true;
  };
  const { Agent, createJsonlSessionStore } = await import('@wave/agent');
  const store: SessionStore = createJsonlSessionStore({ home: world.home });
  // `--continue` is resolved here (not with sessionId 'latest') to find its approvals first.
  const sessionId = opts.resume ?? (opts.continue ? (await store.list(world.workdir))[0]?.id : undefined);
  const approvals =
    sessionId !== undefined
      ? await readApprovals(join(store.filesDir(world.workdir, sessionId), 'approvals.json'))
      : {};
  const agent = await Agent.create({
    workdir: world.workdir,
    home: world.home,
    model,
    env: io.env,
    plugins: world.plugins,
    isServerAllowed,
    ...(extra.permissions ? { permissions: extra.permissions } : {}),
    ...(extra.canUseTool ? { canUseTool: extra.canUseTool } : {}),
    ...(extra.onElicitation ? { onElicitation: extra.onElicitation } : {}),
    ...(opts.toolMode !== undefined ? { toolMode: opts.toolMode as (typeof TOOL_MODES)[number] } : {}),
    sessionStore: store,
    rememberedApprovals: approvals,
    ...(sessionId !== undefined ? { sessionId } : {}),
  }).catch((err: unknown) => {
    if ((err as { code?: string }).code === 'SESSION_NOT_FOUND')
      throw new CliError((err as Error).message, 1);
    throw err;
  });
  // The agent itself keeps switched-off servers from starting; remember them for the /mcp view.
  for (const s of world.servers) if (disabledBy(s, world.local)) off.set(s.name, 'disabled');
  repairHistory(agent);
  let saving: Promise<void> = Promise.resolve();
  const approvalsFile = join(store.filesDir(world.workdir, agent.sessionId), 'approvals.json');
  agent.on('allowAlways', (e) => {
    approvals[e.fullName] = e.definitionHash;
    const snapshot = { ...approvals };
    saving = saving
      .then(() => writeApprovals(approvalsFile, snapshot))
      .catch((err: unknown) => io.err(`wave: could not save the approval: ${(err as Error).message}\n`));
  });
  const trust = async (name: string): Promise<void> => {
    const server = world.servers.find((s) => s.name === name);
    if (!server) throw new CliError(`No MCP server named "${name}".`);
    world.local = await trustServer(world.home, server);
    off.delete(name);
    await agent.reloadMcpConfig();
  };
  return { agent, world, settings, model, off, trust, flush: () => saving };
}
