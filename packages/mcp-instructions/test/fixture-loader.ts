import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashInstructions } from '../src/hash';

/**
 * A table row: history + servers -> expected delta. Strings anywhere in a
 * fixture may be written with sugar, resolved by {@link resolveSugar}:
 * `{"$repeat": "ab", "times": 3}`, `{"$concat": [..]}`, `{"$hashOf": <string>}`.
 */
export interface Fixture {
  name: string;
  rule: string;
  scenario: string;
  history: unknown[];
  servers: unknown[];
  options?: { maxChars?: number };
  expected: null | {
    mcpInstructions: { announced: { server: string; hash: string }[]; retired: string[] };
    content?: string;
    contentIncludes?: string[];
    contentExcludes?: string[];
  };
}

export const FIXTURE_DIR = join(import.meta.dirname, 'fixtures');

export function resolveSugar(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveSugar);
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  if ('$repeat' in obj) return String(resolveSugar(obj.$repeat)).repeat(Number(obj.times));
  if ('$concat' in obj) return (obj.$concat as unknown[]).map((p) => String(resolveSugar(p))).join('');
  if ('$hashOf' in obj) return hashInstructions(String(resolveSugar(obj.$hashOf)));
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, resolveSugar(v)]));
}

export function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => resolveSugar(JSON.parse(readFileSync(join(FIXTURE_DIR, f), 'utf8'))) as Fixture);
}
