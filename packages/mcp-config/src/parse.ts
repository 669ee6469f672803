import {
  type FormattingOptions,
  type Node,
  type ParseError,
  type ParseErrorCode,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser';
import type { ConfigIssue, ConfigSource } from './types';
import { makeIssue } from './validate';

/** Deeper values are read as `null` (no server field needs more than 3 levels). */
const MAX_VALUE_DEPTH = 64;

/** Result of {@link parseConfigText}. */
export interface ParsedConfig {
  /** False when the file is unusable (malformed): it contributes no server. */
  ok: boolean;
  /** Entries under `mcpServers`, by name, as written (duplicate names: the last wins). */
  servers: Record<string, unknown>;
  issues: ConfigIssue[];
}

/** Line and column (1-based) of a character offset. Pure. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The plain value of a parse-tree node. Object keys become own properties
 * (a `"__proto__"` key is data, never a prototype); duplicate keys: last wins.
 */
export function nodeValue(node: Node | undefined, depth = 0): unknown {
  if (!node) return undefined;
  if (depth > MAX_VALUE_DEPTH) return null;
  switch (node.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const prop of node.children ?? []) {
        const [key, value] = prop.children ?? [];
        if (key && typeof key.value === 'string') setOwn(out, key.value, nodeValue(value, depth + 1));
      }
      return out;
    }
    case 'array':
      return (node.children ?? []).map((child) => nodeValue(child, depth + 1));
    default:
      return node.value;
  }
}

const PARSE_ERRORS: Readonly<Record<string, string>> = {
  InvalidSymbol: 'there is an unexpected character',
  InvalidNumberFormat: 'a number is malformed',
  PropertyNameExpected: 'a property name in double quotes is missing',
  ValueExpected: 'a value is missing',
  ColonExpected: 'a : is missing',
  CommaExpected: 'a , is missing',
  CloseBraceExpected: 'a } is missing',
  CloseBracketExpected: 'a ] is missing',
  EndOfFileExpected: 'there is more text after the end of the document',
  InvalidCommentToken: 'a comment is malformed',
  UnexpectedEndOfComment: 'a comment is not closed, */ is missing',
  UnexpectedEndOfString: 'a string is not closed, " is missing',
  UnexpectedEndOfNumber: 'a number is cut off',
  InvalidUnicode: 'a \\u escape is malformed',
  InvalidEscapeCharacter: 'a \\ escape is malformed',
  InvalidCharacter: 'a string contains a control character, write it as an escape such as \\n',
};

/** A jsonc-parser error code in words, for people. Pure. */
export function describeParseError(code: ParseErrorCode): string {
  const name = printParseErrorCode(code);
  return Object.hasOwn(PARSE_ERRORS, name) ? (PARSE_ERRORS[name] ?? name) : name;
}

/** Result of {@link parseJsoncDocument}. */
export interface JsoncDocument {
  /** Undefined for an empty (or comments-only) document. */
  root?: Node;
  /** First syntax error, with a readable position. */
  error?: { message: string; offset: number };
}

/**
 * Parse JSONC (comments and trailing commas allowed) into a tree. Pure;
 * never throws (pathological nesting is reported as an error).
 */
export function parseJsoncDocument(text: string): JsoncDocument {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, {
      allowTrailingComma: true,
      disallowComments: false,
      allowEmptyContent: true,
    });
  } catch {
    return { error: { message: 'the document is nested too deeply to read', offset: 0 } };
  }
  const first = errors[0];
  if (first) {
    const { line, column } = lineColumn(text, first.offset);
    const more =
      errors.length > 1
        ? `, and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''} after it`
        : '';
    return {
      error: {
        message: `${describeParseError(first.error)} at line ${line}, column ${column}${more}`,
        offset: first.offset,
      },
    };
  }
  return root ? { root } : {};
}

/** Child value node of an object node by key (the last one, as JSON.parse does). */
export function propertyNode(object: Node, key: string): Node | undefined {
  let found: Node | undefined;
  for (const prop of object.children ?? []) {
    const [k, v] = prop.children ?? [];
    if (k?.value === key) found = v;
  }
  return found;
}

