/**
 * The output guard: the last step of the tool funnel. Keeps a tool result
 * within what a model context can take (long text cut and spilled to a file,
 * large structured content summarized, images counted per turn or saved when
 * the model cannot see them) and tells the model where the rest is.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContentBlock, ImageBlock } from '../model';
import {
  cutBytes,
  DEFAULT_OUTPUT_LIMITS,
  type OutputLimits,
  READ_OUTPUT_TOOL,
  summarizeStructured,
  truncateText,
  truncationNotice,
} from './truncate';

/**
 * A tool result as MCP's `CallToolResult` has it (the SDK type is assignable).
 * Read defensively: any field may be missing or malformed.
 */
export interface ToolCallResultLike {
  content?: readonly unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/** What the model gets for one tool call. */
export interface GuardedResult {
  /** Text, or text and image blocks when images are sent to the model. */
  content: string | ContentBlock[];
  isError: boolean;
}

/** Per-call context of {@link OutputGuard.guard}. */
export interface GuardContext {
  /** `mcp__<server>__<tool>` (names the spill files). */
  fullName: string;
  /** The model takes image blocks (`ModelAdapter.supportsVision`). */
  supportsVision: boolean;
}

/** Options of {@link createOutputGuard}. */
export interface OutputGuardOptions {
  /**
   * Where spilled outputs and saved images go: a directory inside the
   * session's temp dir (so `ReadOutput` can read them). Created on the first
   * spill (mode 0700); files are written with mode 0600.
   */
  dir: string;
  /** Override some limits; see {@link OutputLimits} for the defaults. */
  limits?: Partial<OutputLimits>;
}

/** One agent's output guard. */
export interface OutputGuard {
  /** Start a new turn: the per-turn image count starts again. */
  startTurn(): void;
  /**
   * The result as the model gets it. Text blocks (and text resources) are
   * joined and cut at `maxTextBytes` / `maxTextLines`, the whole text saved
   * to a file. `structuredContent` is used when the content has no text of
   * its own (or only its JSON copy): whole up to `maxStructuredBytes`, else
   * summarized and saved. Images go as image blocks to a vision model, up to
   * `maxImagesPerTurn` per turn and `maxImageBytes` each; otherwise they,
   * audio and binary resources are saved and named. Never throws: a failure
   * to save a file is said in the text.
   */
  guard(result: ToolCallResultLike, ctx: GuardContext): Promise<GuardedResult>;
  /** The limits in force. */
  readonly limits: Readonly<OutputLimits>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(err: unknown): string {
  const code = isRecord(err) && typeof err.code === 'string' ? `${err.code}: ` : '';
  return `${code}${err instanceof Error ? err.message : String(err)}`;
}

function extensionOf(mimeType: string): string {
  const known: Record<string, string> = {
    'image/png': 'png',
    'image/jpeg': 'jpg',
    'image/gif': 'gif',
    'image/webp': 'webp',
    'image/svg+xml': 'svg',
    'audio/mpeg': 'mp3',
    'audio/wav': 'wav',
    'application/json': 'json',
    'text/plain': 'txt',
  };
  const ext = Object.hasOwn(known, mimeType) ? known[mimeType] : undefined;
  if (ext !== undefined) return ext;
  const sub = /^[a-z]+\/([a-z0-9]{1,8})$/i.exec(mimeType)?.[1];
  return sub === undefined ? 'bin' : sub.toLowerCase();
}

function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80) || 'output';
}

/** Spill files of one guard: the directory is made on first use, names never collide. */
class SpillFiles {
  readonly #dir: string;
  #seq = 0;
  #ready: Promise<void> | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  async write(label: string, ext: string, data: string | Uint8Array): Promise<string> {
    this.#ready ??= mkdir(this.#dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    try {
      await this.#ready;
    } catch (err) {
      this.#ready = undefined; // try again next time
      throw err;
    }
    for (let attempt = 0; attempt < 10_000; attempt++) {
      this.#seq += 1;
      const path = join(this.#dir, `${String(this.#seq).padStart(4, '0')}-${slug(label)}.${ext}`);
      try {
        await writeFile(path, data, { flag: 'wx', mode: 0o600 });
        return path;
      } catch (err) {
        if (!isRecord(err) || err.code !== 'EEXIST') throw err;
      }
    }
    throw new Error(`no free file name in ${this.#dir}`);
  }
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** True when `text` is the JSON of the structured content (the copy servers send for old clients). */
function isJsonCopy(text: string, structuredJson: string | undefined): boolean {
  if (structuredJson === undefined) return false;
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    return JSON.stringify(JSON.parse(t)) === structuredJson;
  } catch {
    return false;
  }
}

/**
 * An output guard writing into `options.dir`. Starts no work; the directory is
 * created on the first file written.
 */
