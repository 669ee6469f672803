/**
 * Vitest globalSetup: the whole run uses a temporary wave home (the pool
 * keeps its process ledgers there), never the real `~/.wave`. Test workers
 * are forked after setup and inherit `WAVE_HOME`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const home = mkdtempSync(join(tmpdir(), 'wave-pool-home-'));
  const before = process.env.WAVE_HOME;
  process.env.WAVE_HOME = home;
  return () => {
    if (before === undefined) delete process.env.WAVE_HOME;
    else process.env.WAVE_HOME = before;
    rmSync(home, { recursive: true, force: true });
  };
}
