/**
 * `ReadOutput`: pages through a tool output the output guard spilled to a
 * file. It reads files of its own session only: the path must resolve, with
 * every symlink followed, inside the session's temp dir, and be a regular file.
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { countLines, READ_OUTPUT_TOOL } from '../guard/truncate';
import type { BuiltinContext, BuiltinResult, BuiltinTool } from './types';

/** Lines per page: the default and the most one call returns. */
export const READ_OUTPUT_MAX_LINES = 1000;
/** Characters per page: the default in `chars` mode, and the most one call returns in either mode. */
export const READ_OUTPUT_MAX_CHARS = 8000;
/** Files larger than this are not read. */
export const READ_OUTPUT_MAX_FILE_BYTES = 64 * 1024 * 1024;

function fail(message: string): BuiltinResult {
  return { content: message, isError: true };
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
    ? (err as { code: string }).code
    : undefined;
}

/** What a page request asks for, checked. */
interface Page {
  path: string;
  unit: 'lines' | 'chars';
  offset: number;
  limit: number;
}

function parseArgs(args: Record<string, unknown>): Page | string {
  const { path, offset = 0, limit, unit = 'lines' } = args;
  if (typeof path !== 'string' || path.trim() === '') {
    return 'ReadOutput needs "path": the file named in a truncated tool result.';
  }
  if (path.includes('\u0000')) return 'The path contains a NUL character.';
  if (unit !== 'lines' && unit !== 'chars')
    return `"unit" must be "lines" or "chars", not ${JSON.stringify(unit)}.`;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) {
    return `"offset" must be a whole number >= 0 (the ${unit} to skip), not ${JSON.stringify(offset)}.`;
  }
  const max = unit === 'lines' ? READ_OUTPUT_MAX_LINES : READ_OUTPUT_MAX_CHARS;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
    return `"limit" must be a whole number >= 1, not ${JSON.stringify(limit)}.`;
  }
  return { path, unit, offset, limit: Math.min(limit ?? max, max) };
}

/**
 * The file's real path, if it is a regular file inside the session dir, or
 * a message saying why not.
 */
async function checkedPath(path: string, sessionDir: string): Promise<string | { error: string }> {
  if (path.split(/[\\/]/).includes('..')) {
    return { error: `"${path}" contains "..": give the path exactly as the truncated result names it.` };
  }
  let root: string;
  try {
    root = await realpath(sessionDir);
  } catch {
    return { error: `This session has no saved outputs yet (${sessionDir} does not exist).` };
  }
  const wanted = isAbsolute(path) ? path : resolve(sessionDir, path);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch (err) {
    const code = errnoOf(err);
    return {
      error:
        code === 'ENOENT' || code === 'ENOTDIR'
          ? `No such file: ${wanted}.`
          : `${wanted} cannot be read (${code ?? String(err)}).`,
    };
  }
  if (!isInside(root, real)) {
    return {
      error: `${path} is not a saved output of this session: ReadOutput only reads files under ${sessionDir}.`,
    };
  }
  return real;
}

// Every page is the file's text, then one newline, then a footer line
// `[ReadOutput: ...]` that says what was shown and how to continue.

function pageOfLines(text: string, page: Page, file: string): BuiltinResult {
  const total = countLines(text);
  if (page.offset >= total && !(total === 0 && page.offset === 0)) {
    return fail(`Offset ${page.offset} is past the end of ${file} (${total} lines).`);
  }
  // char index where line `offset` starts
  let start = 0;
  for (let n = 0; n < page.offset; n++) start = text.indexOf('\n', start) + 1;
  let end = start;
  let lines = 0;
  while (lines < page.limit && end < text.length) {
    const nl = text.indexOf('\n', end);
    const next = nl === -1 ? text.length : nl + 1;
    if (next - start > READ_OUTPUT_MAX_CHARS) break;
    end = next;
    lines += 1;
  }
  if (lines === 0 && end < text.length) {
    // one line longer than a page: show its start, continue by characters
    const cut = start + READ_OUTPUT_MAX_CHARS;
    const next = { path: file, unit: 'chars', offset: cut };
    return {
      content: `${text.slice(start, cut)}\n[${READ_OUTPUT_TOOL}: line ${page.offset + 1} of ${total} is longer than ${READ_OUTPUT_MAX_CHARS} characters; this is its start. Continue with ${READ_OUTPUT_TOOL} ${JSON.stringify(next)}.]`,
    };
  }
  const body = text.slice(start, end);
  const first = page.offset + 1;
  const last = page.offset + lines;
  const remain = total - last;
  const range = lines === 0 ? 'no lines' : `lines ${first}-${last}`;
  const tail =
    remain > 0
      ? `${remain} lines remain. Continue with ${READ_OUTPUT_TOOL} ${JSON.stringify({ path: file, offset: last })}.`
      : 'end of file.';
  return { content: `${body}\n[${READ_OUTPUT_TOOL}: ${range} of ${total} in ${file}; ${tail}]` };
}

