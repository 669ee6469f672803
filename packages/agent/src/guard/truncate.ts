/**
 * The pure half of the output guard: where a long text is cut, what the
 * model is told about it, and how a large structured result is summarized.
 * No I/O here; `output-guard.ts` does the file writing.
 */

/** Limits of the output guard. */
export interface OutputLimits {
  /** Text longer than this (UTF-8 bytes) is cut and spilled to a file. @default 8192 */
  maxTextBytes: number;
  /** Text with more lines than this is cut and spilled to a file. @default 1000 */
  maxTextLines: number;
  /** Structured content whose JSON is larger than this (bytes) is summarized. @default 16384 */
  maxStructuredBytes: number;
  /** A summary previews this many blocks of each large array. @default 20 */
  previewBlocks: number;
  /** Each preview shows at most this many bytes of the block's JSON. @default 200 */
  previewBytes: number;
  /**
   * A summary keeps small fields whole, in order, while their JSON fits in
   * this many bytes in total; the other fields are summarized. @default 4096
   */
  smallFieldBytes: number;
  /** Images sent to the model as image blocks in one turn; later ones are saved to files. @default 8 */
  maxImagesPerTurn: number;
  /** An image larger than this (decoded bytes) is saved to a file instead of sent. @default 5242880 (5 MiB) */
  maxImageBytes: number;
}

/** The defaults of {@link OutputLimits}. */
export const DEFAULT_OUTPUT_LIMITS: Readonly<OutputLimits> = Object.freeze({
  maxTextBytes: 8192,
  maxTextLines: 1000,
  maxStructuredBytes: 16384,
  previewBlocks: 20,
  previewBytes: 200,
  smallFieldBytes: 4096,
  maxImagesPerTurn: 8,
  maxImageBytes: 5 * 1024 * 1024,
});

/** What {@link truncateText} kept. */
export interface Truncation {
  /** The kept head of the text (the whole text when not truncated). */
  text: string;
  truncated: boolean;
  totalBytes: number;
  totalLines: number;
  /** UTF-8 bytes of `text`. */
  keptBytes: number;
  /** Complete lines in `text`. */
  keptLines: number;
  /** Characters (UTF-16 code units) of `text`: the `chars` offset to continue from. */
  keptChars: number;
  /** True when the cut is at a line start, so paging on by lines loses nothing. */
  onLineBoundary: boolean;
}

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Lines in `text`: newline count, plus one for a last line without a newline. Pure. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/**
 * The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, ending at a
 * code point boundary. Returns its length in characters. Pure.
 */
export function prefixWithinBytes(text: string, maxBytes: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i) as number;
    const size = utf8Length(cp);
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/**
 * Cut `text` to at most `maxBytes` UTF-8 bytes and `maxLines` lines. When a
 * cut is needed it is made after the last complete line that fits; a single
 * line longer than the byte limit is cut inside (at a code point). Pure.
 */
export function truncateText(text: string, limits: { maxBytes: number; maxLines: number }): Truncation {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  const totalLines = countLines(text);
  if (totalBytes <= limits.maxBytes && totalLines <= limits.maxLines) {
    return {
      text,
      truncated: false,
      totalBytes,
      totalLines,
      keptBytes: totalBytes,
      keptLines: totalLines,
      keptChars: text.length,
      onLineBoundary: true,
    };
  }
  let end = prefixWithinBytes(text, Math.max(0, limits.maxBytes));
  // at most maxLines complete lines
  let newlines = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
    newlines++;
    if (newlines === Math.max(0, limits.maxLines)) {
      end = i + 1;
      break;
    }
  }
  if (limits.maxLines <= 0) end = 0;
  // end on a line boundary when any complete line fits
  if (end > 0 && text[end - 1] !== '\n') {
    const lastNewline = text.lastIndexOf('\n', end - 1);
    if (lastNewline !== -1) end = lastNewline + 1;
  }
  const kept = text.slice(0, end);
  const keptLines = kept.split('\n').length - 1;
  return {
    text: kept,
    truncated: true,
    totalBytes,
    totalLines,
    keptBytes: Buffer.byteLength(kept, 'utf8'),
    keptLines,
    keptChars: kept.length,
    onLineBoundary: end === 0 || text[end - 1] === '\n',
  };
}

/** The name of the built-in tool that pages through spilled files. */
export const READ_OUTPUT_TOOL = 'ReadOutput';

