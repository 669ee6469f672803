/**
 * Tool search: finds the MCP tools a task needs in a pool of hundreds.
 *
 * Ranking, in order:
 * 1. the query is exactly a tool's name or full name (`tool`, `server__tool`,
 *    `mcp__server__tool`);
 * 2. the query contains a tool's identifier (`call create_refund for ...`);
 * 3. the query names a server ("slack: send a message", "in github ..."):
 *    that server's tools, matching ones first;
 * 4. every other matching tool.
 * Within a rank, a BM25F score over the tool's name, server, first sentence,
 * rest of the description and input-schema properties, with stemming and a
 * hand-built vocabulary of equivalent words expanding each query word.
 *
 * Pure and offline. `createToolSearchIndex` builds the index once for
 * repeated queries; `searchTools` builds one per call.
 */
import { stem, tokenize } from './text';
import { RELATED, REWRITES, SCOPE_MARKERS, SERVER_ALIASES, STOPWORDS, SYNONYM_GROUPS } from './vocabulary';

/** A tool as search sees it. Extra properties are kept: results are the same objects. */
export interface SearchableTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: unknown;
}

export interface ToolSearchOptions {
  /** Most results returned. @default 10 */
  limit?: number;
}

export interface ToolSearchIndex<T extends SearchableTool = SearchableTool> {
  /** Number of tools indexed. */
  readonly size: number;
  /** Best first; the same objects that were indexed. */
  search(query: string, options?: ToolSearchOptions): T[];
}

const DEFAULT_LIMIT = 10;

// BM25F fields, in the order `fieldsOf` returns them: name, server, first
// sentence of the description, rest of the description, schema properties.
const FIELD_COUNT = 5;
const FIELD_WEIGHT = [3, 0.5, 1.5, 0.6, 0.5];
const FIELD_B = [0.3, 0, 0.5, 0.75, 0.6];
const K1 = 1.2;

/** Caps that keep a long description or schema from drowning the name. */
const MAX_SUMMARY_TOKENS = 40;
const MAX_BODY_TOKENS = 200;
const MAX_PARAM_DESCRIPTION_TOKENS = 16;
const MAX_PARAMS = 40;
const MAX_ENUM_VALUES = 12;
/** Text read from a description; the body token cap is reached well before. */
const MAX_DESCRIPTION_CHARS = 3000;
const MAX_PARAM_DESCRIPTION_CHARS = 200;

/** Weights of vocabulary expansions relative to the query word itself. */
const SYNONYM_WEIGHT = 0.5;
const RELATED_WEIGHT = 0.4;
const JOINED_WEIGHT = 0.8;
/** A query word that begins a longer indexed word (`repo` -> `repository`). */
const PREFIX_WEIGHT = 0.5;
const MIN_PREFIX = 4;
const MAX_COMPLETIONS = 8;

interface Alternative {
  term: string;
  weight: number;
}

interface Concept {
  alternatives: Alternative[];
  /** Counts toward coverage (joined word pairs do not). */
  counted: boolean;
}

interface Postings {
  docs: number[];
  /** Saturated BM25F term score (idf included) per doc. */
  scores: number[];
}

interface ServerPhrase {
  tokens: string[];
  server: string;
  /** A common word as a server name: trusted only after "in", "via"... or before ":". */
  weak: boolean;
}

interface Vocabulary {
  synonyms: Map<string, Set<string>>;
  related: Map<string, Set<string>>;
  meaningful: Set<string>;
}

function buildVocabulary(): Vocabulary {
  const synonyms = new Map<string, Set<string>>();
  const meaningful = new Set<string>();
  for (const group of SYNONYM_GROUPS) {
    const stems = group.map((w) => stem(w));
    for (const w of group) meaningful.add(w);
    for (const s of stems) {
      let set = synonyms.get(s);
      if (set === undefined) {
        set = new Set();
        synonyms.set(s, set);
      }
      for (const other of stems) if (other !== s) set.add(other);
    }
  }
  const related = new Map<string, Set<string>>();
  for (const [word, targets] of Object.entries(RELATED)) {
    meaningful.add(word);
    const s = stem(word);
    let set = related.get(s);
    if (set === undefined) {
      set = new Set();
      related.set(s, set);
    }
    for (const t of targets) for (const tok of tokenize(t)) if (stem(tok) !== s) set.add(stem(tok));
  }
  return { synonyms, related, meaningful };
}

