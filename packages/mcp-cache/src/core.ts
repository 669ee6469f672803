/**
 * The pure core: cache file content <-> snapshots, and the merge a write
 * performs. No I/O, no clock: `now` is passed in.
 */
import type { CachedTool, ToolSnapshot, ToolSnapshotInput } from './types';

/** The `version` this package reads and writes. Any other version reads as empty. */
export const CACHE_FORMAT_VERSION = 1;
/** File name inside the wave home. */
export const CACHE_FILE_NAME = 'mcp-tools-cache.json';
/** Default age after which an entry is dropped (7 days). */
export const DEFAULT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Result of {@link parseCacheText}. */
export interface ParsedCache {
  /** Valid entries, one per (workdir, server). Empty when `problem` is set. */
  entries: ToolSnapshot[];
  /** Why the whole file was rejected (read as empty), if it was. */
  problem?: string;
  /** Why individual entries were ignored, one line each. */
  dropped: string[];
}

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';
const isOptionalObject = (value: unknown): boolean => value === undefined || isPlainObject(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** Why `tool` is not a valid cached tool, or undefined when it is. */
function toolProblem(tool: unknown): string | undefined {
  if (!isPlainObject(tool)) return 'is not an object';
  if (!isNonEmptyString(tool.name)) return 'has no name (a non-empty string)';
  if (!isOptionalString(tool.title)) return `"${tool.name}" has a title that is not a string`;
  if (!isOptionalString(tool.description)) return `"${tool.name}" has a description that is not a string`;
  if (!isOptionalObject(tool.inputSchema)) return `"${tool.name}" has an inputSchema that is not an object`;
  if (!isOptionalObject(tool.annotations)) return `"${tool.name}" has annotations that are not an object`;
  return undefined;
}

/**
 * Why `raw` is not a valid snapshot (with a `workdir` when `withWorkdir`), or
 * undefined when it is. Shared by the file reader and the write validator.
 */
export function snapshotProblem(raw: unknown, withWorkdir: boolean): string | undefined {
  if (!isPlainObject(raw)) return 'is not an object';
  if (withWorkdir && !isNonEmptyString(raw.workdir)) return 'has no workdir (a non-empty string)';
  if (!isNonEmptyString(raw.server)) return 'has no server name (a non-empty string)';
  if (!isNonEmptyString(raw.fingerprint))
    return `(server "${raw.server}") has no fingerprint (a non-empty string)`;
  if (!Array.isArray(raw.tools)) return `(server "${raw.server}") has tools that are not a list`;
  for (const [i, tool] of raw.tools.entries()) {
    const problem = toolProblem(tool);
    if (problem) return `(server "${raw.server}") tool ${i} ${problem}`;
  }
  if (!isOptionalString(raw.instructions))
    return `(server "${raw.server}") has instructions that are not a string`;
  if (typeof raw.lastConnectedAt !== 'number' || !Number.isFinite(raw.lastConnectedAt)) {
    return `(server "${raw.server}") has no lastConnectedAt (epoch milliseconds)`;
  }
  return undefined;
}

function pickTool(tool: Plain): CachedTool {
  const out: CachedTool = { name: tool.name as string };
  if (tool.title !== undefined) out.title = tool.title as string;
  if (tool.description !== undefined) out.description = tool.description as string;
  if (tool.inputSchema !== undefined) out.inputSchema = tool.inputSchema as object;
  if (tool.annotations !== undefined) out.annotations = tool.annotations as object;
  return out;
}

/** Copies only the known fields of an already validated snapshot (unknown fields are dropped). */
export function pickSnapshot(validated: object): ToolSnapshotInput {
  const raw = validated as Plain;
  const out: ToolSnapshotInput = {
    server: raw.server as string,
    fingerprint: raw.fingerprint as string,
    tools: (raw.tools as Plain[]).map(pickTool),
    lastConnectedAt: raw.lastConnectedAt as number,
  };
  if (raw.instructions !== undefined) out.instructions = raw.instructions as string;
  return out;
}

/**
 * Validates and copies a caller's entry into exactly what the file will hold
 * (a JSON round trip: no shared references with the caller, no `undefined`).
 * Returns the problem as a string instead when the entry is malformed.
 */
export function normalizeInput(raw: unknown): ToolSnapshotInput | string {
  const problem = snapshotProblem(raw, false);
  if (problem) return problem;
  try {
    return JSON.parse(JSON.stringify(pickSnapshot(raw as object))) as ToolSnapshotInput;
  } catch (error) {
    return `is not JSON-serializable (${(error as Error).message})`;
  }
}

/** `(workdir, server)` identity of an entry. */
export const entryKey = (workdir: string, server: string): string => JSON.stringify([workdir, server]);

/** The fields of an entry that writes and lookups need without parsing its tools. */
export interface EntryHeader {
  workdir: string;
  server: string;
  lastConnectedAt: number;
}

/**
 * One entry of the file. Only its header is known up front; `raw` (its line,
 * in our layout) is parsed when the entry is needed ({@link checkRecord}) and
 * written back verbatim when the file is rewritten. Parsed snapshots are not
 * kept: each read parses the few lines it needs, so memory stays at the file
 * text plus headers.
 */
export interface CacheRecord extends EntryHeader {
  raw: string;
  /** `true` once the line was parsed and found valid, `false` once found malformed; unset until checked. */
  valid?: boolean;
  /** Why the entry is malformed, when `valid` is false. */
  invalid?: string;
}

/**
 * Deepest nesting of arrays and objects the cache parses. A tool's input
 * schema nests a few dozen levels at most; deeper input is hostile or
 * corrupt (`[` repeated makes `JSON.parse` take minutes and gigabytes).
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether JSON text nests arrays and objects deeper than `max`, checked by a
 * linear scan that skips strings, before anything parses it. Pure.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // skip the string, honouring backslash escapes
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Result of {@link parseCacheFile}. */
export interface ParsedRecords {
  /** One record per (workdir, server); not yet validated beyond their header. Empty when `problem` is set. */
  records: CacheRecord[];
  /** Why the whole file was rejected (read as empty), if it was. */
  problem?: string;
  /** Why individual entries were ignored, one line each. */
  dropped: string[];
}

const HEAD = `{"version":${CACHE_FORMAT_VERSION},"entries":[\n`;
const TAIL = '\n]}';

/** Reads a JSON string starting at `line[i]` (a `"`). Returns the value and the index after it. */
function scanString(line: string, i: number): [string, number] | undefined {
  if (line.charCodeAt(i) !== 0x22) return undefined;
  for (let j = i + 1; j < line.length; j++) {
    const c = line.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) {
      try {
        return [JSON.parse(line.slice(i, j + 1)) as string, j + 1];
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Reads the header of a line in our layout, `{"workdir":"..","server":"..","lastConnectedAt":N,...`,
 * without parsing the rest. Undefined when the line does not start that way.
 */
export function scanHeader(line: string): EntryHeader | undefined {
  const expect = (literal: string, i: number): number | undefined =>
    line.startsWith(literal, i) ? i + literal.length : undefined;
  let i = expect('{"workdir":', 0);
  const workdir = i === undefined ? undefined : scanString(line, i);
  i = workdir && expect(',"server":', workdir[1]);
  const server = i === undefined ? undefined : scanString(line, i);
  i = server && expect(',"lastConnectedAt":', server[1]);
  if (!workdir || !server || i === undefined) return undefined;
  NUMBER.lastIndex = i;
  const number = NUMBER.exec(line);
  const after = line.charCodeAt(i + (number?.[0].length ?? 0));
  if (!number || (after !== 0x2c && after !== 0x7d)) return undefined;
  return { workdir: workdir[0], server: server[0], lastConnectedAt: Number(number[0]) };
}

/** The stored form of a snapshot: header fields first (see {@link scanHeader}), tools last. */
export function serializeEntry(s: ToolSnapshot): string {
  const ordered: Record<string, unknown> = {
    workdir: s.workdir,
    server: s.server,
    lastConnectedAt: s.lastConnectedAt,
    fingerprint: s.fingerprint,
  };
  if (s.instructions !== undefined) ordered.instructions = s.instructions;
  ordered.tools = s.tools;
  return JSON.stringify(ordered);
}

/** A record for a validated snapshot (one being written, or parsed from a foreign layout). */
export function recordOf(snapshot: ToolSnapshot): CacheRecord {
  return {
    workdir: snapshot.workdir,
    server: snapshot.server,
    lastConnectedAt: snapshot.lastConnectedAt,
    raw: serializeEntry(snapshot),
    valid: true,
  };
}

/** Validates a parsed entry; the snapshot (known fields only) or the problem. */
function toSnapshot(raw: unknown): ToolSnapshot | string {
  const problem = snapshotProblem(raw, true);
  if (problem) return problem;
  return { workdir: (raw as Plain).workdir as string, ...pickSnapshot(raw as object) };
}

/**
 * Parses a record's line into a fresh snapshot (a new object on every call:
 * callers may keep or mutate it), and records on `record` whether it is
 * valid. Returns undefined when the entry is malformed (`record.invalid` says why).
 */
export function checkRecord(record: CacheRecord): ToolSnapshot | undefined {
  if (record.valid === false) return undefined;
  let value: unknown;
  if (nestedDeeperThan(record.raw, MAX_JSON_DEPTH)) {
    record.valid = false;
    record.invalid = `is nested deeper than ${MAX_JSON_DEPTH} levels`;
    return undefined;
  }
  try {
    value = JSON.parse(record.raw);
  } catch (error) {
    record.valid = false;
    record.invalid = `is not valid JSON (${(error as Error).message})`;
    return undefined;
  }
  const result = toSnapshot(value);
  if (typeof result === 'string') {
    record.valid = false;
    record.invalid = result;
    return undefined;
  }
  if (
    result.workdir !== record.workdir ||
    result.server !== record.server ||
    result.lastConnectedAt !== record.lastConnectedAt
  ) {
    record.valid = false;
    record.invalid = `(server "${record.server}") repeats a header key with a different value`;
    return undefined;
  }
  record.valid = true;
  return result;
}

/** Keeps one record per (workdir, server): the newest `lastConnectedAt`, the later one on a tie. */
function dedupe(records: CacheRecord[]): CacheRecord[] {
  const byKey = new Map<string, CacheRecord>();
  for (const record of records) {
    const key = entryKey(record.workdir, record.server);
    const previous = byKey.get(key);
    if (previous === undefined || record.lastConnectedAt >= previous.lastConnectedAt) byKey.set(key, record);
  }
  return byKey.size === records.length ? records : [...byKey.values()];
}

/**
 * Parses the cache file's bytes into records. Never throws.
 *
 * Fast path (files this package wrote: one entry per line): each line's
 * header is scanned and the rest is parsed only when needed; a line equal to
 * one of `previous` (keyed by line: the last version this process read)
 * keeps that record's validity, so it is not parsed again. Any other layout
 * is parsed in full.
 * Anything that is not a version-1 cache comes back as no records plus a
 * `problem`; malformed entries are dropped one by one.
 */
export function parseCacheFile(
  data: string | Uint8Array,
  previous?: ReadonlyMap<string, CacheRecord>,
): ParsedRecords {
  const rejected = (problem: string): ParsedRecords => ({ records: [], problem, dropped: [] });
  let text: string;
  if (typeof data === 'string') {
    text = data;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      return rejected('it is not UTF-8 text (binary data?)');
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);

  const end = text.trimEnd();
  if (text.startsWith(HEAD) && end.endsWith(TAIL) && end.length >= HEAD.length + TAIL.length - 1) {
    const records: CacheRecord[] = [];
    const dropped: string[] = [];
    const body = end.slice(HEAD.length, end.length - TAIL.length);
    for (const [i, line] of (body === '' ? [] : body.split(',\n')).entries()) {
      const known = previous?.get(line);
      if (known) {
        // copy with this text's line, so the previous file text can be freed
        records.push({ ...known, raw: line });
        continue;
      }
      const header = scanHeader(line);
      if (header) {
        records.push({ ...header, raw: line });
        continue;
      }
      // not in our layout: parse this line now
      let value: unknown;
      if (nestedDeeperThan(line, MAX_JSON_DEPTH)) {
        dropped.push(`entry ${i} is nested deeper than ${MAX_JSON_DEPTH} levels`);
        continue;
      }
      try {
        value = JSON.parse(line);
      } catch (error) {
        dropped.push(`entry ${i} is not valid JSON (${(error as Error).message})`);
        continue;
      }
      const result = toSnapshot(value);
      if (typeof result === 'string') dropped.push(`entry ${i} ${result}`);
      else records.push(recordOf(result));
    }
    return { records: dedupe(records), dropped };
  }

  if (text.trim() === '') return rejected('it is empty');
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    return rejected(`it is nested deeper than ${MAX_JSON_DEPTH} levels (not a tool cache)`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return rejected(`it is not valid JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(doc)) return rejected('its top level is not an object');
  if (doc.version !== CACHE_FORMAT_VERSION) {
    return rejected(`its version ${JSON.stringify(doc.version)} is not ${CACHE_FORMAT_VERSION}`);
  }
  if (!Array.isArray(doc.entries)) return rejected('its "entries" is not a list');
  const records: CacheRecord[] = [];
  const dropped: string[] = [];
  for (const [i, raw] of doc.entries.entries()) {
    const result = toSnapshot(raw);
    if (typeof result === 'string') dropped.push(`entry ${i} ${result}`);
    else records.push(recordOf(result));
  }
  return { records: dedupe(records), dropped };
}

/**
 * Parses and validates the whole file at once (every entry). Never throws.
 * The cache itself uses the lazy {@link parseCacheFile}; this is the same
 * parser, fully evaluated, for tools and tests.
 */
export function parseCacheText(data: string | Uint8Array): ParsedCache {
  const parsed = parseCacheFile(data);
  if (parsed.problem) return { entries: [], problem: parsed.problem, dropped: [] };
  const entries: ToolSnapshot[] = [];
  const dropped = [...parsed.dropped];
  for (const record of parsed.records) {
    const snapshot = checkRecord(record);
    if (snapshot) entries.push(snapshot);
    else
      dropped.push(`entry (workdir "${record.workdir}", server "${record.server}") ${record.invalid ?? ''}`);
  }
  return { entries, dropped };
}

/** Whether an entry is past its time to live. `ttlMs = Infinity` keeps everything. */
export function isExpired(
  snapshot: Pick<ToolSnapshot, 'lastConnectedAt'>,
  now: number,
  ttlMs: number,
): boolean {
  return now - snapshot.lastConnectedAt > ttlMs;
}

/** What one `write()` asks for. */
export interface WritePlan {
  workdir: string;
  configuredNames: readonly string[];
  now: number;
  ttlMs: number;
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Deterministic order: by workdir, then server (code-unit order, not locale). */
export function compareSnapshots(a: EntryHeader, b: EntryHeader): number {
  return compareStrings(a.workdir, b.workdir) || compareStrings(a.server, b.server);
}

/**
 * The merge a write performs on the freshly re-read file (`written` all
 * belong to `plan.workdir`):
 * - the written entries replace this workdir's entries for those servers
 *   (an empty tool list replaces too); a server written twice: the last wins;
 * - this workdir's other entries survive only if their server is in
 *   `configuredNames` (the written servers count as configured);
 * - other workdirs' entries are kept as they are;
 * - every entry older than `ttlMs` (any workdir) is dropped.
 * Works on headers only, so it serves both snapshots and lazy records.
 */
export function mergeEntries<T extends EntryHeader>(
  existing: readonly T[],
  written: readonly T[],
  plan: WritePlan,
): T[] {
  const byServer = new Map<string, T>();
  for (const entry of written) byServer.set(entry.server, entry);
  const configured = new Set(plan.configuredNames);
  const kept = existing.filter(
    (e) => e.workdir !== plan.workdir || (configured.has(e.server) && !byServer.has(e.server)),
  );
  return [...kept, ...byServer.values()]
    .filter((e) => !isExpired(e, plan.now, plan.ttlMs))
    .sort(compareSnapshots);
}

/** {@link mergeEntries} for plain snapshots: `entries` are the caller's (normalized) inputs for `plan.workdir`. */
export function mergeSnapshots(
  existing: readonly ToolSnapshot[],
  plan: WritePlan & { entries: readonly ToolSnapshotInput[] },
): ToolSnapshot[] {
  const written = plan.entries.map((e): ToolSnapshot => ({ workdir: plan.workdir, ...e }));
  return mergeEntries(existing, written, plan);
}

/**
 * The file text: compact JSON, one entry per line (header fields first, so a
 * reader can find a workdir's entries without parsing every tool), ending
 * with a newline. Records are written from their `raw` line when they have one.
 */
export function serializeRecords(records: readonly (CacheRecord | ToolSnapshot)[]): string {
  if (records.length === 0) return `{"version":${CACHE_FORMAT_VERSION},"entries":[]}\n`;
  const lines = records.map((r) => ('raw' in r ? r.raw : serializeEntry(r)));
  return `${HEAD}${lines.join(',\n')}${TAIL}\n`;
}

/** {@link serializeRecords} for plain snapshots. */
export function serializeCache(entries: readonly ToolSnapshot[]): string {
  return serializeRecords(entries);
}

/** Records grouped by workdir, then by server. */
export type RecordIndex = ReadonlyMap<string, ReadonlyMap<string, CacheRecord>>;

/** Builds the lookup used by `get`/`list`. */
export function indexRecords(records: readonly CacheRecord[]): RecordIndex {
  const index = new Map<string, Map<string, CacheRecord>>();
  for (const record of records) {
    let servers = index.get(record.workdir);
    if (!servers) {
      servers = new Map();
      index.set(record.workdir, servers);
    }
    servers.set(record.server, record);
  }
  return index;
}
