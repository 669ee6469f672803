/**
 * Runs every `bench/*.bench.ts` in name order. Each module exports a default
 * async function that prints its own figures; nothing is asserted.
 *
 * Run: pnpm --filter @wave/agent bench
 */
import { readdirSync } from 'node:fs';

const dir = new URL('./', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
for (const file of files) {
  const mod = (await import(new URL(file, dir).href)) as { default: () => Promise<void> | void };
  console.log(`## ${file}`);
  await mod.default();
  console.log('');
}