function firstSentenceEnd(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) return i; // newline
    if (
      c === 46 /* . */ &&
      (i + 1 === text.length || text.charCodeAt(i + 1) === 32 || text.charCodeAt(i + 1) === 10)
    ) {
      return i;
    }
  }
  return text.length;
}

function schemaText(schema: unknown): { names: string[]; descriptions: string[] } {
  const names: string[] = [];
  const descriptions: string[] = [];
  if (schema === null || typeof schema !== 'object') return { names, descriptions };
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return { names, descriptions };
  let count = 0;
  for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
    if (count++ >= MAX_PARAMS) break;
    names.push(key);
    if (value !== null && typeof value === 'object') {
      const d = (value as { description?: unknown }).description;
      if (typeof d === 'string') descriptions.push(d);
      const values = (value as { enum?: unknown }).enum;
      if (Array.isArray(values)) {
        for (const v of values.slice(0, MAX_ENUM_VALUES)) if (typeof v === 'string') names.push(v);
      }
    }
  }
  return { names, descriptions };
}

function stems(tokens: string[], stemOf: (word: string) => string, max = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    if (out.length >= max) break;
    out.push(stemOf(t));
  }
  return out;
}

/** A stemmer that remembers its answers; one per index build, dropped after it. */
function memoStem(): (word: string) => string {
  const cache = new Map<string, string>();
  return (word) => {
    let s = cache.get(word);
    if (s === undefined) {
      s = stem(word);
      cache.set(word, s);
    }
    return s;
  };
}

/** Per-field stemmed terms of one tool. */
function fieldsOf(tool: SearchableTool, stemOf: (word: string) => string): string[][] {
  const nameTokens = tokenize(tool.name);
  const name = stems(nameTokens, stemOf);
  if (nameTokens.length > 1) name.push(stemOf(nameTokens.join('')));
  const server = stems(tokenize(tool.server), stemOf);
  const description =
    typeof tool.description === 'string' ? tool.description.slice(0, MAX_DESCRIPTION_CHARS).trim() : '';
  const cut = firstSentenceEnd(description);
  const summary = stems(tokenize(description.slice(0, cut)), stemOf, MAX_SUMMARY_TOKENS);
  const body = stems(tokenize(description.slice(cut)), stemOf, MAX_BODY_TOKENS);
  const { names, descriptions } = schemaText(tool.inputSchema);
  const params: string[] = [];
  for (const n of names) params.push(...stems(tokenize(n), stemOf));
  for (const d of descriptions) {
    params.push(
      ...stems(tokenize(d.slice(0, MAX_PARAM_DESCRIPTION_CHARS)), stemOf, MAX_PARAM_DESCRIPTION_TOKENS),
    );
  }
  return [name, server, summary, body, params];
}

function keyOf(text: string): string {
  return text.trim().toLowerCase();
}

function stripQuotes(text: string): string {
  let s = text.trim();
  while (s.length >= 2) {
    const a = s[0];
    const b = s[s.length - 1];
    if ((a === '`' || a === '"' || a === "'") && a === b) s = s.slice(1, -1).trim();
    else break;
  }
  return s;
}

/** Whitespace-separated words of the query with surrounding punctuation removed. */
function rawWords(query: string): string[] {
  const out: string[] = [];
  for (const part of query.split(/\s+/)) {
    let start = 0;
    let end = part.length;
    while (start < end && !isIdentChar(part.charCodeAt(start))) start++;
    while (end > start && !isIdentChar(part.charCodeAt(end - 1))) end--;
    if (end > start) out.push(part.slice(start, end).toLowerCase());
  }
  return out;
}

function isIdentChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

function isIdentifier(word: string): boolean {
  // Only names with a separator (`create_refund`, `list-issues`) are unambiguous inside a sentence.
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c === 95 || c === 45) return true;
  }
  return false;
}

/**
 * Builds a search index over `tools` once; `search` can then be called many
 * times. The tools array is not copied deeply: results are its own objects.
 */
