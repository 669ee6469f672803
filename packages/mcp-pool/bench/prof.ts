import { measurePool } from './run';
await measurePool({ calls: 6000, dials: 1, warmup: 300 });
