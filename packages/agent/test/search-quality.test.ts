/**
 * Ranking floors on the real catalog (23 servers, 252 tools), for the tuning
 * set and the held-out set. The held-out floors are the targets or
 * a little under the measured figures, whichever is higher, so a ranking
 * regression fails here. Figures: `pnpm --filter @wave/agent score:search`.
 */
import { describe, expect, test } from 'vitest';
import { loadCatalog, loadQueries, type QuerySetMetrics, scoreQueries } from '../bench/search-metrics';

const catalog = loadCatalog();

interface Floors {
  exactAt1: number;
  keywordAt5: number;
  serverAt5: number;
  paraphraseAt5: number;
  overallAt5: number;
}

function assertFloors(m: QuerySetMetrics, floors: Floors): void {
  const misses = m.misses.map((x) => `[${x.query.kind}] ${x.query.query} -> ${x.top.join(', ')}`);
  expect(m.byKind.exact.recallAt1, 'exact names first').toBeGreaterThanOrEqual(floors.exactAt1);
  expect(m.byKind.keyword.recallAt5, `keyword R@5; misses:\n${misses.join('\n')}`).toBeGreaterThanOrEqual(
    floors.keywordAt5,
  );
  expect(
    m.byKind['server-scoped'].recallAt5,
    `server-scoped R@5; misses:\n${misses.join('\n')}`,
  ).toBeGreaterThanOrEqual(floors.serverAt5);
  expect(m.byKind.paraphrase.recallAt5, 'paraphrase R@5').toBeGreaterThanOrEqual(floors.paraphraseAt5);
  expect(m.overall.recallAt5, 'overall R@5').toBeGreaterThanOrEqual(floors.overallAt5);
}

describe('tool search quality', () => {
  test('query sets are large enough and cover every kind', () => {
    const tuning = loadQueries('search-queries.json');
    const heldOut = loadQueries('search-queries-heldout.json');
    expect(tuning.length).toBeGreaterThanOrEqual(200);
    expect(heldOut.length).toBeGreaterThanOrEqual(80);
    for (const set of [tuning, heldOut]) {
      for (const kind of ['exact', 'keyword', 'server-scoped', 'paraphrase']) {
        expect(set.filter((q) => q.kind === kind).length).toBeGreaterThanOrEqual(20);
      }
    }
    const names = new Set(catalog.map((t) => `${t.server}__${t.name}`));
    for (const q of [...tuning, ...heldOut]) for (const e of q.expected) expect(names).toContain(e);
  });

  test('tuning set floors', () => {
    assertFloors(scoreQueries(catalog, loadQueries('search-queries.json')), {
      exactAt1: 1,
      keywordAt5: 1,
      serverAt5: 0.97,
      paraphraseAt5: 0.88,
      overallAt5: 0.94,
    });
  });

  test('held-out set floors', () => {
    assertFloors(scoreQueries(catalog, loadQueries('search-queries-heldout.json')), {
      exactAt1: 1,
      keywordAt5: 1,
      serverAt5: 0.97,
      paraphraseAt5: 0.72,
      overallAt5: 0.86,
    });
  });
});
