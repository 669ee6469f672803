import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level (deterministic). Cycles become `"[cycle]"`. */
export function stableStringify(value: unknown): string {
  const seen = new Set<unknown>();
  const walk = (v: unknown): string => {
    if (v === null || typeof v !== 'object') {
      const s = JSON.stringify(v);
      return s === undefined ? 'null' : s;
    }
    if (seen.has(v)) return '"[cycle]"';
    seen.add(v);
    let out: string;
    if (Array.isArray(v)) out = `[${v.map(walk).join(',')}]`;
    else {
      const rec = v as Record<string, unknown>;
      const keys = Object.keys(rec)
        .filter((k) => rec[k] !== undefined)
        .sort();
      out = `{${keys.map((k) => `${JSON.stringify(k)}:${walk(rec[k])}`).join(',')}}`;
    }
    seen.delete(v);
    return out;
  };
  return walk(value);
}

/** sha256 hex of {@link stableStringify}. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex');
}
