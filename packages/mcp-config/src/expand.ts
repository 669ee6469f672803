import type { Env } from './types';

/** A `${...}` reference: everything up to the first `}` (no nesting, no escape: as Claude Code does). */
const REFERENCE = /\$\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Result of {@link expandVars}. */
export interface ExpandResult {
  /** The text with every resolvable reference replaced; unresolvable ones are left as written. */
  value: string;
  /** Names referenced without a default and not set in the environment (each once, in order). */
  missing: string[];
  /** References whose name is not a variable name (`${}`, `${A B}`), left as written. */
  invalid: string[];
}

/** Options of {@link expandVars}. */
export interface ExpandOptions {
  /**
   * Only replace references to names present in `env`; leave every other
   * reference as written (not reported missing, default not applied). Used to
   * substitute the plugin root variables alone.
   * @default false
   */
  partial?: boolean;
}

function lookup(env: Env, name: string): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined;
}

/**
 * Expand `${VAR}` and `${VAR:-default}` in `text` from `env`. Pure.
 *
 * - `${VAR}`: the value of VAR (an empty value is a value); unset = missing, left as written.
 * - `${VAR:-default}`: VAR when set and not empty, else `default` (shell semantics;
 *   the default is taken literally up to the first `}`, it is not expanded again).
 * - Anything else is literal: `$VAR`, `$$`, text. Replacement happens in one
 *   pass, so a value containing `${X}` is never expanded again.
 */
export function expandVars(text: string, env: Env, options: ExpandOptions = {}): ExpandResult {
  const missing: string[] = [];
  const invalid: string[] = [];
  if (!text.includes('${')) return { value: text, missing, invalid };
  const value = text.replace(REFERENCE, (whole, body: string) => {
    const sep = body.indexOf(':-');
    const name = sep === -1 ? body : body.slice(0, sep);
    if (!VARIABLE_NAME.test(name)) {
      if (!options.partial && !invalid.includes(whole)) invalid.push(whole);
      return whole;
    }
    const current = lookup(env, name);
    if (options.partial && current === undefined) return whole;
    if (sep === -1) {
      if (current !== undefined) return current;
      if (!missing.includes(name)) missing.push(name);
      return whole;
    }
    return current !== undefined && current !== '' ? current : body.slice(sep + 2);
  });
  return { value, missing, invalid };
}

/** True when `text` contains at least one `${...}` reference. Pure. */
export function hasReferences(text: string): boolean {
  return /\$\{[^}]*\}/.test(text);
}

/** Names of the variables `text` refers to (with or without default), each once. Pure. */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const body = m[1] ?? '';
    const sep = body.indexOf(':-');
    const name = sep === -1 ? body : body.slice(0, sep);
    if (VARIABLE_NAME.test(name) && !names.includes(name)) names.push(name);
  }
  return names;
}
