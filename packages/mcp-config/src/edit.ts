import { basename, dirname, resolve } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { applyEdits, type Node } from 'jsonc-parser';
import { writeFileAtomic } from './atomic-write';
import { McpConfigError } from './errors';
import { type ConfigFileStat, type ConfigFs, errnoCode, isPermissionCode, nodeConfigFs } from './fs';
import { serverIdentity } from './identity';
import { insertProperty, layoutOf, removeProperty, replacePropertyValue } from './jsonc-edit';
import { MAX_CONFIG_FILE_BYTES } from './limits';
import { acquireConfigLock, type ConfigLock, ConfigLockTimeout } from './lock';
import { detectFormatting, nodeValue, parseJsoncDocument, propertyNode } from './parse';
import { PROJECT_CONFIG_FILE } from './paths';
import type { ConfigIssue } from './types';
import { makeIssue, validateServer } from './validate';

const BOM = '\uFEFF';
/** How often an edit is redone when the file changes under it before giving up (`CONFIG_CONFLICT`). */
const MAX_EDIT_ATTEMPTS = 3;

/** Options shared by {@link addServer} and {@link removeServer}. */
export interface EditOptions {
  /** File-system adapter (tests inject failures). @default nodeConfigFs */
  fs?: ConfigFs;
  /**
   * Which source the file is (validation messages, and the mode of a new
   * file: 0600 for user, 0644 for project).
   * @default 'project' when the file is named `.mcp.json`, else 'user'
   */
  source?: 'project' | 'user';
  /**
   * Longest wait for another edit of the same file (this process or another)
   * to finish; then the edit fails with `CONFIG_CONFLICT`.
   * @default 10000
   */
  lockTimeoutMs?: number;
  /**
   * A lock file older than this (or dated this far in the future) is taken
   * to be abandoned and removed; so is one whose owner process (same host)
   * is gone.
   * @default 30000
   */
  lockStaleMs?: number;
}

/** Options of {@link addServer}. */
export interface AddServerOptions extends EditOptions {
  /** Replace a server of the same name instead of failing with `SERVER_EXISTS`. @default false */
  overwrite?: boolean;
}

/** What {@link addServer} did. */
export interface AddServerResult {
  /** The file written (symlinks resolved: the link is kept, its target is replaced). */
  file: string;
  /** True when the file did not exist and was created. */
  created: boolean;
  /** True when a server of that name was replaced (`overwrite`). */
  replaced: boolean;
  /** Warnings about the definition (unknown keys...); it was written anyway. */
  issues: ConfigIssue[];
}

/** What {@link removeServer} did. */
export interface RemoveServerResult {
  file: string;
  /** The removed entry as it was written. */
  removed: unknown;
}

/** Result of the pure {@link addServerToText}. */
export interface TextEdit {
  text: string;
  replaced: boolean;
}

function sourceOf(file: string, options: EditOptions): 'project' | 'user' {
  return options.source ?? (basename(file) === PROJECT_CONFIG_FILE ? 'project' : 'user');
}

interface ParsedForEdit {
  bom: string;
  body: string;
  root?: Node;
  servers?: Node;
}

function parseForEdit(text: string, file: string): ParsedForEdit {
  const bom = text.startsWith(BOM) ? BOM : '';
  const body = text.slice(bom.length);
  const doc = parseJsoncDocument(body);
  if (doc.error) {
    throw new McpConfigError(
      'CONFIG_MALFORMED',
      `${file} is not valid JSON: ${doc.error.message}; it was not changed. Fix the syntax first.`,
      { file },
    );
  }
  if (!doc.root) return { bom, body };
  if (doc.root.type !== 'object') {
    throw new McpConfigError(
      'CONFIG_MALFORMED',
      `${file} must contain an object like {"mcpServers": {...}}; it was not changed.`,
      { file },
    );
  }
  const servers = propertyNode(doc.root, 'mcpServers');
  if (servers && servers.type !== 'object') {
    throw new McpConfigError(
      'CONFIG_MALFORMED',
      `${file}: "mcpServers" is not an object of name -> server; it was not changed. Fix it by hand first.`,
      { file },
    );
  }
  return servers ? { bom, body, root: doc.root, servers } : { bom, body, root: doc.root };
}