/** How to continue reading a spilled file, as ReadOutput arguments. Pure. */
export function readOutputCall(
  path: string,
  t: Pick<Truncation, 'keptLines' | 'keptChars' | 'onLineBoundary'>,
): string {
  const args = t.onLineBoundary
    ? { path, offset: t.keptLines }
    : { path, unit: 'chars', offset: t.keptChars };
  return `${READ_OUTPUT_TOOL} ${JSON.stringify(args)}`;
}

/**
 * The note appended to a cut text: what was kept, where the full text is,
 * and the exact ReadOutput call that continues it. `spill` is the file path,
 * or `{ error }` when it could not be written. Pure.
 */
export function truncationNotice(t: Truncation, spill: string | { error: string }): string {
  const shown =
    t.keptLines > 0 || t.onLineBoundary
      ? `the first ${t.keptLines} of ${t.totalLines} lines`
      : `the first ${t.keptChars} characters of line 1 (of ${t.totalLines} lines)`;
  const head = `[Output truncated: showing ${shown} (${t.keptBytes} of ${t.totalBytes} bytes).`;
  if (typeof spill !== 'string') return `${head} The full output could not be saved (${spill.error}).]`;
  const unit = t.onLineBoundary ? 'offset and limit count lines' : 'offset and limit count characters';
  return `${head} The full output is saved at ${spill}. Read on with ${readOutputCall(spill, t)} (${unit}).]`;
}

function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '[unprintable]';
  }
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, with `…` when cut. Pure. */
export function cutBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  return `${text.slice(0, prefixWithinBytes(text, Math.max(0, maxBytes - 3)))}…`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') {
    const type = (value as Record<string, unknown>).type;
    return typeof type === 'string' && type.length <= 40 ? type : 'object';
  }
  return typeof value;
}

function describeArray(label: string, items: unknown[], limits: OutputLimits): string[] {
  const counts = new Map<string, number>();
  for (const item of items) {
    const kind = kindOf(item);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  const types = [...counts].map(([k, n]) => `${k} x${n}`).join(', ');
  const lines = [`${label}: ${items.length} blocks (${types})`];
  const shown = Math.min(items.length, limits.previewBlocks);
  for (let i = 0; i < shown; i++) lines.push(`  [${i}] ${cutBytes(jsonOf(items[i]), limits.previewBytes)}`);
  if (items.length > shown) lines.push(`  ... ${items.length - shown} more blocks`);
  return lines;
}

/**
 * A bounded text summary of a large structured result: small fields are
 * kept whole (up to `smallFieldBytes` in total); each large array is given as its block count, the
 * types of its blocks (their `type` field, else the JSON type) and byte
 * previews of its first blocks; each large object as its keys and a preview.
 * The summary itself is at most `limits.maxStructuredBytes` bytes. Pure.
 */
export function summarizeStructured(value: unknown, limits: OutputLimits = DEFAULT_OUTPUT_LIMITS): string {
  const lines: string[] = [];
  if (Array.isArray(value)) {
    lines.push(...describeArray('Top level', value, limits));
  } else if (typeof value === 'object' && value !== null) {
    const small: Record<string, unknown> = {};
    const large: string[] = [];
    let budget = limits.smallFieldBytes;
    for (const key of Object.keys(value)) {
      const field = (value as Record<string, unknown>)[key];
      const json = jsonOf(field);
      const size = Buffer.byteLength(json, 'utf8') + Buffer.byteLength(JSON.stringify(key), 'utf8') + 2;
      if (size <= budget) {
        budget -= size;
        Object.defineProperty(small, key, { value: field, enumerable: true });
        continue;
      }
      if (Array.isArray(field)) {
        large.push(...describeArray(`Field ${JSON.stringify(key)}`, field, limits));
      } else if (typeof field === 'object' && field !== null) {
        const keys = Object.keys(field);
        const names = cutBytes(keys.join(', '), limits.previewBytes);
        large.push(`Field ${JSON.stringify(key)}: object with ${keys.length} keys (${names})`);
        large.push(`  ${cutBytes(json, limits.previewBytes)}`);
      } else {
        large.push(
          `Field ${JSON.stringify(key)}: ${kindOf(field)} of ${Buffer.byteLength(json, 'utf8')} bytes`,
        );
        large.push(`  ${cutBytes(json, limits.previewBytes)}`);
      }
    }
    if (Object.keys(small).length > 0) lines.push(`Small fields: ${jsonOf(small)}`);
    lines.push(...large);
  } else {
    lines.push(`Value: ${cutBytes(jsonOf(value), limits.previewBytes)}`);
  }
  return cutBytes(lines.join('\n'), limits.maxStructuredBytes);
}
