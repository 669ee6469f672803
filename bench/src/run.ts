/**
 * `pnpm bench`: every figure of the suite against the raw MCP SDK Client, in
 * one run. Prints the Markdown table and writes results.json and results.md
 * next to this package's README. Asserts nothing: a number never fails a run.
 *
 *   pnpm bench                       one run of the suite
 *   pnpm bench -- --repeat 3         three runs; every figure is the median of the three
 *   pnpm bench -- --smoke            one timing of everything, nothing written (a check that it all runs)
 *   pnpm bench -- --out <dir>        write the results somewhere else
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FULL_SIZES, measureAll, SMOKE_SIZES } from './measure.ts';
import {
  aggregate,
  type MachineInfo,
  type Measured,
  type Results,
  renderJson,
  renderMarkdown,
} from './report.ts';

const { values } = parseArgs({
  // `pnpm bench -- --repeat 3` passes the `--` through.
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    repeat: { type: 'string', default: '1' },
    smoke: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const repeat = Math.max(1, Number.parseInt(values.repeat ?? '1', 10) || 1);
const sizes = values.smoke ? SMOKE_SIZES : FULL_SIZES;
const outDir = resolve(values.out ?? join(import.meta.dirname, '..'));

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

const loadStart = loadavg()[0] ?? 0;
const started = new Date();
const runs: Measured[][] = [];
for (let i = 0; i < repeat; i++) {
  const prefix = repeat > 1 ? `[run ${i + 1}/${repeat}] ` : '';
  runs.push(await measureAll(sizes, (line) => console.error(`${prefix}${line}`)));
}
const machine: MachineInfo = {
  date: started.toISOString(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
  memoryGiB: Math.round(totalmem() / 1024 ** 3),
  loadAverage: { start: loadStart, end: loadavg()[0] ?? 0 },
};
const commit = gitCommit();
if (commit) machine.commit = commit;
const results: Results = { machine, repeat, figures: aggregate(runs) };
const markdown = renderMarkdown(results);
console.log(markdown);
if (values.smoke) {
  console.error('smoke run: nothing written');
} else {
  writeFileSync(join(outDir, 'results.json'), renderJson(results));
  writeFileSync(join(outDir, 'results.md'), markdown);
  console.error(`wrote ${join(outDir, 'results.json')} and results.md`);
}