/** Strip a leading byte-order mark. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Parse the text of a `.mcp.json`-format file: `{ "mcpServers": { "<name>": {...} } }`,
 * JSONC. Pure; never throws.
 *
 * A syntax error, a root that is not an object, or an `mcpServers` that is
 * not an object make the whole file unusable (`ok: false`, a
 * `CONFIG_MALFORMED` error naming line and column). An empty file, or one
 * without `mcpServers`, has no servers. Other top-level keys are ignored with
 * a warning (`$schema` silently); a server name written twice: the last wins,
 * with a warning.
 */
export function parseConfigText(text: string, file: string, source: ConfigSource): ParsedConfig {
  const ctx = { source, file };
  const issues: ConfigIssue[] = [];
  const body = stripBom(text);
  const doc = parseJsoncDocument(body);
  if (doc.error) {
    issues.push(
      makeIssue(
        ctx,
        'error',
        'CONFIG_MALFORMED',
        `${file} is not valid JSON: ${doc.error.message}. Its servers are not loaded; the other sources are. Fix the syntax (comments and trailing commas are allowed).`,
      ),
    );
    return { ok: false, servers: {}, issues };
  }
  if (!doc.root) {
    issues.push(makeIssue(ctx, 'warning', 'CONFIG_EMPTY', `${file} is empty; it defines no servers.`));
    return { ok: true, servers: {}, issues };
  }
  if (doc.root.type !== 'object') {
    issues.push(
      makeIssue(
        ctx,
        'error',
        'CONFIG_MALFORMED',
        `${file} must contain an object like {"mcpServers": {...}}, not ${doc.root.type === 'array' ? 'an array' : `a ${doc.root.type}`}. Its servers are not loaded.`,
      ),
    );
    return { ok: false, servers: {}, issues };
  }

  let serversNode: Node | undefined;
  for (const prop of doc.root.children ?? []) {
    const [keyNode, valueNode] = prop.children ?? [];
    const key = keyNode?.value;
    if (key === 'mcpServers') {
      serversNode = valueNode;
    } else if (key !== '$schema' && typeof key === 'string') {
      const hint =
        key === 'servers'
          ? '; this file format uses "mcpServers" ("servers" is the VS Code format): rename the key'
          : '';
      issues.push(
        makeIssue(
          ctx,
          'warning',
          'UNKNOWN_KEY',
          `${file}: top-level key ${JSON.stringify(key)} is ignored${hint}.`,
          { field: key },
        ),
      );
    }
  }
  if (!serversNode) return { ok: true, servers: {}, issues };
  if (serversNode.type !== 'object') {
    issues.push(
      makeIssue(
        ctx,
        'error',
        'CONFIG_MALFORMED',
        `${file}: "mcpServers" must be an object of name -> server, not ${serversNode.type === 'array' ? 'an array' : `a ${serversNode.type}`}. Its servers are not loaded.`,
        { field: 'mcpServers' },
      ),
    );
    return { ok: false, servers: {}, issues };
  }

  const servers: Record<string, unknown> = {};
  for (const prop of serversNode.children ?? []) {
    const [keyNode, valueNode] = prop.children ?? [];
    const name = keyNode?.value;
    if (typeof name !== 'string') continue;
    if (Object.hasOwn(servers, name)) {
      issues.push(
        makeIssue(
          ctx,
          'warning',
          'DUPLICATE_SERVER',
          `${file}: server "${name}" is defined more than once; the last definition is used. Remove the others.`,
          { server: name },
        ),
      );
    }
    setOwn(servers, name, nodeValue(valueNode, 2));
  }
  return { ok: true, servers, issues };
}

/**
 * The indentation and line ending a document already uses, so inserted
 * text looks like the rest. Pure. Defaults: 2 spaces, `\n`.
 */
export function detectFormatting(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let insertSpaces = true;
  let tabSize = 2;
  const indents = [...text.matchAll(/\n([ \t]+)\S/g)].map((m) => m[1] ?? '');
  if (indents.some((i) => i.startsWith('\t'))) {
    insertSpaces = false;
    tabSize = 1;
  } else if (indents.length > 0) {
    const smallest = indents.reduce((min, i) => Math.min(min, i.length), Number.POSITIVE_INFINITY);
    if (smallest > 0 && smallest <= 8) tabSize = smallest;
  }
  return { insertSpaces, tabSize, eol, insertFinalNewline: false };
}
