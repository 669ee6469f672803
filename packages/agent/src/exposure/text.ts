/**
 * Text primitives for tool search: identifier-aware tokenizing and a light
 * suffix stemmer. Both are linear scans over the input (no regular
 * expressions run on user text), so any query costs time proportional to its
 * length.
 */

const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const OTHER = 0;

function charClass(code: number): number {
  if (code >= 97 && code <= 122) return LOWER;
  if (code >= 65 && code <= 90) return UPPER;
  if (code >= 48 && code <= 57) return DIGIT;
  // Letters outside ASCII (accented words) stay inside words.
  if (code >= 0xc0 && code !== 0xd7 && code !== 0xf7) return LOWER;
  return OTHER;
}

/**
 * Splits text into lowercase words. Identifiers are split too:
 * `create_pull_request`, `getFileContents`, `list-issues`, `HTTPServer` ->
 * words; letters and digits stay together (`context7`, `s3`).
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  const push = (end: number): void => {
    if (start >= 0 && end > start) out.push(text.slice(start, end).toLowerCase());
    start = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const cls = charClass(text.charCodeAt(i));
    if (cls === OTHER) {
      push(i);
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    const prev = charClass(text.charCodeAt(i - 1));
    // camelCase: a lower letter or digit followed by an upper letter.
    if (cls === UPPER && (prev === LOWER || prev === DIGIT)) {
      push(i);
      start = i;
      continue;
    }
    // Acronym before a word: "HTTPServer" -> "HTTP", "Server".
    if (cls === LOWER && prev === UPPER && i - start >= 2 && charClass(text.charCodeAt(i - 2)) === UPPER) {
      push(i - 1);
      start = i - 1;
    }
  }
  push(text.length);
  return out;
}

function isVowel(c: string): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';
}

function undouble(w: string): string {
  const n = w.length;
  if (n < 3) return w;
  const last = w[n - 1] as string;
  if (last === w[n - 2] && !isVowel(last) && last !== 'l' && last !== 's' && last !== 'z')
    return w.slice(0, -1);
  return w;
}

/**
 * A light English stemmer: plural, -ing, -ed, -ation, -er, -ly and a final -e
 * are stripped so that `creating`, `created`, `creates`, `create` and
 * `creation` share one stem. Not linguistically exact; only consistent.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length - 3 >= 3) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length - 2 >= 3) w = undouble(w.slice(0, -2));
  if (w.endsWith('ation') && w.length > 6) w = w.slice(0, -3);
  else if ((w.endsWith('tion') || w.endsWith('sion')) && w.length > 6) w = w.slice(0, -3);
  if (w.endsWith('er') && w.length - 2 >= 4) w = w.slice(0, -2);
  if (w.endsWith('ly') && w.length - 2 >= 4) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}
