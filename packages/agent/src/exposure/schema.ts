/**
 * Tool input schemas, made acceptable to the major model APIs (OpenAI,
 * Anthropic, Gemini): MCP servers publish full JSON Schema (draft-07,
 * 2020-12, zod output, OpenAPI conversions), and the providers accept
 * different, smaller subsets and reject a request that uses anything else.
 *
 * The result keeps only what every API accepts: `type` (one name per
 * schema), `description`, `properties`, `required`, `items`, string `enum`s,
 * `anyOf`, `minimum`/`maximum`, `minLength`/`maxLength`,
 * `minItems`/`maxItems` and kept `format`s, each only on the type it belongs
 * to. What a dropped key meant is kept in the description where a model can
 * still use it ("must be > 0", "default: 3", "format: uuid", "pattern: ...",
 * "any keys; values: string"). Local `$ref`s are inlined; a nullable value
 * is `anyOf: [X, {type: "null"}]`, the one form OpenAI, Anthropic and Gemini
 * all accept (Gemini rejects `type: ["string", "null"]` and
 * `additionalProperties`); the top level is always an object schema. Pure
 * and deterministic; never throws.
 */

/** Options of {@link sanitizeSchema}. */
export interface SanitizeSchemaOptions {
  /**
   * Descriptions longer than this (in characters) are cut, at the same
   * place every time, and end with `…`.
   * @default 2048
   */
  maxDescriptionLength?: number;
  /** Schemas nested deeper than this become a bare schema with a note. @default 12 */
  maxDepth?: number;
  /** At most this many schema nodes are emitted (guards `$ref` fan-out); the rest become bare schemas. @default 2000 */
  maxNodes?: number;
  /**
   * Upper bound of the result's JSON size in bytes. A larger result is redone
   * with shorter descriptions and less depth, then reduced to the top-level
   * properties, then to an empty object schema with a note.
   * @default 65536
   */
  maxBytes?: number;
  /**
   * `format` values kept as `format`; any other format goes into the
   * description (Gemini rejects string formats other than `date-time` and `enum`).
   * @default ['date-time']
   */
  keepFormats?: readonly string[];
}

/** JSON Schema `type` names the APIs understand. */
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** One note (a folded default, a const) is never longer than this. */
const MAX_NOTE_LENGTH = 200;

interface Limits {
  maxDescriptionLength: number;
  maxDepth: number;
  maxNodes: number;
  keepFormats: ReadonlySet<string>;
}

interface Walk {
  root: unknown;
  limits: Limits;
  nodes: number;
}

type Schema = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Set an own, enumerable property (a key like `__proto__` stays a plain key). */
function put(target: Schema, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * `text` cut to at most `max` characters, ending with `…` when cut. Never
 * splits a surrogate pair. Pure.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

function safeJson(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text;
  } catch {
    return '[unprintable value]';
  }
}

function note(text: string): string {
  return cutText(text, MAX_NOTE_LENGTH);
}

function withNotes(description: string | undefined, notes: string[], max: number): string | undefined {
  const base = description === undefined ? undefined : cutText(description, max);
  if (notes.length === 0) return base;
  const tail = `(${notes.join('; ')})`;
  return base === undefined || base === '' ? tail : `${base} ${tail}`;
}

function normalizeType(value: unknown): string | string[] | undefined {
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  const out: string[] = [];
  for (const t of list) if (typeof t === 'string' && TYPES.has(t) && !out.includes(t)) out.push(t);
  if (out.length === 0) return undefined;
  return out.length === 1 ? out[0] : out;
}