function serverProps(body: string, name: string): Node[] {
  const root = parseJsoncDocument(body).root;
  const servers = root?.type === 'object' ? propertyNode(root, 'mcpServers') : undefined;
  return (servers?.children ?? []).filter((p) => p.children?.[0]?.value === name);
}

function serversMap(body: string): Map<string, string> | undefined {
  const doc = parseJsoncDocument(body);
  if (doc.error) return undefined;
  const out = new Map<string, string>();
  if (!doc.root) return out;
  if (doc.root.type !== 'object') return undefined;
  for (const prop of doc.root.children ?? []) {
    const [k, v] = prop.children ?? [];
    if (typeof k?.value !== 'string') continue;
    if (k.value === 'mcpServers' && v?.type === 'object') {
      for (const server of v.children ?? []) {
        const [sk, sv] = server.children ?? [];
        if (typeof sk?.value === 'string') out.set(`server:${sk.value}`, stableStringify(nodeValue(sv)));
      }
    } else {
      out.set(`top:${k.value}`, stableStringify(nodeValue(v)));
    }
  }
  return out;
}

function isStrictJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/**
 * Check an edit did exactly what it should: the result reads back, server
 * `name` is `expected` (or gone when `expected` is undefined), every other
 * server and top-level key is unchanged, and a strict JSON file stays strict
 * JSON. Anything else is a bug caught here instead of a damaged file.
 */
function verifyEdit(before: string, after: string, name: string, expected: unknown, file: string): void {
  const was = serversMap(before);
  const now = serversMap(after);
  const key = `server:${name}`;
  let ok = was !== undefined && now !== undefined;
  if (ok && was && now) {
    if (expected === undefined) ok = !now.has(key);
    else ok = now.get(key) === stableStringify(expected);
    for (const [k, v] of was) if (k !== key && k !== 'top:mcpServers' && now.get(k) !== v) ok = false;
    for (const k of now.keys()) if (k !== key && k !== 'top:mcpServers' && !was.has(k)) ok = false;
    if (isStrictJson(before) && !isStrictJson(after)) ok = false;
  }
  if (!ok) {
    throw new McpConfigError(
      'CONFIG_MALFORMED',
      `${file} could not be edited safely (the result did not read back as intended); it was not changed. Edit it by hand.`,
      { file, server: name },
    );
  }
}

/**
 * The text of a config file with server `name` set to `value`. Pure.
 * Only the new (or replaced) entry is written: comments, formatting and
 * every other byte stay; the entry is indented like the file (compact in a
 * one-line file). `undefined` or blank text gives a new document. Throws
 * `CONFIG_MALFORMED` (not JSONC, root or `mcpServers` not an object) or
 * `SERVER_EXISTS` (unless `overwrite`).
 */