export function createToolSearchIndex<T extends SearchableTool>(tools: readonly T[]): ToolSearchIndex<T> {
  const docs = tools.slice();
  const n = docs.length;
  const vocabulary = buildVocabulary();

  // Exact names: tool name, server__tool, mcp__server__tool (case-insensitive).
  const exact = new Map<string, number[]>();
  const addExact = (key: string, doc: number): void => {
    const list = exact.get(key);
    if (list === undefined) exact.set(key, [doc]);
    else if (!list.includes(doc)) list.push(doc);
  };

  const fields: string[][][] = [];
  const nameTerms: string[][] = [];
  const serverOf: string[] = [];
  const avgLen = new Array<number>(FIELD_COUNT).fill(0);
  const stemOf = memoStem();
  docs.forEach((tool, i) => {
    const f = fieldsOf(tool, stemOf);
    fields.push(f);
    nameTerms.push([...new Set(stems(tokenize(tool.name), stemOf))]);
    serverOf.push(tool.server);
    for (let k = 0; k < FIELD_COUNT; k++) avgLen[k] = (avgLen[k] as number) + (f[k] as string[]).length;
    addExact(keyOf(tool.name), i);
    addExact(keyOf(`${tool.server}__${tool.name}`), i);
    addExact(keyOf(`mcp__${tool.server}__${tool.name}`), i);
  });
  for (let k = 0; k < FIELD_COUNT; k++) avgLen[k] = n === 0 ? 1 : Math.max(1, (avgLen[k] as number) / n);

  // Pseudo term frequency per (term, doc), then saturated and idf-weighted once.
  const postings = new Map<string, Postings>();
  const tf = new Map<string, number>();
  for (let d = 0; d < n; d++) {
    const f = fields[d] as string[][];
    tf.clear();
    for (let k = 0; k < FIELD_COUNT; k++) {
      const terms = f[k] as string[];
      if (terms.length === 0) continue;
      const norm =
        1 - (FIELD_B[k] as number) + (FIELD_B[k] as number) * (terms.length / (avgLen[k] as number));
      const w = (FIELD_WEIGHT[k] as number) / norm;
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + w);
    }
    for (const [t, v] of tf) {
      let p = postings.get(t);
      if (p === undefined) {
        p = { docs: [], scores: [] };
        postings.set(t, p);
      }
      p.docs.push(d);
      p.scores.push(v);
    }
  }
  for (const p of postings.values()) {
    const df = p.docs.length;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    for (let k = 0; k < df; k++) {
      const v = p.scores[k] as number;
      p.scores[k] = (idf * v) / (K1 + v);
    }
  }

  const rewrites = buildRewrites();
  const serverPhrases = buildServerPhrases(docs, vocabulary, postings, serverOf);
  const sortedTerms = [...postings.keys()].sort();

  /** Indexed terms that start with `prefix` (`config` -> `configurat`), at most a few. */
  function completions(prefix: string): string[] {
    let lo = 0;
    let hi = sortedTerms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sortedTerms[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < sortedTerms.length && out.length < MAX_COMPLETIONS; i++) {
      const t = sortedTerms[i] as string;
      if (!t.startsWith(prefix)) break;
      if (t !== prefix) out.push(t);
    }
    return out;
  }

  // Scratch buffers reused by every query (owned by this index only).
  const total = new Float64Array(n);
  const concept = new Float64Array(n);
  const matched = new Float64Array(n);
  const touched = new Uint8Array(n);

  function expand(word: string): Alternative[] {
    const s = stem(word);
    const alternatives: Alternative[] = [{ term: s, weight: 1 }];
    const seen = new Set([s]);
    for (const syn of vocabulary.synonyms.get(s) ?? []) {
      if (!seen.has(syn)) {
        seen.add(syn);
        alternatives.push({ term: syn, weight: SYNONYM_WEIGHT });
      }
    }
    for (const rel of vocabulary.related.get(s) ?? []) {
      if (!seen.has(rel)) {
        seen.add(rel);
        alternatives.push({ term: rel, weight: RELATED_WEIGHT });
      }
    }
    if (s.length >= MIN_PREFIX) {
      for (const longer of completions(s)) {
        if (!seen.has(longer)) {
          seen.add(longer);
          alternatives.push({ term: longer, weight: PREFIX_WEIGHT });
        }
      }
    }
    return alternatives;
  }

  function search(query: string, options: ToolSearchOptions = {}): T[] {
    const requested = options.limit ?? DEFAULT_LIMIT;
    const limit = Number.isNaN(requested) ? DEFAULT_LIMIT : Math.max(0, Math.floor(requested));
    if (limit === 0 || n === 0 || typeof query !== 'string') return [];

    // 1. The whole query is a name.
    const first: number[] = [];
    const exactHits = exact.get(keyOf(stripQuotes(query)));
    if (exactHits !== undefined) first.push(...exactHits);
    // 2. An identifier inside the query is a name.
    for (const word of rawWords(query)) {
      if (!isIdentifier(word)) continue;
      for (const d of exact.get(word) ?? []) if (!first.includes(d)) first.push(d);
    }

    // 3. Servers named in the query.
    const tokens = tokenize(query);
    const lowered = query.toLowerCase();
    const scoped = new Set<string>();
    const consumed = new Uint8Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) {
      if (consumed[i]) continue;
      for (const phrase of serverPhrases) {
        const len = phrase.tokens.length;
        if (i + len > tokens.length) continue;
        let ok = true;
        for (let j = 0; j < len && ok; j++) ok = !consumed[i + j] && tokens[i + j] === phrase.tokens[j];
        if (!ok) continue;
        if (phrase.weak) {
          const before = i > 0 ? (tokens[i - 1] as string) : '';
          const after = i + len < tokens.length ? (tokens[i + len] as string) : '';
          const named = phrase.tokens.join(' ');
          if (!SCOPE_MARKERS.has(before) && after !== 'server' && !lowered.includes(`${named}:`)) continue;
        }
        scoped.add(phrase.server);
        for (let j = 0; j < len; j++) consumed[i + j] = 1;
        break;
      }
    }

    // 4. Text score over the remaining words.
    const rest: string[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i] as string;
      if (consumed[i] || (scoped.size > 0 && t === 'server')) continue;
      rest.push(t);
    }
    const words: string[] = [];
    for (const t of rewrite(rest, rewrites)) if (!STOPWORDS.has(t)) words.push(t);
    const concepts: Concept[] = [];
    const seenStems = new Set<string>();
    for (const w of words) {
      const s = stem(w);
      if (seenStems.has(s)) continue;
      seenStems.add(s);
      concepts.push({ alternatives: expand(w), counted: true });
    }
    for (let i = 0; i + 1 < words.length; i++) {
      const joined = stem(`${words[i]}${words[i + 1]}`);
      if (postings.has(joined))
        concepts.push({ alternatives: [{ term: joined, weight: JOINED_WEIGHT }], counted: false });
    }

    const candidates: number[] = [];
    let countedConcepts = 0;
    const queryTerms = new Map<string, number>();
    for (const c of concepts) {
      if (c.counted) countedConcepts++;
      const local: number[] = [];
      for (const alt of c.alternatives) {
        const prev = queryTerms.get(alt.term) ?? 0;
        if (alt.weight > prev) queryTerms.set(alt.term, alt.weight);
        const p = postings.get(alt.term);
        if (p === undefined) continue;
        for (let k = 0; k < p.docs.length; k++) {
          const d = p.docs[k] as number;
          const v = alt.weight * (p.scores[k] as number);
          if (concept[d] === 0) local.push(d);
          if (v > (concept[d] as number)) concept[d] = v;
        }
      }
      for (const d of local) {
        if (!touched[d]) {
          touched[d] = 1;
          candidates.push(d);
        }
        total[d] = (total[d] as number) + (concept[d] as number);
        if (c.counted) matched[d] = (matched[d] as number) + 1;
        concept[d] = 0;
      }
    }

    const scored: { doc: number; tier: number; score: number }[] = [];
    const firstSet = new Set(first);
    for (const d of candidates) {
      let score = total[d] as number;
      if (countedConcepts > 0) score *= 0.5 + (0.5 * (matched[d] as number)) / countedConcepts;
      const nt = nameTerms[d] as string[];
      if (nt.length > 0) {
        let hit = 0;
        for (const t of nt) hit += queryTerms.get(t) ?? 0;
        score *= 1 + (0.3 * hit) / nt.length;
      }
      total[d] = 0;
      matched[d] = 0;
      touched[d] = 0;
      if (firstSet.has(d)) continue;
      scored.push({ doc: d, tier: scoped.has(serverOf[d] as string) ? 2 : 3, score });
    }
    // The named server's other tools still come before every other server's.
    if (scoped.size > 0) {
      const seen = new Set(candidates);
      for (let d = 0; d < n; d++) {
        if (!seen.has(d) && !firstSet.has(d) && scoped.has(serverOf[d] as string)) {
          scored.push({ doc: d, tier: 2, score: 0 });
        }
      }
    }
    scored.sort((a, b) => a.tier - b.tier || b.score - a.score || a.doc - b.doc);

    const out: T[] = [];
    for (const d of first) {
      if (out.length >= limit) return out;
      out.push(docs[d] as T);
    }
    for (const s of scored) {
      if (out.length >= limit) break;
      out.push(docs[s.doc] as T);
    }
    return out;
  }

  return { size: n, search };
}

