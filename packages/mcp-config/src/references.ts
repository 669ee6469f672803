/**
 * The one scanner of `${...}` references. Linear in the length of the text
 * (no backtracking regex): a reference is `${` up to the first `}` after it
 * (no nesting, no escape: as Claude Code reads it); once no `}` follows a
 * `${`, no later reference can complete and the scan stops.
 */

/** One `${...}` in a text: `text.slice(start, end)` is the whole reference. */
export interface Reference {
  start: number;
  end: number;
  /** The variable name when `body` is `NAME` or `NAME:-default` with a valid NAME. */
  name?: string;
  /** The default of `${NAME:-default}` (possibly empty). */
  fallback?: string;
}

function isNameStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57);
}

/**
 * Visit every reference of `text` without allocating: `start`/`end` bound
 * the whole `${...}`; `nameEnd` is where a valid name ends (-1 when the body
 * is not `NAME` or `NAME:-default`); `fallbackStart` is where the default
 * begins (-1 without one; the default ends at `end - 1`). Pure, O(length).
 */
export function forEachReference(
  text: string,
  visit: (start: number, end: number, nameEnd: number, fallbackStart: number) => void,
): void {
  let from = 0;
  for (;;) {
    const start = text.indexOf('${', from);
    if (start === -1) return;
    const close = text.indexOf('}', start + 2);
    if (close === -1) return;
    let nameEnd = -1;
    let fallbackStart = -1;
    const bodyStart = start + 2;
    if (bodyStart < close && isNameStart(text.charCodeAt(bodyStart))) {
      let i = bodyStart + 1;
      while (i < close && isNameChar(text.charCodeAt(i))) i++;
      if (i === close) nameEnd = i;
      else if (i + 1 < close && text.charCodeAt(i) === 58 && text.charCodeAt(i + 1) === 45) {
        nameEnd = i;
        fallbackStart = i + 2;
      }
    }
    visit(start, close + 1, nameEnd, fallbackStart);
    from = close + 1;
  }
}

/** Every reference of `text`, in order. Pure, O(length). */
export function scanReferences(text: string): Reference[] {
  const out: Reference[] = [];
  forEachReference(text, (start, end, nameEnd, fallbackStart) => {
    const ref: Reference = { start, end };
    if (nameEnd !== -1) ref.name = text.slice(start + 2, nameEnd);
    if (fallbackStart !== -1) ref.fallback = text.slice(fallbackStart, end - 1);
    out.push(ref);
  });
  return out;
}
