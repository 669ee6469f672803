import { createHash, randomUUID } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { nodeConfigFs, writeFileAtomic } from '@wave/mcp-config';
import { AgentError } from '../errors';
import type { Message } from '../model';
import type { LoadedSession, SessionInfo, SessionStore } from './types';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** First 16 hex digits of sha256 of the absolute workdir: the folder of its sessions. */
export function workdirHash(workdir: string): string {
  return createHash('sha256').update(resolve(workdir)).digest('hex').slice(0, 16);
}

/** A new session id (time-ordered prefix, random suffix). */
export function newSessionId(now: number = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}-${randomUUID().slice(0, 8)}`;
}

/**
 * Parse JSONL transcript text. A line that is not valid JSON is skipped with a
 * warning (a torn last line after a crash mid-write is the usual case); every
 * other line loads. Pure.
 */
export function parseTranscript(text: string, file: string): { messages: Message[]; warnings: string[] } {
  const messages: Message[] = [];
  const warnings: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (value && typeof value === 'object' && typeof (value as { role?: unknown }).role === 'string') {
        messages.push(value as Message);
      } else {
        warnings.push(`${file}:${i + 1}: not a message; skipped.`);
      }
    } catch {
      const last = lines.slice(i + 1).every((l) => l.trim() === '');
      warnings.push(
        last
          ? `${file}:${i + 1}: the last line is incomplete (the process probably stopped mid-write); it was skipped and the rest loaded.`
          : `${file}:${i + 1}: not valid JSON; skipped.`,
      );
    }
  }
  return { messages, warnings };
}

function serialize(messages: readonly Message[]): string {
  return messages.map((m) => `${JSON.stringify(m)}\n`).join('');
}

/** Options of {@link createJsonlSessionStore}. */
export interface JsonlSessionStoreOptions {
  /** The wave home; sessions go to `<home>/sessions/<workdir-hash>/<id>.jsonl`. */
  home: string;
}

/** The default {@link SessionStore}: one JSONL file per session, one message per line. */
export function createJsonlSessionStore(options: JsonlSessionStoreOptions): SessionStore {
  const root = join(options.home, 'sessions');
  const dirOf = (workdir: string) => join(root, workdirHash(workdir));
  const fileOf = (workdir: string, id: string) => {
    if (!ID_PATTERN.test(id)) {
      throw new AgentError(
        'INVALID_OPTIONS',
        `Session id ${JSON.stringify(id)} is not valid: use 1-128 characters of A-Z, a-z, 0-9, _ and -.`,
      );
    }
    return join(dirOf(workdir), `${id}.jsonl`);
  };

  async function list(workdir: string): Promise<SessionInfo[]> {
    let names: string[];
    try {
      names = await readdir(dirOf(workdir));
    } catch {
      return [];
    }
    const out: SessionInfo[] = [];
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue;
      try {
        const st = await stat(join(dirOf(workdir), name));
        out.push({ id: name.slice(0, -'.jsonl'.length), updatedAt: st.mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1));
  }

  return {
    list,
    filesDir(workdir, id) {
      return join(dirOf(workdir), `${id}.files`);
    },
    async load(workdir, id): Promise<LoadedSession | undefined> {
      let sid = id;
      if (id === 'latest') {
        const [latest] = await list(workdir);
        if (!latest) return undefined;
        sid = latest.id;
      }
      const file = fileOf(workdir, sid);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new AgentError('SESSION_IO', `Cannot read session ${file}: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const { messages, warnings } = parseTranscript(text, file);
      return { id: sid, messages, warnings };
    },
    async append(workdir, id, messages) {
      const file = fileOf(workdir, id);
      await mkdir(dirOf(workdir), { recursive: true });
      if (messages.length === 0) {
        await appendFile(file, '');
        return;
      }
      await appendFile(file, serialize(messages));
    },
    async rewrite(workdir, id, messages) {
      const file = fileOf(workdir, id);
      await mkdir(dirOf(workdir), { recursive: true });
      // The one atomic write of the project (temp file fsynced, renamed; removed on failure).
      await writeFileAtomic(nodeConfigFs, file, serialize(messages), { mode: 0o600 });
    },
  };
}
