/**
 * Pure shaping of what crosses the Exec boundary: a nested tool result as the
 * script sees it, and the final text the model sees.
 */
import type { ContentBlock, ImageBlock } from '../../model';

/** What a nested tool call hands back from the host. */
export interface NestedToolResult {
  content: string | ContentBlock[];
  isError?: boolean;
  structured?: unknown;
}

/** A nested result translated for the script. */
export type ScriptValue =
  | { ok: true; payload: string; images: ImageBlock[] }
  | { ok: false; message: string; images: ImageBlock[] };

/** An image as the script sees it: the pixels go to the model, not to the script. */
export interface ImagePlaceholder {
  type: 'image';
  mimeType: string;
  /** The image was over the per-script image limit and is not shown to the model. */
  omitted?: true;
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}

/**
 * Translates a host tool result for the script.
 * - text only: resolves to the text (a string; JSON results arrive as text);
 * - with images: resolves to an array of `{ type: 'text', text }` and
 *   `{ type: 'image', mimeType }` blocks; the images themselves are attached to
 *   the Exec result while `imagesLeft` allows, later ones are marked `omitted`;
 * - `isError`: rejects with the tool's text.
 */
export function toScriptValue(result: NestedToolResult, imagesLeft: number): ScriptValue {
  const content = result.content;
  if (result.isError === true) {
    const text = textOf(content).trim();
    return { ok: false, message: text === '' ? 'the tool reported an error' : text, images: [] };
  }
  if (typeof content === 'string' || content.every((b) => b.type === 'text')) {
    let text = textOf(content);
    if (text === '' && result.structured !== undefined) {
      text = JSON.stringify(result.structured) ?? '';
    }
    return { ok: true, payload: JSON.stringify(text), images: [] };
  }
  const images: ImageBlock[] = [];
  const blocks: (ContentBlock | ImagePlaceholder)[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      blocks.push({ type: 'text', text: block.text });
    } else if (images.length < imagesLeft) {
      images.push(block);
      blocks.push({ type: 'image', mimeType: block.mimeType });
    } else {
      blocks.push({ type: 'image', mimeType: block.mimeType, omitted: true });
    }
  }
  return { ok: true, payload: JSON.stringify(blocks), images };
}

/**
 * Cuts `text` to `max` characters and says so, with the total length
 * (`total` when `text` is already a prefix of a longer text).
 */
export function cutText(text: string, max: number, what: string, total = text.length): string {
  if (total <= max && text.length <= max) return text;
  return `${text.slice(0, max)}\n[${what} cut: showing the first ${max} of ${Math.max(total, text.length)} characters]`;
}

export interface SuccessText {
  /** The returned value: `undefined` when the script returned nothing. */
  value: string | undefined;
  /** Length of the whole value when `value` is only its beginning. @default value.length */
  valueLength?: number;
  console: string;
  consoleCut: boolean;
  maxResultChars: number;
  maxConsoleChars: number;
  omittedImages: number;
}

function consoleSection(text: string, cut: boolean, max: number, title: string): string | undefined {
  if (text === '' && !cut) return undefined;
  const body = cut ? `${text}\n[console output cut after ${max} characters]` : text;
  return `${title}\n${body}`;
}

/** The model-visible text of a finished script. */
export function successText(s: SuccessText): string {
  const parts: string[] = [];
  if (s.value !== undefined)
    parts.push(`Result:\n${cutText(s.value, s.maxResultChars, 'result', s.valueLength)}`);
  const c = consoleSection(s.console, s.consoleCut, s.maxConsoleChars, 'Console output:');
  if (c !== undefined) parts.push(c);
  if (s.omittedImages > 0) {
    parts.push(`${s.omittedImages} image(s) were not attached: the per-script image limit was reached.`);
  }
  if (parts.length === 0) return 'The script finished without returning a value and printed nothing.';
  return parts.join('\n\n');
}

/** The model-visible text of a failed script. */
export function failureText(
  message: string,
  consoleText: string,
  consoleCut: boolean,
  maxConsoleChars: number,
): string {
  const c = consoleSection(consoleText, consoleCut, maxConsoleChars, 'Console output before the failure:');
  return c === undefined ? `Exec failed: ${message}` : `Exec failed: ${message}\n\n${c}`;
}