interface Rewrite {
  tokens: string[];
  expansion: string[];
}

/** Rewrites by first word, longest first. */
function buildRewrites(): Map<string, Rewrite[]> {
  const out = new Map<string, Rewrite[]>();
  for (const [from, to] of Object.entries(REWRITES)) {
    const tokens = tokenize(from);
    const first = tokens[0];
    if (first === undefined) continue;
    const list = out.get(first) ?? [];
    list.push({ tokens, expansion: tokenize(to) });
    list.sort((a, b) => b.tokens.length - a.tokens.length);
    out.set(first, list);
  }
  return out;
}

/** Replaces abbreviations and idioms by the words tools use (`pr` -> `pull request`). */
function rewrite(tokens: readonly string[], rewrites: Map<string, Rewrite[]>): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    let matched: Rewrite | undefined;
    for (const r of rewrites.get(tokens[i] as string) ?? []) {
      let ok = i + r.tokens.length <= tokens.length;
      for (let j = 1; j < r.tokens.length && ok; j++) ok = tokens[i + j] === r.tokens[j];
      if (ok) {
        matched = r;
        break;
      }
    }
    if (matched === undefined) {
      out.push(tokens[i] as string);
      i++;
    } else {
      out.push(...matched.expansion);
      i += matched.tokens.length;
    }
  }
  return out;
}