function isPrimitive(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function decodePointerToken(token: string): string {
  let decoded = token;
  try {
    decoded = decodeURIComponent(token);
  } catch {
    // not percent-encoded
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The target of a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer), or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = decodePointerToken(raw);
    if (Array.isArray(node)) {
      const i = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : -1;
      if (i < 0 || i >= node.length) return undefined;
      node = node[i];
    } else if (isRecord(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      return undefined;
    }
  }
  return node;
}

function refName(ref: string): string {
  const last = ref.split('/').at(-1) ?? ref;
  return last === '' || last === '#' ? 'the whole schema' : decodePointerToken(last);
}

/**
 * `schema` that also accepts null, in the one form every provider accepts:
 * `anyOf: [schema, {type: "null"}]` (Gemini rejects `type: [..., "null"]`,
 * OpenAI and Anthropic ignore `nullable`). The description stays outside.
 */
function makeNullable(schema: Schema): Schema {
  if (isEmpty(schema)) return schema; // untyped: already accepts null
  const out: Schema = {};
  const inner: Schema = { ...schema };
  if (typeof inner.description === 'string') out.description = inner.description;
  delete inner.description;
  if (Array.isArray(inner.anyOf) && Object.keys(inner).length === 1) {
    const branches = inner.anyOf as Schema[];
    out.anyOf = branches.some((b) => b.type === 'null') ? branches : [...branches, { type: 'null' }];
  } else if (inner.type === 'null') {
    return schema;
  } else {
    out.anyOf = [inner, { type: 'null' }];
  }
  return out;
}

/** Keywords that only mean something for one type (Gemini rejects them on other types). */
const KEYS_BY_TYPE: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'format', 'enum'],
  number: ['minimum', 'maximum'],
  integer: ['minimum', 'maximum'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required'],
  boolean: [],
  null: [],
};
const TYPED_KEYS = new Set(Object.values(KEYS_BY_TYPE).flat());

/** The part of `schema` that applies to type `t`. */
function forType(schema: Schema, t: string): Schema {
  const out: Schema = { type: t };
  const allowed = KEYS_BY_TYPE[t] ?? [];
  for (const key of Object.keys(schema)) {
    if (key === 'type' || key === 'description' || key === 'anyOf') continue;
    if (TYPED_KEYS.has(key) && !allowed.includes(key)) continue;
    put(out, key, schema[key]);
  }
  // Gemini requires `items` on every array; `{}` keeps "any element".
  if (t === 'array' && out.items === undefined) out.items = {};
  if (t === 'object' && out.properties === undefined) out.properties = {};
  return out;
}

/**
 * The last step for one node: a single `type` per schema (several types
 * become `anyOf` branches, null becomes a null branch), keywords only where
 * their type allows them, and string-only `enum`s (other values go into the
 * description: a server expecting numbers must not get strings).
 */
function finalize(schema: Schema): Schema {
  let s: Schema = { ...schema };
  const notes: string[] = [];
  let nullable = false;
  if (Array.isArray(s.enum)) {
    const values = s.enum as unknown[];
    if (values.includes(null)) nullable = true;
    let rest = values.filter((v) => v !== null);
    if (rest.includes('')) {
      // Gemini rejects empty enum values
      rest = rest.filter((v) => v !== '');
      notes.push('or an empty string');
    }
    if (rest.length === 0) delete s.enum;
    else if (rest.every((v) => typeof v === 'string')) {
      s.enum = rest;
      if (s.type === undefined) s.type = 'string';
    } else {
      delete s.enum;
      notes.push(note(`one of ${rest.map((v) => safeJson(v)).join(', ')}`));
    }
  }
  if (s.type === undefined) {
    // untyped: the keywords tell the type when they all belong to one; otherwise they go
    const families = new Set<string>();
    for (const key of Object.keys(s)) {
      if (!TYPED_KEYS.has(key)) continue;
      for (const t of ['string', 'number', 'array', 'object'])
        if (KEYS_BY_TYPE[t]?.includes(key)) families.add(t);
    }
    if (families.size === 1) s.type = [...families][0];
    else for (const key of Object.keys(s)) if (TYPED_KEYS.has(key)) delete s[key];
  }
  const types = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : [];
  if (types.includes('null') && types.length > 1) nullable = true;
  const concrete = types.filter((t) => t !== 'null');
  const description = typeof s.description === 'string' ? s.description : undefined;
  if (concrete.length === 1) {
    s = forType(s, concrete[0] as string);
    if (Array.isArray(schema.anyOf)) s.anyOf = schema.anyOf;
  } else if (concrete.length > 1) {
    s = { anyOf: concrete.map((t) => forType(s, t)) };
  }
  if (description !== undefined || notes.length > 0) {
    const d = withNotes(description, notes, Number.POSITIVE_INFINITY);
    if (d !== undefined) s = { description: d, ...s };
  }
  return nullable ? makeNullable(s) : s;
}

function isNullBranch(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const type = normalizeType(value.type);
  if (type === 'null') return true;
  if (Array.isArray(value.enum) && value.enum.length === 1 && value.enum[0] === null) return true;
  return Object.hasOwn(value, 'const') && value.const === null;
}