export function createOutputGuard(options: OutputGuardOptions): OutputGuard {
  const limits: Readonly<OutputLimits> = Object.freeze({ ...DEFAULT_OUTPUT_LIMITS, ...options.limits });
  const files = new SpillFiles(options.dir);
  let imagesThisTurn = 0;

  async function save(
    label: string,
    ext: string,
    data: string | Uint8Array,
  ): Promise<string | { error: string }> {
    try {
      return await files.write(label, ext, data);
    } catch (err) {
      return { error: errorText(err) };
    }
  }

  async function binary(
    kind: string,
    mimeType: string,
    data: string,
    label: string,
    why: string,
  ): Promise<string> {
    const bytes = Buffer.from(data, 'base64');
    const saved = await save(label, extensionOf(mimeType), bytes);
    const what = `${kind} (${mimeType}, ${bytes.length} bytes)`;
    return typeof saved === 'string'
      ? `[${what} saved to ${saved}${why}]`
      : `[${what} could not be saved (${saved.error})${why}]`;
  }

  async function guard(result: ToolCallResultLike, ctx: GuardContext): Promise<GuardedResult> {
    const record: Record<string, unknown> = isRecord(result) ? result : {};
    const isError = record.isError === true;
    const blocks = Array.isArray(record.content) ? (record.content as unknown[]) : [];
    const structured = record.structuredContent;
    const structuredJson = structured === undefined ? undefined : safeJson(structured);

    const texts: string[] = [];
    const notes: string[] = [];
    const images: ImageBlock[] = [];
    let droppedCopy = false;

    for (const block of blocks) {
      if (!isRecord(block)) continue;
      const type = block.type;
      if (type === 'text' && typeof block.text === 'string') {
        if (isJsonCopy(block.text, structuredJson)) droppedCopy = true;
        else texts.push(block.text);
      } else if ((type === 'image' || type === 'audio') && typeof block.data === 'string') {
        const mimeType = typeof block.mimeType === 'string' ? block.mimeType : 'application/octet-stream';
        if (type === 'image') {
          const size = Math.floor((block.data.length * 3) / 4);
          if (!ctx.supportsVision) {
            notes.push(
              await binary('image', mimeType, block.data, ctx.fullName, '; this model cannot see images'),
            );
          } else if (size > limits.maxImageBytes) {
            notes.push(
              await binary(
                'image',
                mimeType,
                block.data,
                ctx.fullName,
                `; larger than ${limits.maxImageBytes} bytes`,
              ),
            );
          } else if (imagesThisTurn >= limits.maxImagesPerTurn) {
            notes.push(
              await binary(
                'image',
                mimeType,
                block.data,
                ctx.fullName,
                `; the limit of ${limits.maxImagesPerTurn} images per turn is reached`,
              ),
            );
          } else {
            imagesThisTurn += 1;
            images.push({ type: 'image', mimeType, data: block.data });
          }
        } else {
          notes.push(await binary('audio', mimeType, block.data, ctx.fullName, ''));
        }
      } else if (type === 'resource' && isRecord(block.resource)) {
        const res = block.resource;
        const uri = typeof res.uri === 'string' ? res.uri : '(no uri)';
        if (typeof res.text === 'string') texts.push(`[resource ${uri}]\n${res.text}`);
        else if (typeof res.blob === 'string') {
          const mimeType = typeof res.mimeType === 'string' ? res.mimeType : 'application/octet-stream';
          notes.push(await binary(`resource ${uri}`, mimeType, res.blob, ctx.fullName, ''));
        } else notes.push(`[resource ${uri}]`);
      } else if (type === 'resource_link') {
        const uri = typeof block.uri === 'string' ? block.uri : '(no uri)';
        const name = typeof block.name === 'string' ? `${block.name} ` : '';
        const desc = typeof block.description === 'string' ? ` - ${block.description}` : '';
        texts.push(`[resource link: ${name}${uri}${desc}]`);
      } else {
        const label = typeof type === 'string' ? type : 'unknown';
        texts.push(`[${label} block: ${cutBytes(safeJson(block) ?? '[unprintable]', limits.previewBytes)}]`);
      }
    }

    const parts: string[] = [];
    let structuredPart: string | undefined;
    if (structuredJson !== undefined && (texts.length === 0 || droppedCopy)) {
      if (Buffer.byteLength(structuredJson, 'utf8') <= limits.maxStructuredBytes) {
        structuredPart = structuredJson; // up to its own limit, not the text limit
      } else {
        const saved = await save(ctx.fullName, 'json', JSON.stringify(structured, null, 2));
        const where =
          typeof saved === 'string'
            ? `the full JSON is saved at ${saved}; read it with ${READ_OUTPUT_TOOL} ${JSON.stringify({ path: saved })}`
            : `the full JSON could not be saved (${saved.error})`;
        structuredPart = `[Structured result of ${Buffer.byteLength(structuredJson, 'utf8')} bytes, summarized; ${where}.]\n${summarizeStructured(structured, limits)}`;
      }
    }
    if (structuredPart !== undefined) parts.push(structuredPart);

    const text = texts.join('\n');
    if (text !== '') {
      const cut = truncateText(text, { maxBytes: limits.maxTextBytes, maxLines: limits.maxTextLines });
      if (cut.truncated) {
        const saved = await save(ctx.fullName, 'txt', text);
        parts.push(
          `${cut.text}${cut.text === '' || cut.text.endsWith('\n') ? '' : '\n'}${truncationNotice(cut, saved)}`,
        );
      } else {
        parts.push(text);
      }
    }
    parts.push(...notes);
    const joined = parts.join('\n');
    if (images.length === 0) return { content: joined, isError };
    const content: ContentBlock[] = joined === '' ? [] : [{ type: 'text', text: joined }];
    content.push(...images);
    return { content, isError };
  }

  return {
    limits,
    startTurn() {
      imagesThisTurn = 0;
    },
    async guard(result, ctx) {
      try {
        return await guard(result, ctx);
      } catch (err) {
        return { content: `The tool result could not be processed: ${errorText(err)}`, isError: true };
      }
    },
  };
}
