/**
 * Scores tool search on the tuning and held-out query sets: recall@1,
 * recall@5 and MRR by kind. `--misses` also lists the queries that missed
 * the top 5.
 *
 * Run: pnpm --filter @wave/agent score:search [--misses]
 */
import { formatMetrics, loadCatalog, loadQueries, scoreQueries } from './search-metrics';

const tools = loadCatalog();
const showMisses = process.argv.includes('--misses');
for (const [title, file] of [
  ['tuning set (search-queries.json)', 'search-queries.json'],
  ['held-out set (search-queries-heldout.json)', 'search-queries-heldout.json'],
] as const) {
  let queries: ReturnType<typeof loadQueries>;
  try {
    queries = loadQueries(file);
  } catch {
    console.log(`${title}: not found\n`);
    continue;
  }
  const metrics = scoreQueries(tools, queries);
  console.log(formatMetrics(`${title}, ${tools.length} tools`, metrics));
  if (showMisses) {
    for (const miss of metrics.misses) {
      console.log(
        `    miss [${miss.query.kind}] "${miss.query.query}" want ${miss.query.expected.join(' | ')}`,
      );
      console.log(`         got ${miss.top.join(', ')}`);
    }
  }
  console.log('');
}
