import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/main';
import { sandbox } from './helpers';

/** Every command path of the `wave` tree: [], ['mcp'], ['mcp', 'list'], ... */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return [prefix, ...cmd.commands.flatMap((c) => commandPaths(c, [...prefix, c.name()]))];
}

describe('--help', () => {
  it('every command, at every level, has --help with examples (exit 0)', async () => {
    const io = { out() {}, err() {}, interactive: false, color: false, env: {}, cwd: '/' };
    const paths = commandPaths(buildProgram(io));
    expect(paths.length).toBeGreaterThan(20);
    const s = await sandbox();
    const missing: string[] = [];
    for (const path of paths) {
      const r = await s.wave([...path, '--help']);
      expect(r.code, `wave ${path.join(' ')} --help`).toBe(0);
      if (!/\nExamples?:\n {2}wave /.test(r.stdout)) missing.push(`wave ${path.join(' ')}`.trim());
    }
    expect(missing).toEqual([]);
  });
});
