import { forEachReference } from './references';
import type { Env } from './types';

/** Result of {@link expandVars}. */
export interface ExpandResult {
  /** The text with every resolvable reference replaced; unresolvable ones are left as written. */
  value: string;
  /** Names referenced without a default and not set in the environment (each once, in order). */
  missing: string[];
  /**
   * References whose name is not a variable name (`${}`, `${A B}`), left as
   * written, each once. Never show them: a secret typed in braces lands here.
   */
  invalid: string[];
  /** True when `missing` or `invalid` stopped at `limit`: there are more. */
  truncated?: boolean;
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
  /**
   * Collect at most this many names in `missing` and references in
   * `invalid` each; past it the rest are not listed and `truncated` is set
   * (bounds the work on hostile input with many distinct references).
   * @default Infinity
   */
  limit?: number;
}

function lookup(env: Env, name: string): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined;
}

/**
 * Expand `${VAR}` and `${VAR:-default}` in `text` from `env`. Pure, linear
 * in the length of `text` (a scanner, no backtracking regex).
 *
 * - `${VAR}`: the value of VAR (an empty value is a value); unset = missing, left as written.
 * - `${VAR:-default}`: VAR when set and not empty, else `default` (shell semantics;
 *   the default is taken literally up to the first `}`, it is not expanded again).
 * - Anything else is literal: `$VAR`, `$$`, text. Replacement happens in one
 *   pass, so a value containing `${X}` is never expanded again.
 */
export function expandVars(text: string, env: Env, options: ExpandOptions = {}): ExpandResult {
  const missing = new Set<string>();
  const invalid = new Set<string>();
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let truncated = false;
  let value = '';
  let last = 0;
  forEachReference(text, (start, end, nameEnd, fallbackStart) => {
    if (nameEnd === -1) {
      if (options.partial) return;
      if (invalid.size < limit) invalid.add(text.slice(start, end));
      else truncated = true;
      return;
    }
    const name = text.slice(start + 2, nameEnd);
    const current = lookup(env, name);
    let replacement: string | undefined;
    if (options.partial && current === undefined) return;
    if (fallbackStart === -1) {
      if (current === undefined) {
        if (missing.size < limit) missing.add(name);
        else truncated = true;
        return;
      }
      replacement = current;
    } else {
      replacement = current !== undefined && current !== '' ? current : text.slice(fallbackStart, end - 1);
    }
    value += text.slice(last, start) + replacement;
    last = end;
  });
  value = last === 0 ? text : value + text.slice(last);
  const result: ExpandResult = { value, missing: [...missing], invalid: [...invalid] };
  if (truncated) result.truncated = true;
  return result;
}

/** True when `text` contains at least one `${...}` reference. Pure, linear. */
export function hasReferences(text: string): boolean {
  const start = text.indexOf('${');
  return start !== -1 && text.indexOf('}', start + 2) !== -1;
}

/** Names of the variables `text` refers to (with or without default), each once. Pure, linear. */
export function referencedVariables(text: string): string[] {
  const names = new Set<string>();
  forEachReference(text, (start, _end, nameEnd) => {
    if (nameEnd !== -1) names.add(text.slice(start + 2, nameEnd));
  });
  return [...names];
}
