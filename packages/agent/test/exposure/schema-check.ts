import { readFileSync } from 'node:fs';

/** Every key a sanitized schema may contain. */
export const ALLOWED_KEYS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'items',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'format',
  'minItems',
  'maxItems',
  'anyOf',
]);

/** Keywords allowed only with one type (Gemini rejects them elsewhere). */
const ONLY_WITH: Record<string, readonly string[]> = {
  minLength: ['string'],
  maxLength: ['string'],
  format: ['string'],
  enum: ['string'],
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  items: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  properties: ['object'],
  required: ['object'],
};

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

export interface CatalogTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/** The 252 real tools of 23 public MCP servers (see fixtures). */
export function loadCatalog(): CatalogTool[] {
  return JSON.parse(
    readFileSync(new URL('../fixtures/search-catalog.json', import.meta.url), 'utf8'),
  ) as CatalogTool[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every rule a sanitized schema must follow, as a list of problems (empty
 * when it is fine). `maxDescription` bounds every description's length.
 */
export function schemaProblems(schema: unknown, maxDescription = 2048 + 600): string[] {
  const problems: string[] = [];
  if (!isRecord(schema)) return ['top level is not an object'];
  if (schema.type !== 'object') problems.push(`top-level type is ${JSON.stringify(schema.type)}`);
  if (!isRecord(schema.properties)) problems.push('top level has no properties object');
  if ('anyOf' in schema) problems.push('top level has anyOf');
  const visit = (node: unknown, at: string): void => {
    if (!isRecord(node)) {
      problems.push(`${at} is not an object schema`);
      return;
    }
    for (const key of Object.keys(node)) {
      if (!ALLOWED_KEYS.has(key)) problems.push(`${at} has key ${key}`);
    }
    const type = node.type;
    if (type !== undefined && (typeof type !== 'string' || !TYPES.has(type)))
      problems.push(`${at}.type is ${JSON.stringify(type)} (one type name expected)`);
    for (const key of Object.keys(node)) {
      const allowed = ONLY_WITH[key];
      if (allowed && !allowed.includes(type as string))
        problems.push(`${at}.${key} with type ${JSON.stringify(type)}`);
    }
    if (node.description !== undefined) {
      if (typeof node.description !== 'string') problems.push(`${at}.description is not a string`);
      else if (node.description.length > maxDescription)
        problems.push(`${at}.description is ${node.description.length} chars`);
    }
    if (node.format !== undefined && node.format !== 'date-time')
      problems.push(`${at}.format is ${node.format}`);
    if (node.enum !== undefined) {
      if (!Array.isArray(node.enum) || node.enum.length === 0)
        problems.push(`${at}.enum is empty or not an array`);
      else if (!node.enum.every((v) => typeof v === 'string')) problems.push(`${at}.enum has a non-string`);
    }
    if (node.properties !== undefined) {
      if (!isRecord(node.properties)) problems.push(`${at}.properties is not an object`);
      else for (const k of Object.keys(node.properties)) visit(node.properties[k], `${at}.properties.${k}`);
    }
    if (node.required !== undefined) {
      const props = isRecord(node.properties) ? node.properties : {};
      if (!Array.isArray(node.required)) problems.push(`${at}.required is not an array`);
      else
        for (const r of node.required)
          if (typeof r !== 'string' || !Object.hasOwn(props, r)) problems.push(`${at}.required names ${r}`);
    }
    if (node.items !== undefined) visit(node.items, `${at}.items`);
    if (type === 'array' && node.items === undefined) problems.push(`${at} is an array without items`);
    if (type === 'object' && node.properties === undefined)
      problems.push(`${at} is an object without properties`);
    if (Array.isArray(node.enum) && node.enum.includes('')) problems.push(`${at}.enum has an empty string`);
    if (node.anyOf !== undefined) {
      if (!Array.isArray(node.anyOf) || node.anyOf.length < 2) problems.push(`${at}.anyOf has < 2 branches`);
      else for (const [i, b] of node.anyOf.entries()) visit(b, `${at}.anyOf[${i}]`);
    }
  };
  visit(schema, '$');
  return problems;
}
