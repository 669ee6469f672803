#!/usr/bin/env node
// Reads a test log on stdin (vitest output of every package, through turbo)
// and prints one closing line: "Tests: N passed, N failed" (", N skipped").
// Used by .ci/run so a reader sees the total at the end of a long log.
import { text } from 'node:stream/consumers';

const log = (await text(process.stdin)).replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
let skipped = 0;
for (const line of log.split('\n')) {
  const m = /^\S*\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line.replace(/^@[\w/.-]+:test:\s*/, ''));
  if (!m?.[1]) continue;
  for (const part of m[1].split('|')) {
    const n = /(\d+)\s+(passed|failed|skipped|todo)/.exec(part);
    if (!n) continue;
    const count = Number(n[1]);
    if (n[2] === 'passed') passed += count;
    else if (n[2] === 'failed') failed += count;
    else skipped += count;
  }
}
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
