/**
 * Minimal text edits on a JSONC document: insert, replace or remove one
 * object property and touch nothing else (no reformatting of neighbours, no
 * comment of another entry lost). jsonc-parser's `modify()` reformats the
 * lines around an edit and, when removing, deletes the comments between the
 * removed property and its neighbour; so positions come from its parse tree
 * and scanner and the edits are computed here. Pure.
 */
import { createScanner, type Edit, type FormattingOptions, type Node } from 'jsonc-parser';

// jsonc-parser's SyntaxKind is a const enum (not importable with isolatedModules).
const COMMA_TOKEN = 5;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const TRIVIA = 15;

interface Token {
  kind: number;
  offset: number;
  length: number;
}

/** The first token at or after `pos` that is not whitespace, a line break or a comment. */
function nextSignificant(text: string, pos: number): Token {
  const scanner = createScanner(text, false);
  scanner.setPosition(pos);
  for (;;) {
    const kind = scanner.scan();
    if (kind === TRIVIA || kind === LINE_BREAK || kind === LINE_COMMENT || kind === BLOCK_COMMENT) continue;
    return { kind, offset: scanner.getTokenOffset(), length: scanner.getTokenLength() };
  }
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

function lineIndent(text: string, pos: number): string {
  const start = lineStart(text, pos);
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? '';
}

function firstOnLine(text: string, pos: number): boolean {
  return text.slice(lineStart(text, pos), pos).trim() === '';
}

/**
 * When only blanks and comments follow `pos` up to the end of its line:
 * where that line break starts and how long it is (0 at the end of the text).
 */
function restOfLine(text: string, pos: number): { end: number; breakLength: number } | undefined {
  let i = pos;
  for (;;) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
      break;
    }
    if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      if (close === -1 || /[\r\n]/.test(text.slice(i, close))) return undefined;
      i = close + 2;
      continue;
    }
    break;
  }
  if (i >= text.length) return { end: i, breakLength: 0 };
  if (text.startsWith('\r\n', i)) return { end: i, breakLength: 2 };
  if (text[i] === '\n') return { end: i, breakLength: 1 };
  return undefined;
}

/** How new text is laid out: like the document around it. */
export interface LayoutOptions {
  formatting: FormattingOptions;
  /** A document on one line gets compact insertions. */
  compact: boolean;
}

/** Layout for a document: compact when it has no line break. */
export function layoutOf(text: string, formatting: FormattingOptions): LayoutOptions {
  return { formatting, compact: !/[\r\n]/.test(text.trim()) };
}

function unit(layout: LayoutOptions): string {
  const f = layout.formatting;
  return f.insertSpaces === false ? '\t' : ' '.repeat(f.tabSize ?? 2);
}

function render(value: unknown, indent: string, layout: LayoutOptions): string {
  if (layout.compact) return JSON.stringify(value);
  return JSON.stringify(value, null, unit(layout))
    .split('\n')
    .join((layout.formatting.eol ?? '\n') + indent);
}

function property(key: string, value: unknown, indent: string, layout: LayoutOptions): string {
  return `${JSON.stringify(key)}:${layout.compact ? '' : ' '}${render(value, indent, layout)}`;
}

/** Edits that add property `key` (absent) to `object`, after its last property. */
export function insertProperty(
  text: string,
  object: Node,
  key: string,
  value: unknown,
  layout: LayoutOptions,
): Edit[] {
  const eol = layout.formatting.eol ?? '\n';
  const props = object.children ?? [];
  const last = props[props.length - 1];
  if (!last) {
    const open = object.offset;
    const close = object.offset + object.length - 1;
    if (layout.compact) return [{ offset: open + 1, length: 0, content: property(key, value, '', layout) }];
    const base = lineIndent(text, open);
    const indent = base + unit(layout);
    const prop = property(key, value, indent, layout);
    const interior = text.slice(open + 1, close);
    if (!/[\r\n]/.test(interior) && interior.trim() === '') {
      return [{ offset: open + 1, length: interior.length, content: eol + indent + prop + eol + base }];
    }
    return [{ offset: open + 1, length: 0, content: eol + indent + prop }];
  }
  const lastEnd = last.offset + last.length;
  const after = nextSignificant(text, lastEnd);
  const hasComma = after.kind === COMMA_TOKEN;
  const afterComma = hasComma ? after.offset + after.length : lastEnd;
  if (!layout.compact && firstOnLine(text, last.offset)) {
    const line = restOfLine(text, afterComma);
    if (line) {
      const indent = lineIndent(text, last.offset);
      const edits: Edit[] = [];
      if (!hasComma) edits.push({ offset: lastEnd, length: 0, content: ',' });
      edits.push({
        offset: line.end,
        length: 0,
        content: eol + indent + property(key, value, indent, layout) + (hasComma ? ',' : ''),
      });
      return edits;
    }
  }
  // Same line as its neighbours: one line, like them.
  const space = layout.compact ? '' : ' ';
  const inline = `${JSON.stringify(key)}:${space}${JSON.stringify(value)}`;
  return hasComma
    ? [{ offset: afterComma, length: 0, content: `${space}${inline},` }]
    : [{ offset: lastEnd, length: 0, content: `,${space}${inline}` }];
}