function isEmpty(schema: Schema): boolean {
  return Object.keys(schema).every((k) => k === 'description');
}

/** `top` laid over `base`: top wins, except that properties are merged and `required` is the union. */
function overlay(base: Schema, top: Schema): Schema {
  const out: Schema = { ...base };
  for (const key of Object.keys(top)) {
    const value = top[key];
    if (key === 'properties' && isRecord(out.properties) && isRecord(value)) {
      const merged: Schema = { ...out.properties };
      for (const k of Object.keys(value)) put(merged, k, value[k]);
      out.properties = merged;
    } else if (key === 'required' && Array.isArray(out.required) && Array.isArray(value)) {
      out.required = [...new Set([...(out.required as string[]), ...(value as string[])])];
    } else if (key === 'description' && typeof out.description === 'string' && value !== out.description) {
      out.description = `${value as string} ${out.description}`;
    } else {
      put(out, key, value);
    }
  }
  return out;
}

function bare(source: Record<string, unknown>, why: string): Schema {
  const out: Schema = {};
  const type = normalizeType(source.type);
  if (type !== undefined) out.type = type;
  out.description = `(${why})`;
  return finalize(out);
}

function walk(ctx: Walk, value: unknown, depth: number, path: Set<object>, refs: readonly string[]): Schema {
  if (value === true || value === undefined) return {};
  if (value === false) return { description: '(no value is accepted here)' };
  if (!isRecord(value)) return {};
  if (path.has(value))
    return finalize({ type: 'object', description: '(recursive structure; any object accepted)' });
  if (depth > ctx.limits.maxDepth) return bare(value, 'nested schema omitted: too deep');
  ctx.nodes += 1;
  if (ctx.nodes > ctx.limits.maxNodes) return bare(value, 'nested schema omitted: schema too large');
  path.add(value);
  try {
    return walkNode(ctx, value, depth, path, refs);
  } finally {
    path.delete(value);
  }
}

function walkRef(
  ctx: Walk,
  src: Record<string, unknown>,
  ref: string,
  depth: number,
  path: Set<object>,
  refs: readonly string[],
): Schema {
  const siblings: Schema = {};
  for (const key of Object.keys(src)) {
    if (key !== '$ref' && key !== '$defs' && key !== 'definitions') put(siblings, key, src[key]);
  }
  const target = ref.startsWith('#') ? resolvePointer(ctx.root, ref) : undefined;
  if (refs.includes(ref) || ref === '#' || (target !== undefined && target === ctx.root)) {
    const type = isRecord(target) ? normalizeType(target.type) : undefined;
    const out: Schema = { type: typeof type === 'string' && type !== 'null' ? type : 'object' };
    const desc = typeof siblings.description === 'string' ? siblings.description : undefined;
    const why = `recursive reference to ${refName(ref)}; any ${out.type === 'object' ? 'object' : 'value of this type'} accepted`;
    const description = withNotes(desc, [note(why)], ctx.limits.maxDescriptionLength);
    if (description !== undefined) out.description = description;
    return finalize(out);
  }
  if (!isRecord(target) && typeof target !== 'boolean') {
    const base = walkNode(ctx, siblings, depth, path, refs);
    const desc = typeof base.description === 'string' ? base.description : undefined;
    const description = withNotes(
      desc,
      [note(`schema ${ref} could not be resolved; any value accepted`)],
      ctx.limits.maxDescriptionLength,
    );
    if (description !== undefined) base.description = description;
    return base;
  }
  const combined: Schema = isRecord(target) ? { ...target } : {};
  for (const key of Object.keys(siblings)) put(combined, key, siblings[key]);
  if (target === false) return { description: '(no value is accepted here)' };
  return walk(ctx, combined, depth + 1, path, [...refs, ref]);
}

