import { join } from 'node:path';
import { resolveHome } from '@wave/mcp-config';
import { createLedger, type Ledger } from '@wave/proc-reaper';

/** Folder of the per-host process ledgers under the wave home. */
export const LEDGER_DIR = 'processes';

/**
 * The process ledger of one pool: `<home>/processes/host-<pid>-<id>.json`,
 * with `home` resolved like `@wave/mcp-config` does (`home`, else
 * `$WAVE_HOME`, else `~/.wave`). No I/O until the first record or sweep.
 */
export function createProcessLedger(home: string | undefined, onWarning: (message: string) => void): Ledger {
  const dir = join(resolveHome(home !== undefined ? { home } : {}), LEDGER_DIR);
  return createLedger({ dir, onWarning });
}
