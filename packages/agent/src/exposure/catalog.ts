/**
 * The Exec tool's description: a catalog of the MCP pool as TypeScript-shaped
 * signatures. Pure: the same pool always gives the same bytes, and no budget
 * number, time or status ever appears in the text.
 */

/** One MCP tool as the catalog and the sandbox see it. */
export interface CatalogTool {
  server: string;
  name: string;
  /** `mcp__<server>__<tool>`: the key on the sandbox's `tools` object and the permission identity. */
  fullName: string;
  description?: string;
  inputSchema?: unknown;
}

/** Bounds of one rendered signature. */
export interface SignatureOptions {
  /** Object nesting levels rendered field by field; deeper objects show as `{ ... }`. @default 3 */
  maxDepth?: number;
  /** Fields rendered per object; the rest show as `...`. @default 24 */
  maxProperties?: number;
  /** Members rendered per enum or union; the rest show as `...`. @default 12 */
  maxEnum?: number;
  /** Characters of the tool's first description line. @default 200 */
  maxDescriptionChars?: number;
  /** Characters of a field's description. @default 120 */
  maxFieldDescriptionChars?: number;
}

export interface CatalogOptions extends SignatureOptions {
  /** Token budget of the entries, estimated as characters / 4 per whole entry. @default 8000 */
  budgetTokens?: number;
}

interface Bounds {
  maxDepth: number;
  maxProperties: number;
  maxEnum: number;
  maxDescriptionChars: number;
  maxFieldDescriptionChars: number;
}

function bounds(o: SignatureOptions): Bounds {
  return {
    maxDepth: o.maxDepth ?? 3,
    maxProperties: o.maxProperties ?? 24,
    maxEnum: o.maxEnum ?? 12,
    maxDescriptionChars: o.maxDescriptionChars ?? 200,
    maxFieldDescriptionChars: o.maxFieldDescriptionChars ?? 120,
  };
}