function walkUnion(
  ctx: Walk,
  branches: unknown[],
  depth: number,
  path: Set<object>,
  refs: readonly string[],
): Schema | undefined {
  let hasNull = false;
  const kept: Schema[] = [];
  let unconstrained = false;
  for (const branch of branches) {
    if (isNullBranch(branch)) {
      hasNull = true;
      continue;
    }
    const s = walk(ctx, branch, depth + 1, path, refs);
    if (isEmpty(s) && !(branch === false)) unconstrained = true;
    else if (Array.isArray(s.anyOf) && Object.keys(s).every((k) => k === 'anyOf' || k === 'description')) {
      // a union inside a union: one flat list
      for (const inner of s.anyOf as Schema[]) {
        if (inner.type === 'null' && Object.keys(inner).length === 1) hasNull = true;
        else kept.push(inner);
      }
    } else kept.push(s);
  }
  if (unconstrained) return undefined;
  if (kept.length === 0) return hasNull ? { type: 'null' } : undefined;
  if (kept.length === 1) {
    const only = kept[0] as Schema;
    return hasNull ? makeNullable(only) : only;
  }
  const seen = new Set<string>();
  const unique = kept.filter((s) => {
    const key = safeJson(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length === 1) return hasNull ? makeNullable(unique[0] as Schema) : (unique[0] as Schema);
  return { anyOf: hasNull ? [...unique, { type: 'null' }] : unique };
}

function walkNode(
  ctx: Walk,
  src: Record<string, unknown>,
  depth: number,
  path: Set<object>,
  refs: readonly string[],
): Schema {
  const ref = own(src, '$ref');
  if (typeof ref === 'string') return walkRef(ctx, src, ref, depth, path, refs);

  const out: Schema = {};
  const notes: string[] = [];
  const max = ctx.limits.maxDescriptionLength;

  let type = normalizeType(own(src, 'type'));
  if (own(src, 'nullable') === true && type !== undefined) {
    const list = typeof type === 'string' ? [type] : type;
    if (!list.includes('null')) type = [...list, 'null'];
  }

  let description: string | undefined;
  const rawDescription = own(src, 'description');
  const title = own(src, 'title');
  if (typeof rawDescription === 'string') description = rawDescription;
  else if (typeof title === 'string') description = title;

  // Values.
  const rawEnum = own(src, 'enum');
  if (Array.isArray(rawEnum)) {
    const values = rawEnum.filter(isPrimitive);
    const unique = values.filter((v, i) => values.indexOf(v) === i);
    if (unique.length > 0) out.enum = unique;
  }
  if (Object.hasOwn(src, 'const')) {
    const c = src.const;
    if (isPrimitive(c)) out.enum = [c];
    else notes.push(note(`must equal ${safeJson(c)}`));
  }

  // Numbers.
  const minimum = finiteNumber(own(src, 'minimum'));
  const maximum = finiteNumber(own(src, 'maximum'));
  if (minimum !== undefined) out.minimum = minimum;
  if (maximum !== undefined) out.maximum = maximum;
  const exMin = own(src, 'exclusiveMinimum');
  const exMax = own(src, 'exclusiveMaximum');
  if (finiteNumber(exMin) !== undefined) notes.push(`must be > ${exMin}`);
  else if (exMin === true && minimum !== undefined) notes.push(`must be > ${minimum}`);
  if (finiteNumber(exMax) !== undefined) notes.push(`must be < ${exMax}`);
  else if (exMax === true && maximum !== undefined) notes.push(`must be < ${maximum}`);
  const multipleOf = finiteNumber(own(src, 'multipleOf'));
  if (multipleOf !== undefined) notes.push(`a multiple of ${multipleOf}`);

  // Strings.
  const minLength = count(own(src, 'minLength'));
  const maxLength = count(own(src, 'maxLength'));
  if (minLength !== undefined) out.minLength = minLength;
  if (maxLength !== undefined) out.maxLength = maxLength;
  const pattern = own(src, 'pattern');
  if (typeof pattern === 'string') notes.push(note(`pattern: ${pattern}`));
  const format = own(src, 'format');
  if (typeof format === 'string' && format !== '') {
    if (ctx.limits.keepFormats.has(format)) out.format = format;
    else notes.push(note(`format: ${format}`));
  }

  // Arrays.
  const items = own(src, 'items');
  const prefixItems = own(src, 'prefixItems');
  const tuple = Array.isArray(items) ? items : Array.isArray(prefixItems) ? prefixItems : undefined;
  if (isRecord(items)) {
    out.items = walk(ctx, items, depth + 1, path, refs);
  } else if (tuple !== undefined && tuple.length > 0) {
    const union = walkUnion(ctx, tuple, depth, path, refs);
    out.items = union ?? {};
    notes.push('items in a fixed order');
  }
  const minItems = count(own(src, 'minItems'));
  const maxItems = count(own(src, 'maxItems'));
  if (minItems !== undefined) out.minItems = minItems;
  if (maxItems !== undefined) out.maxItems = maxItems;
  if (own(src, 'uniqueItems') === true) notes.push('items must be unique');

  // Objects.
  const properties = own(src, 'properties');
  if (isRecord(properties)) {
    const props: Schema = {};
    for (const key of Object.keys(properties)) {
      const value = properties[key];
      if (isRecord(value) || typeof value === 'boolean')
        put(props, key, walk(ctx, value, depth + 1, path, refs));
    }
    out.properties = props;
  }
  const required = own(src, 'required');
  if (Array.isArray(required) && isRecord(out.properties)) {
    const props = out.properties;
    const names = required.filter(
      (r, i): r is string => typeof r === 'string' && Object.hasOwn(props, r) && required.indexOf(r) === i,
    );
    if (names.length > 0) out.required = names;
  }
  // additionalProperties: Gemini rejects the keyword; a map's value type goes into the description.
  const additional = own(src, 'additionalProperties');
  if (isRecord(additional)) {
    const values = walk(ctx, additional, depth + 1, path, refs);
    const t = normalizeType(values.type);
    if (t !== undefined) notes.push(note(`any keys; values: ${typeof t === 'string' ? t : t.join(' or ')}`));
  }
  const propertyNames = own(src, 'propertyNames');
  if (isRecord(propertyNames) && typeof propertyNames.pattern === 'string') {
    notes.push(note(`property names must match ${propertyNames.pattern}`));
  }
  const patternProperties = own(src, 'patternProperties');
  if (isRecord(patternProperties)) {
    const patterns = Object.keys(patternProperties);
    if (patterns.length > 0) notes.push(note(`property names matching ${patterns.join(', ')}`));
  }

  const fallbackType =
    type ?? (isRecord(out.properties) ? 'object' : out.items !== undefined ? 'array' : undefined);

  // Defaults.
  if (Object.hasOwn(src, 'default') && src.default !== null && src.default !== undefined) {
    notes.push(note(`default: ${safeJson(src.default)}`));
  }

  // Combinators, merged with what this node says itself.
  let result: Schema = out;
  const allOf = own(src, 'allOf');
  if (Array.isArray(allOf)) {
    let merged: Schema = {};
    for (const branch of allOf) merged = overlay(merged, walk(ctx, branch, depth + 1, path, refs));
    result = overlay(merged, result);
  }
  const union = own(src, 'anyOf') ?? own(src, 'oneOf');
  if (Array.isArray(union)) {
    const u = walkUnion(ctx, union, depth, path, refs);
    if (u !== undefined) {
      if (Array.isArray(u.anyOf)) {
        result = { ...result, anyOf: u.anyOf };
        if (typeof u.description === 'string' && description === undefined) description = u.description;
      } else {
        const inner: Schema = { ...u };
        if (typeof inner.description === 'string' && description === undefined)
          description = inner.description;
        delete inner.description;
        result = overlay(inner, result);
        if (type !== undefined && normalizeType(inner.type) !== undefined) type = undefined; // branch type wins
      }
    }
  }

  const ordered: Schema = {};
  const finalType =
    type ?? (result.type === undefined && result.anyOf === undefined ? fallbackType : undefined);
  if (finalType !== undefined) ordered.type = finalType;
  const finalDescription = withNotes(description, notes, max);
  if (finalDescription !== undefined) ordered.description = finalDescription;
  else if (typeof result.description === 'string') ordered.description = result.description;
  for (const key of Object.keys(result)) {
    if (key === 'description') continue;
    if (key === 'type' && ordered.type !== undefined) continue;
    put(ordered, key, result[key]);
  }
  return finalize(ordered);
}

/** The top level as the APIs require it: `type: "object"` with `properties`, no union, not nullable. */
function asTopLevel(schema: Schema): Schema {
  const out: Schema = {};
  const notes: string[] = [];
  let body = schema;
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as Schema[]).filter((b) => b.type !== 'null');
    const objects = branches.filter((b) => b.type === 'object' || isRecord(b.properties));
    const props: Schema = {};
    let required: string[] | undefined;
    for (const b of objects) {
      if (isRecord(b.properties))
        for (const k of Object.keys(b.properties)) {
          if (!Object.hasOwn(props, k)) put(props, k, b.properties[k]);
        }
      const r = Array.isArray(b.required) ? (b.required as string[]) : [];
      required = required === undefined ? r : required.filter((x) => r.includes(x));
    }
    body = { ...schema, properties: { ...props, ...(isRecord(schema.properties) ? schema.properties : {}) } };
    delete body.anyOf;
    if (required !== undefined && required.length > 0) body.required = required;
    if (branches.length > 1)
      notes.push(`accepts one of ${branches.length} argument shapes; pass the properties of one`);
  }
  const type = normalizeType(body.type);
  const types = typeof type === 'string' ? [type] : (type ?? []);
  if (types.length > 0 && !types.includes('object')) {
    notes.push(`the server declared a ${types.join(' or ')} input, not an object`);
  }
  out.type = 'object';
  const description = typeof body.description === 'string' ? body.description : undefined;
  const finalDescription =
    notes.length > 0 ? withNotes(description, notes, Number.POSITIVE_INFINITY) : description;
  if (finalDescription !== undefined) out.description = finalDescription;
  out.properties =
    isRecord(body.properties) && types.every((t) => t === 'object' || t === 'null') ? body.properties : {};
  if (types.length > 0 && !types.includes('object')) return out;
  for (const key of Object.keys(body)) {
    if (key === 'type' || key === 'description' || key === 'properties' || key === 'anyOf') continue;
    if (TYPED_KEYS.has(key) && key !== 'required') continue;
    if (key === 'required') {
      const props = out.properties as Schema;
      const req = (body.required as string[]).filter((r) => Object.hasOwn(props, r));
      if (req.length > 0) out.required = req;
      continue;
    }
    put(out, key, body[key]);
  }
  return out;
}