function pageOfChars(text: string, page: Page, file: string): BuiltinResult {
  const total = text.length;
  if (page.offset >= total && !(total === 0 && page.offset === 0)) {
    return fail(`Offset ${page.offset} is past the end of ${file} (${total} characters).`);
  }
  let end = Math.min(total, page.offset + page.limit);
  const code = text.charCodeAt(end - 1);
  if (end < total && code >= 0xd800 && code <= 0xdbff) end -= 1; // never split a surrogate pair
  const body = text.slice(page.offset, end);
  const remain = total - end;
  const tail =
    remain > 0
      ? `${remain} characters remain. Continue with ${READ_OUTPUT_TOOL} ${JSON.stringify({ path: file, unit: 'chars', offset: end })}.`
      : 'end of file.';
  return {
    content: `${body}\n[${READ_OUTPUT_TOOL}: characters ${page.offset}-${end} of ${total} in ${file}; ${tail}]`,
  };
}

async function readOutput(args: Record<string, unknown>, ctx: BuiltinContext): Promise<BuiltinResult> {
  const page = parseArgs(args);
  if (typeof page === 'string') return fail(page);
  const real = await checkedPath(page.path, ctx.sessionDir);
  if (typeof real !== 'string') return fail(real.error);
  let text: string;
  try {
    // O_NOFOLLOW: the checked path cannot be swapped for a symlink between the check and the read.
    const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = await handle.stat();
      if (!st.isFile()) return fail(`${page.path} is not a regular file.`);
      if (st.size > READ_OUTPUT_MAX_FILE_BYTES) {
        return fail(
          `${page.path} is ${st.size} bytes, more than the ${READ_OUTPUT_MAX_FILE_BYTES} bytes ReadOutput reads.`,
        );
      }
      text = await handle.readFile({ encoding: 'utf8' });
    } finally {
      await handle.close();
    }
  } catch (err) {
    return fail(`${page.path} cannot be read (${errnoOf(err) ?? String(err)}).`);
  }
  const file = isAbsolute(page.path) ? page.path : resolve(ctx.sessionDir, page.path);
  return page.unit === 'lines' ? pageOfLines(text, page, file) : pageOfChars(text, page, file);
}

/** The `ReadOutput` built-in tool (no approval needed: it only reads this session's spilled outputs). */
export const readOutputTool: BuiltinTool = {
  declaration: {
    name: READ_OUTPUT_TOOL,
    description:
      'Read more of a tool result that was too long to show in full. A truncated result names the file it was saved to and the exact ReadOutput call that continues it. Pages by lines (default, up to 1000 per call) or by characters (up to 8000 per call), and says how much remains.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file named in the truncated result.' },
        offset: {
          type: 'integer',
          minimum: 0,
          description:
            'How many lines (or characters) to skip; the truncated result gives the value to continue from. (default: 0)',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          description: 'How many lines (max 1000) or characters (max 8000) to return. (default: the max)',
        },
        unit: {
          type: 'string',
          enum: ['lines', 'chars'],
          description: 'What offset and limit count. (default: lines)',
        },
      },
      required: ['path'],
    },
  },
  alwaysAsk: false,
  async run(args, ctx) {
    try {
      return await readOutput(args ?? {}, ctx);
    } catch (err) {
      return fail(`ReadOutput failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  },
};
