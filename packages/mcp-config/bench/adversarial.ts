/**
 * Asserted benchmark: expansion and masking of a 4 MiB adversarial config
 * (the inputs that made the old backtracking regexes quadratic) must take
 * under 100 ms. Exits non-zero when the median of 7 runs is over the budget.
 * The budget is checked on the CPU time this process used (user + system),
 * which a busy machine does not inflate; wall time is printed beside it.
 * Run: pnpm --filter @wave/mcp-config bench
 */
import { loadavg } from 'node:os';
import { displayServer } from '../src/display';
import { mergeSources } from '../src/merge';
import { ADVERSARIAL_BYTES, adversarialServers } from '../test/adversarial-input';

const BUDGET_MS = 100;
const RUNS = 7;

const servers = adversarialServers();
const cpu: number[] = [];
const wall: number[] = [];
for (let i = 0; i < RUNS + 2; i++) {
  const startCpu = process.cpuUsage();
  const start = performance.now();
  const merged = mergeSources([{ source: 'project', file: '/w/.mcp.json', servers }], { env: {} });
  merged.servers.map(displayServer);
  const used = process.cpuUsage(startCpu);
  if (i >= 2) {
    // two warm-up runs
    wall.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
  }
}
const med = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.POSITIVE_INFINITY;
const median = med(cpu);
const load = loadavg()[0] ?? 0;
console.log(
  `expand + mask, ${(ADVERSARIAL_BYTES / 1024 / 1024).toFixed(2)} MiB adversarial config: median CPU ${median.toFixed(1)} ms ` +
    `(min ${Math.min(...cpu).toFixed(1)}), median wall ${med(wall).toFixed(1)} ms (min ${Math.min(...wall).toFixed(1)}); ` +
    `budget ${BUDGET_MS} ms CPU; load average ${load.toFixed(1)}`,
);
if (median >= BUDGET_MS) {
  console.error(`FAIL: median ${median.toFixed(1)} ms is over the ${BUDGET_MS} ms budget`);
  process.exitCode = 1;
}
