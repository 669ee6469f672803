import { describe, expect, it } from 'vitest';
import {
  aggregate,
  formatRatio,
  formatValue,
  type Measured,
  median,
  quantile,
  renderJson,
  renderMarkdown,
} from '../src/report';

const run = (value: number, ref: number): Measured[] => [
  {
    id: 'echo.pool.p50',
    group: 'Tool call',
    label: 'echo p50',
    unit: 'ms',
    value,
    samples: 100,
    reference: { label: 'raw', value: ref },
  },
  { id: 'cli.processes', group: 'CLI', label: 'processes', unit: 'processes', value: 0, samples: 3 },
];

describe('aggregate', () => {
  it('takes the median of each figure over the runs, and the median of the per-run ratios', () => {
    const [echo, procs] = aggregate([run(1, 1), run(3, 2), run(2, 4)]);
    expect(echo).toMatchObject({
      id: 'echo.pool.p50',
      median: 2,
      runs: [1, 3, 2],
      samples: 100,
      reference: { label: 'raw', median: 2, runs: [1, 2, 4] },
    });
    // Per-run ratios 1, 1.5, 0.5: their median, not median(value) / median(reference) (= 1).
    expect(echo?.ratio).toBe(1);
    expect(procs).toMatchObject({ id: 'cli.processes', median: 0, runs: [0, 0, 0] });
    expect(procs?.reference).toBeUndefined();
    expect(procs?.ratio).toBeUndefined();
  });

  it('gives counts and zero references no ratio', () => {
    const counts: Measured = {
      id: 'survivors',
      group: 'g',
      label: 'left',
      unit: 'processes',
      value: 0,
      samples: 1,
      reference: { label: 'raw', value: 3 },
    };
    const zeroRef: Measured = { ...counts, id: 'z', unit: 'ms', reference: { label: 'raw', value: 0 } };
    const [a, b] = aggregate([[counts, zeroRef]]);
    expect(a?.reference?.median).toBe(3);
    expect(a?.ratio).toBeUndefined();
    expect(b?.ratio).toBeUndefined();
  });
});

describe('statistics and formatting', () => {
  it('median of even and odd counts, nearest-rank quantiles', () => {
    expect(median([4, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
    const xs = Array.from({ length: 101 }, (_, i) => 100 - i);
    expect(quantile(xs, 0.5)).toBe(50);
    expect(quantile(xs, 0.95)).toBe(95);
  });

  it('formats values in their unit and ratios', () => {
    expect(formatValue(0.4123, 'ms')).toBe('412 µs');
    expect(formatValue(3.4123, 'ms')).toBe('3.41 ms');
    expect(formatValue(1204.4, 'ms')).toBe('1 204 ms');
    expect(formatValue(46410, 'tokens')).toBe('46 410 tokens');
    expect(formatValue(0, 'processes')).toBe('0');
    expect(formatRatio(1.049)).toBe('1.05x');
    expect(formatRatio(0.0061)).toBe('0.0061x');
    expect(formatRatio(0.000139)).toBe('0.00014x');
    expect(formatRatio(undefined)).toBe('-');
  });

  it('renders one Markdown row per figure under its group', () => {
    const md = renderMarkdown({
      machine: {
        date: '2026-01-01T00:00:00.000Z',
        node: 'v20.19.0',
        platform: 'linux x64',
        cpus: 2,
        cpuModel: 'cpu',
        memoryGiB: 8,
        loadAverage: { start: 1, end: 2 },
      },
      repeat: 3,
      figures: aggregate([run(1, 2)]),
    });
    expect(md).toContain('Medians over 3 runs');
    expect(md).toContain('| **Tool call** | | | | | |\n| echo p50 | 1.00 ms | raw | 2.00 ms | 0.50x | 100 |');
    expect(md).toContain('| processes | 0 | - | - | - | 3 |');
  });
});

describe('renderJson', () => {
  it('rounds to 0.1 µs and keeps short number arrays on one line, as Biome formats them', () => {
    const results = {
      machine: {
        date: 'd',
        node: 'v20',
        platform: 'linux x64',
        cpus: 2,
        cpuModel: 'cpu',
        memoryGiB: 8,
        loadAverage: { start: 1.25, end: 2 },
      },
      repeat: 2,
      figures: aggregate([run(1.234567891, 2), run(2, 2)]),
    };
    const text = renderJson(results);
    expect(text).toContain('"runs": [1.2346, 2],');
    expect(text).toContain('"median": 1.6173,');
    expect(JSON.parse(text).figures[0].reference.runs).toEqual([2, 2]);
    const long = renderJson({
      ...results,
      figures: aggregate(Array.from({ length: 40 }, () => run(1.23456, 2))),
    });
    expect(long).toContain('"runs": [\n        1.2346,\n');
  });
});