export function addServerToText(
  text: string | undefined,
  name: string,
  value: unknown,
  options: { overwrite?: boolean; file?: string } = {},
): TextEdit {
  const file = options.file ?? 'the config file';
  const fresh = (eol: string) => {
    const servers: Record<string, unknown> = {};
    Object.defineProperty(servers, name, { value, enumerable: true });
    return JSON.stringify({ mcpServers: servers }, null, 2).split('\n').join(eol) + eol;
  };
  if (text === undefined) return { text: fresh('\n'), replaced: false };
  const parsed = parseForEdit(text, file);
  const body = parsed.body;
  const formatting = detectFormatting(body);
  const eol = formatting.eol ?? '\n';
  // Blank, or a bare {} : write a fresh, pretty document.
  if (body.trim() === '' || /^\s*\{\s*\}\s*$/.test(body))
    return { text: parsed.bom + fresh(eol), replaced: false };
  let next: string;
  let replaced = false;
  if (!parsed.root) {
    // comments only: keep them, the document follows
    next = body + (/\n$/.test(body) ? '' : eol) + fresh(eol);
  } else if (!parsed.servers) {
    const servers: Record<string, unknown> = {};
    Object.defineProperty(servers, name, { value, enumerable: true });
    next = applyEdits(
      body,
      insertProperty(body, parsed.root, 'mcpServers', servers, layoutOf(body, formatting)),
    );
  } else {
    const identity = serverIdentity(name);
    const twin = (parsed.servers.children ?? [])
      .map((p) => p.children?.[0]?.value)
      .find((n): n is string => typeof n === 'string' && n !== name && serverIdentity(n) === identity);
    if (twin !== undefined) {
      throw new McpConfigError(
        'NAME_CONFLICT',
        `Server "${name}" cannot be added to ${file}: server "${twin}" is already there, and both names give tools named mcp__${identity}__<tool>; it was not changed. Choose another name.`,
        { file, server: name },
      );
    }
    const existing = serverProps(body, name);
    if (existing.length > 0 && !options.overwrite) {
      throw new McpConfigError(
        'SERVER_EXISTS',
        `Server "${name}" already exists in ${file}; it was not changed. Remove it first, or replace it (overwrite).`,
        { file, server: name },
      );
    }
    if (existing.length > 0) {
      replaced = true;
      // Keep one definition (the last, which is the one that counts) and replace its value.
      let current = body;
      for (let n = existing.length; n > 1; n--) {
        const first = serverProps(current, name)[0];
        if (first) current = applyEdits(current, removeProperty(current, first));
      }
      const last = serverProps(current, name).at(-1);
      next = last
        ? applyEdits(current, replacePropertyValue(current, last, value, layoutOf(current, formatting)))
        : current;
    } else {
      next = applyEdits(body, insertProperty(body, parsed.servers, name, value, layoutOf(body, formatting)));
    }
  }
  verifyEdit(body, next, name, value, file);
  return { text: parsed.bom + next, replaced };
}

/**
 * The text of a config file without server `name` (every definition of it).
 * Pure. Only that entry's text goes (with the lines it had to itself);
 * comments and formatting elsewhere stay. Throws `CONFIG_MALFORMED` or
 * `SERVER_NOT_FOUND`.
 */
export function removeServerFromText(
  text: string,
  name: string,
  file = 'the config file',
): { text: string; removed: unknown } {
  const parsed = parseForEdit(text, file);
  const node = parsed.servers ? propertyNode(parsed.servers, name) : undefined;
  if (!node || !parsed.servers) {
    const names = (parsed.servers?.children ?? [])
      .map((p) => p.children?.[0]?.value)
      .filter((n): n is string => typeof n === 'string');
    throw new McpConfigError(
      'SERVER_NOT_FOUND',
      `There is no server "${name}" in ${file}${names.length ? ` (it has: ${names.join(', ')})` : ' (it has no servers)'}; nothing was changed.`,
      { file, server: name },
    );
  }
  const removed = nodeValue(node);
  let body = parsed.body;
  for (let n = serverProps(body, name).length; n > 0; n--) {
    const first = serverProps(body, name)[0];
    if (first) body = applyEdits(body, removeProperty(body, first));
  }
  verifyEdit(parsed.body, body, name, undefined, file);
  return { text: parsed.bom + body, removed };
}