function sizeOf(schema: Schema): number {
  return Buffer.byteLength(JSON.stringify(schema), 'utf8');
}

function run(schema: unknown, limits: Limits): Schema {
  const ctx: Walk = { root: schema, limits, nodes: 0 };
  return asTopLevel(walk(ctx, schema, 0, new Set(), []));
}

/**
 * A tool input schema every major model API accepts. Pure and deterministic
 * (the same input gives the same bytes), never throws, and the result is
 * always an object schema (`type: "object"`, `properties` present) without
 * `$ref`, `$defs`, `$schema`, `oneOf`, `allOf`, `const`,
 * `exclusiveMinimum`/`exclusiveMaximum`, `default`, `pattern`,
 * `additionalProperties`, type lists or unsupported `format`s (see the
 * module comment for what is kept). See {@link SanitizeSchemaOptions} for
 * the bounds.
 *
 * @example sanitizeSchema({ $schema: 'http://json-schema.org/draft-07/schema#' }) // { type: 'object', properties: {} }
 */
export function sanitizeSchema(
  schema: unknown,
  options: SanitizeSchemaOptions = {},
): Record<string, unknown> {
  const maxBytes = options.maxBytes ?? 65536;
  const base: Limits = {
    maxDescriptionLength: options.maxDescriptionLength ?? 2048,
    maxDepth: options.maxDepth ?? 12,
    maxNodes: options.maxNodes ?? 2000,
    keepFormats: new Set(options.keepFormats ?? ['date-time']),
  };
  const passes: Limits[] = [
    base,
    {
      ...base,
      maxDescriptionLength: Math.min(base.maxDescriptionLength, 200),
      maxDepth: Math.min(base.maxDepth, 6),
      maxNodes: Math.min(base.maxNodes, 500),
    },
    { ...base, maxDescriptionLength: Math.min(base.maxDescriptionLength, 100), maxDepth: 1, maxNodes: 200 },
  ];
  let size = 0;
  try {
    for (const limits of passes) {
      const out = run(schema, limits);
      size = sizeOf(out);
      if (size <= maxBytes) return out;
    }
  } catch {
    return {
      type: 'object',
      properties: {},
      description: '(the input schema could not be read; pass the arguments the tool description names)',
    };
  }
  return {
    type: 'object',
    properties: {},
    description: `(the input schema is too large to declare: over ${size} bytes; pass the arguments the tool description names)`,
  };
}
