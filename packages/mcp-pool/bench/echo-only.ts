import { measurePool } from './run';
const n = Number(process.argv[2] ?? 3000);
const r = await measurePool({ calls: n, dials: 1, warmup: 300 });
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`raw ${(med(r.rawCalls) * 1000).toFixed(0)}us pool ${(med(r.poolCalls) * 1000).toFixed(0)}us ratio ${(med(r.poolCalls) / med(r.rawCalls)).toFixed(3)}`);