/**
 * Phrases that name each server: its full name, its words joined, aliases of
 * well-known services, and a distinctive word of a multi-word name that is
 * no common word (`brave` for `brave-search`, not `search`). Longest first.
 */
function buildServerPhrases(
  docs: readonly SearchableTool[],
  vocabulary: Vocabulary,
  postings: Map<string, Postings>,
  serverOf: readonly string[],
): ServerPhrase[] {
  const servers = [...new Set(docs.map((d) => d.server))];
  const tokensOf = new Map(servers.map((s) => [s, tokenize(s)] as const));
  const tokenOwners = new Map<string, number>();
  for (const toks of tokensOf.values())
    for (const t of new Set(toks)) tokenOwners.set(t, (tokenOwners.get(t) ?? 0) + 1);
  const phrases: ServerPhrase[] = [];
  const add = (tokens: string[], server: string, weak: boolean): void => {
    if (tokens.length === 0) return;
    if (phrases.some((p) => p.server === server && p.tokens.join(' ') === tokens.join(' '))) return;
    phrases.push({ tokens, server, weak });
  };
  /** A word used by tools of at least two other servers is also a common word. */
  const common = (word: string, server: string): boolean => {
    if (STOPWORDS.has(word) || vocabulary.meaningful.has(word)) return true;
    const p = postings.get(stem(word));
    if (p === undefined) return false;
    const others = new Set<string>();
    for (const d of p.docs) if (serverOf[d] !== server) others.add(serverOf[d] as string);
    return others.size >= 2;
  };
  for (const server of servers) {
    const toks = tokensOf.get(server) as string[];
    add(toks, server, toks.length === 1 && common(toks[0] as string, server));
    if (toks.length > 1) add([toks.join('')], server, false);
    for (const t of toks) {
      for (const alias of SERVER_ALIASES[t] ?? []) add(tokenize(alias), server, false);
      if (toks.length > 1 && t.length >= 3 && tokenOwners.get(t) === 1 && !common(t, server))
        add([t], server, false);
    }
  }
  phrases.sort((a, b) => b.tokens.length - a.tokens.length);
  return phrases;
}

/**
 * Ranks `tools` for `query`, best first, and returns at most `limit` of the
 * same objects. Builds an index per call; use `createToolSearchIndex` to
 * search the same tools repeatedly.
 */
export function searchTools<T extends SearchableTool>(
  tools: readonly T[],
  query: string,
  options: ToolSearchOptions = {},
): T[] {
  return createToolSearchIndex(tools).search(query, options);
}