/** Edits that replace the value of `prop` (a property node). */
export function replacePropertyValue(
  text: string,
  prop: Node,
  value: unknown,
  layout: LayoutOptions,
): Edit[] {
  const valueNode = prop.children?.[1];
  if (!valueNode) return [];
  return [
    {
      offset: valueNode.offset,
      length: valueNode.length,
      content: render(value, lineIndent(text, prop.offset), layout),
    },
  ];
}

/**
 * Edits that remove `prop` from its object. A property on lines of its own
 * goes with those whole lines (and its own trailing comment); the comma
 * before it goes when it was the last one (a strict JSON file stays strict);
 * comments above it and around its neighbours stay.
 */
export function removeProperty(text: string, prop: Node): Edit[] {
  const object = prop.parent;
  const props = object?.children ?? [prop];
  const index = props.indexOf(prop);
  const start = prop.offset;
  const end = prop.offset + prop.length;
  const after = nextSignificant(text, end);
  const hasComma = after.kind === COMMA_TOKEN;
  const endWithComma = hasComma ? after.offset + after.length : end;
  const isLast = index === props.length - 1;
  const previous = index > 0 ? props[index - 1] : undefined;
  const next = isLast ? undefined : props[index + 1];

  if (firstOnLine(text, start)) {
    const line = restOfLine(text, endWithComma);
    if (line) {
      const from = lineStart(text, start);
      const edits: Edit[] = [{ offset: from, length: line.end + line.breakLength - from, content: '' }];
      if (isLast && !hasComma && previous) {
        const comma = nextSignificant(text, previous.offset + previous.length);
        if (comma.kind === COMMA_TOKEN && comma.offset < from)
          edits.push({ offset: comma.offset, length: 1, content: '' });
      }
      return edits;
    }
  }
  // Sharing a line with a neighbour: remove the property and one comma, and
  // never a comment between them (it may belong to the neighbour).
  if (next) {
    if (isBlank(text.slice(endWithComma, next.offset)))
      return [{ offset: start, length: next.offset - start, content: '' }];
    return [{ offset: start, length: blanksAfter(text, endWithComma) - start, content: '' }];
  }
  if (previous) {
    const prevEnd = previous.offset + previous.length;
    if (isBlank(text.slice(prevEnd, start))) return [{ offset: prevEnd, length: end - prevEnd, content: '' }];
    const from = blanksBefore(text, start);
    if (hasComma) return [{ offset: from, length: endWithComma - from, content: '' }];
    const comma = nextSignificant(text, prevEnd);
    const edits: Edit[] = [{ offset: from, length: end - from, content: '' }];
    if (comma.kind === COMMA_TOKEN && comma.offset < from)
      edits.push({ offset: comma.offset, length: 1, content: '' });
    return edits;
  }
  return [{ offset: start, length: endWithComma - start, content: '' }];
}

/** True when `text` is whitespace and commas only (no comment). */
function isBlank(text: string): boolean {
  return /^[\s,]*$/.test(text);
}

/** The offset after the spaces and tabs that follow `pos`. */
function blanksAfter(text: string, pos: number): number {
  let i = pos;
  while (text[i] === ' ' || text[i] === '\t') i++;
  return i;
}

/** The offset of the spaces and tabs that end right before `pos`. */
function blanksBefore(text: string, pos: number): number {
  let i = pos;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  return i;
}
