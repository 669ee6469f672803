import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { applyEdits, type Node } from 'jsonc-parser';
import { McpConfigError } from './errors';
import { type ConfigFileStat, type ConfigFs, errnoCode, isPermissionCode, nodeConfigFs } from './fs';
import { insertProperty, layoutOf, removeProperty, replacePropertyValue } from './jsonc-edit';
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
      `${file} is not valid JSON (${doc.error.message}); it was not changed. Fix the syntax first.`,
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
  const code = errnoCode(err);
  if (isPermissionCode(code)) {
    return new McpConfigError(
      'CONFIG_PERMISSION',
      `Cannot ${doing} ${file} (${code}: permission denied); it was not changed. Check the permissions of the file and its directory.`,
      { file, cause: err },
    );
  }
  const what = code ?? (err instanceof Error ? err.message : String(err));
  return new McpConfigError('CONFIG_IO', `Cannot ${doing} ${file} (${what}); it was not changed.`, {
    file,
    cause: err,
  });
}

async function targetOf(fs: ConfigFs, file: string): Promise<string> {
  const absolute = resolve(file);
  try {
    return await fs.realpath(absolute);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return absolute;
    throw ioError(err, absolute, 'read');
  }
}

/** Read the file; `undefined` when it does not exist. */
async function readCurrent(
  fs: ConfigFs,
  file: string,
): Promise<{ text: string; stat: ConfigFileStat } | undefined> {
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
    return { text: await fs.readFile(file), stat };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw ioError(err, file, 'read');
  }
}

async function sameContent(fs: ConfigFs, file: string, expected: string | undefined): Promise<boolean> {
  try {
    return (await fs.readFile(file)) === expected;
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
  before: { text: string; stat: ConfigFileStat } | undefined,
  newMode: number,
): Promise<boolean> {
  const dir = dirname(file);
  if (!before) {
    try {
      await fs.mkdir(dir);
    } catch (err) {
      throw ioError(err, file, 'create the directory of');
    }
  }
  if (before) {
    // A read-only file stays read-only, even though a rename could replace it.
    try {
      await fs.checkWritable(file);
    } catch (err) {
      throw ioError(err, file, 'write');
    }
  }
  const mode = before ? before.stat.mode & 0o7777 : newMode;
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let written = false;
  try {
    await fs.writeNewFile(temp, text, mode);
    written = true;
    await fs.chmod(temp, mode);
    if (before && process.getuid?.() === 0) {
      await fs.chown(temp, before.stat.uid, before.stat.gid).catch(() => undefined);
    }
    if (!(await sameContent(fs, file, before?.text))) {
      await fs.unlink(temp).catch(() => undefined);
      return false;
    }
    await fs.rename(temp, file);
    return true;
  } catch (err) {
    if (written) await fs.unlink(temp).catch(() => undefined);
    throw ioError(err, file, 'write');
  }
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

/**
 * Add (or, with `overwrite`, replace) server `name` in a `.mcp.json`-format
 * file. Validates first (`SERVER_INVALID`, `TRANSPORT_UNKNOWN`), keeps the
 * file's comments and formatting, creates the file (and its directory, and
 * `mcpServers`) when absent, writes atomically keeping the file's mode.
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
  const target = await targetOf(fs, file);
  for (let attempt = 0; attempt < MAX_EDIT_ATTEMPTS; attempt++) {
    const before = await readCurrent(fs, target);
    const edit = addServerToText(before?.text, name, value, {
      ...(options.overwrite !== undefined ? { overwrite: options.overwrite } : {}),
      file: target,
    });
    if (await replaceAtomically(fs, target, edit.text, before, source === 'user' ? 0o600 : 0o644)) {
      return {
        file: target,
        created: before === undefined,
        replaced: edit.replaced,
        issues,
      };
    }
  }
  throw new McpConfigError(
    'CONFIG_CONFLICT',
    `${target} kept changing while server "${name}" was being added (another program is writing it); nothing was written. Try again.`,
    { file: target, server: name },
  );
}

/**
 * Remove server `name` from a `.mcp.json`-format file, keeping the rest of
 * the file's text. Throws `CONFIG_NOT_FOUND` (no file), `SERVER_NOT_FOUND`,
 * `CONFIG_MALFORMED`, `CONFIG_PERMISSION`, `CONFIG_IO`; every failure leaves
 * the file byte-identical. Any name present in the file can be removed, even
 * one that is not a valid server name (to clean up).
 */
export async function removeServer(
  file: string,
  name: string,
  options: EditOptions = {},
): Promise<RemoveServerResult> {
  const fs = options.fs ?? nodeConfigFs;
  const target = await targetOf(fs, file);
  for (let attempt = 0; attempt < MAX_EDIT_ATTEMPTS; attempt++) {
    const before = await readCurrent(fs, target);
    if (!before) {
      throw new McpConfigError(
        'CONFIG_NOT_FOUND',
        `${target} does not exist, so there is no server "${name}" to remove; nothing was changed.`,
        { file: target, server: name },
      );
    }
    const edit = removeServerFromText(before.text, name, target);
    if (await replaceAtomically(fs, target, edit.text, before, 0o644)) {
      return { file: target, removed: edit.removed };
    }
  }
  throw new McpConfigError(
    'CONFIG_CONFLICT',
    `${target} kept changing while server "${name}" was being removed (another program is writing it); nothing was written. Try again.`,
    { file: target, server: name },
  );
}