function ioError(err: unknown, file: string, doing: string): McpConfigError {
  if (err instanceof McpConfigError) return err;
  if (err instanceof ConfigLockTimeout) {
    return new McpConfigError(
      'CONFIG_CONFLICT',
      `Cannot ${doing} ${file}: another program kept it locked (${err.reason}); it was not changed. Try again; if no other program is editing it, delete ${err.lockPath}.`,
      { file, cause: err },
    );
  }
  const code = errnoCode(err);
  if (isPermissionCode(code)) {
    return new McpConfigError(
      'CONFIG_PERMISSION',
      `Cannot ${doing} ${file} (${code}: permission denied); it was not changed. Check the permissions of the file and its directory.`,
      { file, cause: err },
    );
  }
  if (code === 'EILSEQ') {
    return new McpConfigError(
      'CONFIG_MALFORMED',
      `${file} is not UTF-8 text (it may be saved in another encoding, such as Windows-1252); it was not changed. Save it as UTF-8 first.`,
      { file, cause: err },
    );
  }
  if (code === 'EWAVENOTFILE') {
    return new McpConfigError(
      'CONFIG_IO',
      `${file} is not a regular file (a pipe, device or socket); it was not changed.`,
      { file, cause: err },
    );
  }
  if (code === 'EFBIG') {
    return new McpConfigError(
      'CONFIG_IO',
      `${file} is larger than ${MAX_CONFIG_FILE_BYTES} bytes, too large for a config file; it was not changed.`,
      { file, cause: err },
    );
  }
  const what = code ?? (err instanceof Error ? err.message : String(err));
  return new McpConfigError('CONFIG_IO', `Cannot ${doing} ${file} (${what}); it was not changed.`, {
    file,
    cause: err,
  });
}

/** Most symbolic links followed to find where a dangling link points (as the kernel's ELOOP limit). */
const MAX_LINK_HOPS = 40;

/**
 * The file an edit writes: symlinks resolved. A dangling link resolves to
 * the path it points to, so the edit creates that file and keeps the link.
 */
async function targetOf(fs: ConfigFs, file: string): Promise<string> {
  const absolute = resolve(file);
  try {
    return await fs.realpath(absolute);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw ioError(err, absolute, 'read');
  }
  let path = absolute;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    let link: string;
    try {
      link = await fs.readlink(path);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'EINVAL' || code === 'ENOENT' || code === 'ENOTDIR') return path;
      throw ioError(err, absolute, 'read');
    }
    path = resolve(dirname(path), link);
  }
  throw new McpConfigError('CONFIG_IO', `${absolute} is a loop of symbolic links; it was not changed.`, {
    file: absolute,
  });
}

type Current = { text: string; stat: ConfigFileStat } | undefined;

/** Read the file for an edit (regular file, UTF-8, size-capped); `undefined` when it does not exist. */
async function readCurrent(fs: ConfigFs, file: string): Promise<Current> {
  try {
    const stat = await fs.stat(file);
    if (stat.isDirectory()) {
      throw new McpConfigError(
        'CONFIG_IO',
        `${file} is a directory, not a config file; nothing was changed.`,
        {
          file,
        },
      );
    }
    return { text: await fs.readFile(file, READ_FOR_EDIT), stat };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw ioError(err, file, 'read');
  }
}

const READ_FOR_EDIT = { maxBytes: MAX_CONFIG_FILE_BYTES, strictUtf8: true } as const;

async function sameContent(fs: ConfigFs, file: string, expected: string | undefined): Promise<boolean> {
  try {
    return (await fs.readFile(file, READ_FOR_EDIT)) === expected;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return expected === undefined;
    throw ioError(err, file, 'read');
  }
}

/**
 * Replace `file` by `text` atomically: write a temp file in the same
 * directory (same mode, and owner when running as root), check the file did
 * not change since it was read, rename over it. On any failure the temp file
 * is removed and the original is untouched. Returns false when the file
 * changed under us (the caller redoes its edit).
 */
async function replaceAtomically(
  fs: ConfigFs,
  file: string,
  text: string,
  before: Current,
  newMode: number,
): Promise<boolean> {
  if (before) {
    // A read-only file stays read-only, even though a rename could replace it.
    try {
      await fs.checkWritable(file);
    } catch (err) {
      throw ioError(err, file, 'write');
    }
  }
  const mode = before ? before.stat.mode & 0o7777 : newMode;
  try {
    return await writeFileAtomic(fs, file, text, {
      mode,
      beforeRename: async (temp) => {
        await fs.chmod(temp, mode);
        if (before && process.getuid?.() === 0) {
          await fs.chown(temp, before.stat.uid, before.stat.gid).catch(() => undefined);
        }
        return sameContent(fs, file, before?.text);
      },
    });
  } catch (err) {
    throw ioError(err, file, 'write');
  }
}

/** Timing of the cross-process lock of an edit. */
interface LockTiming {
  timeoutMs: number;
  staleMs: number;
}

