/**
 * Pure part of the bench: figures measured in one or more runs of the whole
 * suite -> medians and ratios -> results.json and a Markdown table.
 */

export type Unit = 'ms' | 'tokens' | 'processes';

/** One figure as one run of the suite measured it. */
export interface Measured {
  /** Stable key, e.g. `echo.pool.p50`. */
  id: string;
  /** Section of the table, e.g. `Tool call (echo)`. */
  group: string;
  label: string;
  unit: Unit;
  /** wave's figure (itself a median or percentile of `samples` timings when timed). */
  value: number;
  /** Timings behind `value` in this run (1 for a count or a size). */
  samples: number;
  /** What the figure is compared with: the raw SDK Client on the same fixture and machine, measured in the same run. */
  reference?: { label: string; value: number };
}

/** One figure over every run of the suite. */
export interface Figure {
  id: string;
  group: string;
  label: string;
  unit: Unit;
  /** Median over the runs of the suite. */
  median: number;
  /** The figure of each run of the suite, in order. */
  runs: number[];
  /** Timings behind each run's figure. */
  samples: number;
  reference?: { label: string; median: number; runs: number[] };
  /**
   * Median over the runs of `value / reference` (each run's pair was measured
   * at the same moments); absent for counts and when the reference is 0.
   */
  ratio?: number;
}

export interface MachineInfo {
  date: string;
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  /** 1-minute load average when the suite started and when it ended. */
  loadAverage: { start: number; end: number };
  commit?: string;
}

export interface Results {
  machine: MachineInfo;
  /** Runs of the whole suite. */
  repeat: number;
  figures: Figure[];
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Nearest-rank quantile (q in 0..1); NaN for no samples. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] as number;
}

/** Folds the runs of the suite (each a list of measured figures) into one figure per id, in first-seen order. */
export function aggregate(runs: readonly (readonly Measured[])[]): Figure[] {
  const byId = new Map<string, Measured[]>();
  for (const run of runs) {
    for (const m of run) {
      const list = byId.get(m.id) ?? [];
      list.push(m);
      byId.set(m.id, list);
    }
  }
  return [...byId.values()].map((list) => {
    const first = list[0] as Measured;
    const values = list.map((m) => m.value);
    const figure: Figure = {
      id: first.id,
      group: first.group,
      label: first.label,
      unit: first.unit,
      median: median(values),
      runs: values,
      samples: first.samples,
    };
    const refs = list.map((m) => m.reference).filter((r) => r !== undefined);
    if (first.reference && refs.length === list.length) {
      figure.reference = {
        label: first.reference.label,
        median: median(refs.map((r) => r.value)),
        runs: refs.map((r) => r.value),
      };
      if (first.unit !== 'processes' && refs.every((r) => r.value > 0)) {
        figure.ratio = median(list.map((m, i) => m.value / (refs[i] as { value: number }).value));
      }
    }
    return figure;
  });
}

/** A value in its unit, short: `412 µs`, `3.41 ms`, `1 204 ms`, `3 500 tokens`, `0`. */
export function formatValue(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (unit === 'tokens') return `${Math.round(value).toLocaleString('en').replace(/,/g, ' ')} tokens`;
  if (unit === 'processes') return String(Math.round(value));
  if (value < 1) return `${(value * 1000).toFixed(0)} µs`;
  if (value < 10) return `${value.toFixed(2)} ms`;
  if (value < 100) return `${value.toFixed(1)} ms`;
  return `${Math.round(value).toLocaleString('en').replace(/,/g, ' ')} ms`;
}

export function formatRatio(ratio: number | undefined): string {
  if (ratio === undefined || !Number.isFinite(ratio)) return '-';
  // Two significant digits below 0.1 (0.074x, 0.00014x), two decimals above.
  return ratio < 0.1 ? `${Number(ratio.toPrecision(2))}x` : `${ratio.toFixed(2)}x`;
}

/**
 * results.json text: numbers rounded to 0.1 µs (timings are in ms), and an
 * array of numbers on one line when it fits in 110 columns (as Biome formats it).
 */
export function renderJson(results: Results): string {
  const text = JSON.stringify(
    results,
    (_key, value: unknown) =>
      typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value,
    2,
  );
  return `${text.replace(
    /^( *)("\w+": )?\[\n([-\d.e+,\s]+?)\n *\]/gm,
    (whole, indent: string, key = '', body: string) => {
      const line = `${indent}${key}[${body
        .split(',')
        .map((x) => x.trim())
        .join(', ')}]`;
      return line.length <= 110 ? line : whole;
    },
  )}\n`;
}

/** The Markdown table (with a short header naming the machine), as printed and written to results.md. */
export function renderMarkdown(results: Results): string {
  const m = results.machine;
  const lines = [
    '# wave benchmarks',
    '',
    `${m.date} · Node ${m.node} · ${m.platform} · ${m.cpus} cores (${m.cpuModel}) · ${m.memoryGiB} GiB · ` +
      `load average ${m.loadAverage.start.toFixed(1)} at start, ${m.loadAverage.end.toFixed(1)} at end` +
      (m.commit ? ` · commit ${m.commit.slice(0, 10)}` : ''),
    '',
    `Medians over ${results.repeat} run${results.repeat === 1 ? '' : 's'} of the whole suite. ` +
      'The ratio is wave / reference, measured at the same moments in each run (lower is better; ' +
      'the median of the per-run ratios). See README.md for how to read it.',
    '',
    '| measure | wave | reference | reference value | ratio | samples |',
    '|---|---:|---|---:|---:|---:|',
  ];
  let group = '';
  for (const f of results.figures) {
    if (f.group !== group) {
      group = f.group;
      lines.push(`| **${group}** | | | | | |`);
    }
    lines.push(
      `| ${f.label} | ${formatValue(f.median, f.unit)} | ${f.reference?.label ?? '-'} | ` +
        `${f.reference ? formatValue(f.reference.median, f.unit) : '-'} | ${formatRatio(f.ratio)} | ${f.samples} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
