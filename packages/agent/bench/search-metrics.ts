/**
 * Ranking metrics for tool search over a query set: recall@1, recall@5 and
 * MRR, overall and by kind. Shared by the `score:search` script and the
 * test that holds the floors.
 */
import { readFileSync } from 'node:fs';
import { createToolSearchIndex, type SearchableTool } from '../src/exposure/search';

export type QueryKind = 'exact' | 'keyword' | 'server-scoped' | 'paraphrase';

export interface SearchQuery {
  kind: QueryKind;
  query: string;
  /** Full names `server__tool`; the query is a hit when any of them is ranked. */
  expected: string[];
}

export interface KindMetrics {
  count: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

export interface QuerySetMetrics {
  byKind: Record<QueryKind, KindMetrics>;
  overall: KindMetrics;
  /** Queries whose expected tools are not in the top 5, with the top 5 returned. */
  misses: { query: SearchQuery; top: string[] }[];
}

export const KINDS: readonly QueryKind[] = ['exact', 'keyword', 'server-scoped', 'paraphrase'];

const fixtures = new URL('../test/fixtures/', import.meta.url);

export function loadCatalog(): SearchableTool[] {
  return JSON.parse(readFileSync(new URL('search-catalog.json', fixtures), 'utf8')) as SearchableTool[];
}

export function loadQueries(file: 'search-queries.json' | 'search-queries-heldout.json'): SearchQuery[] {
  return (JSON.parse(readFileSync(new URL(file, fixtures), 'utf8')) as { queries: SearchQuery[] }).queries;
}

function summarize(ranks: number[]): KindMetrics {
  const count = ranks.length;
  if (count === 0) return { count, recallAt1: 0, recallAt5: 0, mrr: 0 };
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  for (const r of ranks) {
    if (r === 1) r1++;
    if (r > 0 && r <= 5) r5++;
    if (r > 0) rr += 1 / r;
  }
  return { count, recallAt1: r1 / count, recallAt5: r5 / count, mrr: rr / count };
}

/** Ranks every query against the catalog (one index, top 20 per query). */
export function scoreQueries(
  tools: readonly SearchableTool[],
  queries: readonly SearchQuery[],
): QuerySetMetrics {
  const index = createToolSearchIndex(tools);
  const ranksByKind = new Map<QueryKind, number[]>(KINDS.map((k) => [k, []]));
  const all: number[] = [];
  const misses: QuerySetMetrics['misses'] = [];
  for (const q of queries) {
    const top = index.search(q.query, { limit: 20 }).map((t) => `${t.server}__${t.name}`);
    const expected = new Set(q.expected);
    const at = top.findIndex((name) => expected.has(name));
    const rank = at < 0 ? 0 : at + 1;
    ranksByKind.get(q.kind)?.push(rank);
    all.push(rank);
    if (rank === 0 || rank > 5) misses.push({ query: q, top: top.slice(0, 5) });
  }
  const byKind = Object.fromEntries(KINDS.map((k) => [k, summarize(ranksByKind.get(k) ?? [])])) as Record<
    QueryKind,
    KindMetrics
  >;
  return { byKind, overall: summarize(all), misses };
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`.padStart(7);
}

/** A fixed-width table of the metrics. */
export function formatMetrics(title: string, m: QuerySetMetrics): string {
  const lines = [
    title,
    `  ${'kind'.padEnd(14)} ${'n'.padStart(4)} ${'R@1'.padStart(7)} ${'R@5'.padStart(7)}    MRR`,
  ];
  for (const [kind, k] of [
    ...KINDS.map((kind) => [kind, m.byKind[kind]] as const),
    ['overall', m.overall] as const,
  ]) {
    lines.push(
      `  ${kind.padEnd(14)} ${String(k.count).padStart(4)} ${pct(k.recallAt1)} ${pct(k.recallAt5)}  ${k.mrr.toFixed(3)}`,
    );
  }
  return lines.join('\n');
}