/**
 * Run one edit of `file` under its cross-process lock: resolve the target,
 * make sure its directory exists and is writable, take `<target>.lock`, then
 * read, compute and replace (redone when another writer that ignores the
 * lock, such as a text editor, changed the file in between).
 */
async function editUnderLock<R>(
  fs: ConfigFs,
  file: string,
  timing: LockTiming,
  what: string,
  compute: (before: Current, target: string) => { text: string; mode: number; result: R },
  create = true,
): Promise<R> {
  const target = await targetOf(fs, file);
  const dir = dirname(target);
  if (!create && (await readCurrent(fs, target)) === undefined) {
    // Nothing to edit: say so (compute throws) without creating a directory or a lock.
    return compute(undefined, target).result;
  }
  try {
    await fs.mkdir(dir);
  } catch (err) {
    throw ioError(err, target, 'create the directory of');
  }
  try {
    await fs.checkWritable(dir);
  } catch (err) {
    throw ioError(err, target, 'write');
  }
  let lock: ConfigLock;
  try {
    lock = await acquireConfigLock({
      fs,
      lockPath: `${target}.lock`,
      timeoutMs: timing.timeoutMs,
      staleMs: timing.staleMs,
    });
  } catch (err) {
    throw ioError(err, target, 'lock');
  }
  try {
    for (let attempt = 0; attempt < MAX_EDIT_ATTEMPTS; attempt++) {
      const before = await readCurrent(fs, target);
      const edit = compute(before, target);
      if (await replaceAtomically(fs, target, edit.text, before, edit.mode)) return edit.result;
    }
  } finally {
    await lock.release();
  }
  throw new McpConfigError(
    'CONFIG_CONFLICT',
    `${target} kept changing while ${what} (another program is writing it); nothing was written. Try again.`,
    { file: target },
  );
}

function cloneJson(value: unknown, file: string, name: string): unknown {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error('not JSON');
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new McpConfigError(
      'SERVER_INVALID',
      `Server "${name}" cannot be written to ${file}: its definition is not plain JSON data.`,
      { file, server: name, cause: err },
    );
  }
}

const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
const DEFAULT_LOCK_STALE_MS = 30_000;

function timingOf(options: EditOptions): LockTiming {
  return {
    timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
  };
}

/**
 * Add (or, with `overwrite`, replace) server `name` in a `.mcp.json`-format
 * file. Validates first (`SERVER_INVALID`, `TRANSPORT_UNKNOWN`), keeps the
 * file's comments and formatting, creates the file (and its directory, and
 * `mcpServers`) when absent, writes atomically keeping the file's mode.
 * Concurrent edits of one file (in this process or others) are serialized by
 * a lock file, so every edit that resolves is in the file.
 * Every failure is an {@link McpConfigError} and leaves the file byte-identical.
 */
export async function addServer(
  file: string,
  name: string,
  config: unknown,
  options: AddServerOptions = {},
): Promise<AddServerResult> {
  const fs = options.fs ?? nodeConfigFs;
  const source = sourceOf(file, options);
  const validation = validateServer(name, config, { source, file: resolve(file) });
  const errors = validation.issues.filter((i) => i.severity === 'error');
  if (validation.unknownType !== undefined) {
    throw new McpConfigError(
      'TRANSPORT_UNKNOWN',
      `Server "${name}" has unknown type ${JSON.stringify(validation.unknownType)}; use "stdio", "http" or "sse". ${resolve(file)} was not changed.`,
      { file: resolve(file), server: name, issues: validation.issues },
    );
  }
  if (errors.length > 0) {
    throw new McpConfigError(
      'SERVER_INVALID',
      `Server "${name}" is not valid; ${resolve(file)} was not changed:\n${errors.map((e) => `- ${e.message}`).join('\n')}`,
      { file: resolve(file), server: name, issues: validation.issues },
    );
  }
  const issues = [...validation.issues];
  if (source === 'project' && validation.config.approveTools) {
    issues.push(
      makeIssue(
        { source, file: resolve(file) },
        'warning',
        'APPROVALS_NOT_TRUSTED',
        `Server "${name}": "approveTools" in a project file is not applied (only shown as a request in approval prompts); put it in the user file to apply it.`,
        { server: name, field: 'approveTools' },
      ),
    );
  }
  const value = cloneJson(config, resolve(file), name);
  try {
    return await editUnderLock(
      fs,
      file,
      timingOf(options),
      `server "${name}" was being added`,
      (before, target) => {
        const edit = addServerToText(before?.text, name, value, {
          ...(options.overwrite !== undefined ? { overwrite: options.overwrite } : {}),
          file: target,
        });
        return {
          text: edit.text,
          mode: source === 'user' ? 0o600 : 0o644,
          result: { file: target, created: before === undefined, replaced: edit.replaced, issues },
        };
      },
    );
  } catch (err) {
    throw withServer(err, name);
  }
}