type Schema = Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How a script reaches a tool: `tools.name` or `tools["name-with-dash"]`. */
export function toolAccess(fullName: string): string {
  return IDENTIFIER.test(fullName) ? `tools.${fullName}` : `tools[${JSON.stringify(fullName)}]`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 3)).trimEnd()}...`;
}

/** Text safe inside a JSDoc comment. */
function doc(text: string): string {
  return text.replace(/\*\//g, '*\\/');
}

function firstLine(description: string | undefined): string {
  if (description === undefined) return '';
  for (const line of description.split(/\r?\n/)) {
    const t = line.trim();
    if (t !== '') return t;
  }
  return '';
}

function literal(value: unknown): string {
  const s = JSON.stringify(value);
  return s === undefined ? 'unknown' : s;
}

class Renderer {
  private readonly refs: string[] = [];
  constructor(
    private readonly root: Schema,
    private readonly b: Bounds,
  ) {}

  private resolve(ref: string): Schema | undefined {
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    if (m === null) return undefined;
    const defs = this.root[m[1] as string];
    if (!isSchema(defs)) return undefined;
    const name = (m[2] as string).replace(/~1/g, '/').replace(/~0/g, '~');
    const target = defs[name];
    return isSchema(target) ? target : undefined;
  }

  private union(members: string[]): string {
    const unique = [...new Set(members)];
    if (unique.includes('unknown')) return 'unknown';
    if (unique.length > this.b.maxEnum) return `${unique.slice(0, this.b.maxEnum).join(' | ')} | ...`;
    return unique.join(' | ');
  }

  /** A type expression; multi-line for objects, indented by `indent`. */
  type(schema: unknown, depth: number, indent: string): string {
    if (!isSchema(schema)) return 'unknown';
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      if (this.refs.includes(ref)) return 'object';
      const target = this.resolve(ref);
      if (target === undefined) return 'unknown';
      this.refs.push(ref);
      try {
        return this.type(target, depth, indent);
      } finally {
        this.refs.pop();
      }
    }
    let t = this.bare(schema, depth, indent);
    if (schema.nullable === true && t !== 'unknown' && !t.endsWith('| null')) t = `${t} | null`;
    return t;
  }

  private bare(schema: Schema, depth: number, indent: string): string {
    if ('const' in schema) return literal(schema.const);
    if (Array.isArray(schema.enum)) return this.union(schema.enum.map(literal));
    const alternatives = Array.isArray(schema.anyOf)
      ? schema.anyOf
      : Array.isArray(schema.oneOf)
        ? schema.oneOf
        : undefined;
    if (alternatives !== undefined && alternatives.length > 0) {
      return this.union(alternatives.map((s) => this.type(s, depth, indent)));
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      if (schema.allOf.length === 1) return this.type(schema.allOf[0], depth, indent);
      return schema.allOf.map((s) => this.type(s, depth, indent)).join(' & ');
    }
    const type = schema.type;
    if (Array.isArray(type)) {
      return this.union(type.map((one) => this.bare({ ...schema, type: one }, depth, indent)));
    }
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return this.array(schema, depth, indent);
      case 'object':
        return this.object(schema, depth, indent);
      default:
        if (isSchema(schema.properties)) return this.object(schema, depth, indent);
        if (isSchema(schema.items)) return this.array(schema, depth, indent);
        return 'unknown';
    }
  }

  private array(schema: Schema, depth: number, indent: string): string {
    const items = schema.items;
    if (Array.isArray(items)) {
      const parts = items.slice(0, this.b.maxEnum).map((s) => this.type(s, depth, indent));
      if (items.length > this.b.maxEnum) parts.push('...');
      return `[${parts.join(', ')}]`;
    }
    return `Array<${this.type(items, depth, indent)}>`;
  }

  private object(schema: Schema, depth: number, indent: string): string {
    const props = isSchema(schema.properties) ? schema.properties : {};
    const keys = Object.keys(props);
    if (keys.length === 0) {
      const extra = schema.additionalProperties;
      if (isSchema(extra)) return `Record<string, ${this.type(extra, depth + 1, indent)}>`;
      return extra === false ? '{}' : 'Record<string, unknown>';
    }
    if (depth >= this.b.maxDepth) return '{ ... }';
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [],
    );
    const inner = `${indent}  `;
    const lines: string[] = ['{'];
    for (const key of keys.slice(0, this.b.maxProperties)) {
      const field = props[key];
      const comment = this.fieldDoc(field);
      if (comment !== '') lines.push(`${inner}/** ${comment} */`);
      const name = IDENTIFIER.test(key) ? key : JSON.stringify(key);
      const optional = required.has(key) ? '' : '?';
      lines.push(`${inner}${name}${optional}: ${this.type(field, depth + 1, inner)};`);
    }
    if (keys.length > this.b.maxProperties) lines.push(`${inner}...`);
    lines.push(`${indent}}`);
    return lines.join('\n');
  }

  private fieldDoc(field: unknown): string {
    if (!isSchema(field)) return '';
    let target = field;
    if (typeof field.$ref === 'string' && !this.refs.includes(field.$ref)) {
      const resolved = this.resolve(field.$ref);
      if (resolved !== undefined) target = { ...resolved, ...field };
    }
    const parts: string[] = [];
    const description = typeof target.description === 'string' ? oneLine(target.description) : '';
    if (description !== '') parts.push(cut(description, this.b.maxFieldDescriptionChars));
    const tag = (name: string, value: unknown) => {
      if (value !== undefined) parts.push(`@${name} ${cut(literal(value), 60)}`);
    };
    if (target.type === 'integer') parts.push('@integer');
    if (typeof target.format === 'string') parts.push(`@format ${cut(target.format, 40)}`);
    if (typeof target.pattern === 'string') parts.push(`@pattern ${cut(target.pattern, 60)}`);
    tag('default', target.default);
    tag('minimum', target.minimum);
    tag('maximum', target.maximum);
    tag('exclusiveMinimum', target.exclusiveMinimum);
    tag('exclusiveMaximum', target.exclusiveMaximum);
    tag('minLength', target.minLength);
    tag('maxLength', target.maxLength);
    tag('minItems', target.minItems);
    tag('maxItems', target.maxItems);
    if (target.deprecated === true) parts.push('@deprecated');
    return doc(parts.join(' '));
  }
}

/**
 * One catalog entry: the first description line as JSDoc, how to reach the tool,
 * and its arguments as a TypeScript-shaped object type. `$codemode.search` hits
 * carry exactly this text.
 */
export function renderSignature(tool: CatalogTool, options: SignatureOptions = {}): string {
  const b = bounds(options);
  const lines: string[] = [];
  const summary = cut(oneLine(firstLine(tool.description)), b.maxDescriptionChars);
  if (summary !== '') lines.push(`/** ${doc(summary)} */`);
  const schema = isSchema(tool.inputSchema) ? tool.inputSchema : {};
  const renderer = new Renderer(schema, b);
  const props = isSchema(schema.properties) ? schema.properties : {};
  const access = toolAccess(tool.fullName);
  if (Object.keys(props).length === 0 && !isSchema(schema.additionalProperties)) {
    lines.push(`${access}()`);
  } else {
    const required =
      Array.isArray(schema.required) && schema.required.some((r) => typeof r === 'string' && r in props);
    const type = renderer.type({ ...schema, type: 'object' }, 0, '');
    lines.push(`${access}(args${required ? '' : '?'}: ${type})`);
  }
  return lines.join('\n');
}

const HEADER = [
  'Run a JavaScript script that calls MCP tools. The code is the body of an async function: use `await`, and `return` a value to hand it back. Only `tools` and `console` exist inside (no require, process, fetch, timers or imports).',
  '- Call a tool: `const out = await tools.mcp__server__tool({ ... })`. It resolves to the tool\'s text output (parse JSON text with JSON.parse). A tool that returns images resolves to an array of { type: "text", text } and { type: "image", mimeType } blocks, and the images are shown to you with the result.',
  '- A failing or denied call throws: use try/catch to carry on.',
  '- Chain several calls in one script (fetch, transform, store) and return only what you need. console.log output is shown with the result.',
  '- `await tools["$codemode"].search("what you need")` searches every MCP tool, including any not listed here, and returns [{ name, description, signature }].',
].join('\n');

const EMPTY = 'No MCP tools are available right now.';

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The Exec tool's description for a pool. Entries are grouped by server (servers
 * in name order, tools in the server's own order). Over the budget, entries are
 * kept round-robin across servers (every server gets its first entry before any
 * gets a second; a server whose next entry does not fit gets no more), at least
 * one entry is kept, and a final line says how many are shown and points to
 * the search.
 */
export function renderCatalog(tools: readonly CatalogTool[], options: CatalogOptions = {}): string {
  const budget = options.budgetTokens ?? 8000;
  const unique = new Map<string, CatalogTool>();
  for (const tool of tools) if (!unique.has(tool.fullName)) unique.set(tool.fullName, tool);
  if (unique.size === 0) return `${HEADER}\n\n${EMPTY}`;

  const byServer = new Map<string, { tool: CatalogTool; text: string }[]>();
  for (const tool of unique.values()) {
    const list = byServer.get(tool.server) ?? [];
    list.push({ tool, text: renderSignature(tool, options) });
    byServer.set(tool.server, list);
  }
  const servers = [...byServer.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  const kept = new Map<string, number>(servers.map((s) => [s, 0]));
  const open = new Set(servers);
  let used = 0;
  let total = 0;
  for (let round = 0; open.size > 0; round++) {
    for (const server of servers) {
      if (!open.has(server)) continue;
      const entry = byServer.get(server)?.[round];
      if (entry === undefined) {
        open.delete(server);
        continue;
      }
      const cost = tokens(entry.text);
      if (used + cost > budget && total > 0) {
        open.delete(server);
        continue;
      }
      used += cost;
      total += 1;
      kept.set(server, round + 1);
    }
  }

  const entries: string[] = [];
  for (const server of servers) {
    const list = byServer.get(server) ?? [];
    for (const entry of list.slice(0, kept.get(server) ?? 0)) entries.push(entry.text);
  }
  let text = `${HEADER}\n\nTools:\n\n${entries.join('\n\n')}`;
  if (total < unique.size) {
    text += `\n\nShowing ${total} of ${unique.size} tools. The others are callable too: find them with await tools["$codemode"].search("what you need"), which covers every tool.`;
  }
  return text;
}