function withServer(err: unknown, name: string): unknown {
  if (err instanceof McpConfigError && err.server === undefined) {
    return new McpConfigError(err.code, err.message, {
      ...(err.file !== undefined ? { file: err.file } : {}),
      server: name,
      issues: err.issues,
      ...(err.cause !== undefined ? { cause: err.cause } : {}),
    });
  }
  return err;
}

/**
 * Remove server `name` from a `.mcp.json`-format file, keeping the rest of
 * the file's text. Throws `CONFIG_NOT_FOUND` (no file), `SERVER_NOT_FOUND`,
 * `CONFIG_MALFORMED`, `CONFIG_PERMISSION`, `CONFIG_IO`, `CONFIG_CONFLICT`;
 * every failure leaves the file byte-identical. Any name present in the file
 * can be removed, even one that is not a valid server name (to clean up).
 * Serialized with other edits of the file like {@link addServer}.
 */
export async function removeServer(
  file: string,
  name: string,
  options: EditOptions = {},
): Promise<RemoveServerResult> {
  const fs = options.fs ?? nodeConfigFs;
  try {
    return await editUnderLock(
      fs,
      file,
      timingOf(options),
      `server "${name}" was being removed`,
      (before, target) => {
        if (!before) {
          throw new McpConfigError(
            'CONFIG_NOT_FOUND',
            `${target} does not exist, so there is no server "${name}" to remove; nothing was changed.`,
            { file: target, server: name },
          );
        }
        const edit = removeServerFromText(before.text, name, target);
        return { text: edit.text, mode: 0o644, result: { file: target, removed: edit.removed } };
      },
      false,
    );
  } catch (err) {
    throw withServer(err, name);
  }
}

/** Edits of config files, queued one after another per file (see {@link createConfigEditor}). */
export interface ConfigEditor {
  addServer(
    file: string,
    name: string,
    config: unknown,
    options?: AddServerOptions,
  ): Promise<AddServerResult>;
  removeServer(file: string, name: string, options?: EditOptions): Promise<RemoveServerResult>;
}

/**
 * An editor that runs its edits of one file one after another (a promise
 * queue per file), each under the file's cross-process lock. The plain
 * {@link addServer} / {@link removeServer} are already safe together (the
 * lock file serializes them, in one process as across processes); an editor
 * shared by the call sites of a host (CLI, settings page, agent tool) also
 * keeps them in call order and spares them polling the lock. Holds no
 * timers; a queue is dropped once it is empty.
 *
 * @param defaults options applied to every edit (per-call options win)
 */
export function createConfigEditor(defaults: EditOptions = {}): ConfigEditor {
  const queues = new Map<string, Promise<unknown>>();
  const enqueue = <T>(file: string, run: () => Promise<T>): Promise<T> => {
    const key = resolve(file);
    const previous = queues.get(key) ?? Promise.resolve();
    const next = previous.then(run, run);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };
  return {
    addServer: (file, name, config, options = {}) =>
      enqueue(file, () => addServer(file, name, config, { ...defaults, ...options })),
    removeServer: (file, name, options = {}) =>
      enqueue(file, () => removeServer(file, name, { ...defaults, ...options })),
  };
}
