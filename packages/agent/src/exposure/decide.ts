/**
 * Which form the MCP pool takes in this turn's tool declarations. Pure; the
 * agent asks again on every turn, so the form follows the pool both ways.
 */

export type ToolMode = 'auto' | 'flat' | 'exec' | 'gateway';
export type Exposure = 'flat' | 'exec' | 'gateway';

export interface ExposureInput {
  /** @default 'auto' */
  toolMode?: ToolMode;
  /** `false` keeps the pool flat whatever the mode says. @default true */
  enableExec?: boolean;
  /** A permission rule denies `Exec`: the pool stays flat, so no MCP tool is lost. */
  execDenied: boolean;
  /** MCP tools left after the deny filter (the ones flat mode would declare). */
  visibleToolCount: number;
}

/** From this many visible MCP tools on, `auto` folds the pool into Exec. */
export const EXEC_THRESHOLD = 5;

/**
 * - `flat` / `gateway`: as asked.
 * - `exec`: Exec, unless Exec is disabled or denied (then flat).
 * - `auto`: flat below {@link EXEC_THRESHOLD} visible MCP tools, Exec from it on,
 *   unless Exec is disabled or denied (then flat).
 */
export function decideExposure(input: ExposureInput): Exposure {
  const mode = input.toolMode ?? 'auto';
  if (mode === 'flat' || mode === 'gateway') return mode;
  const execAllowed = input.enableExec !== false && !input.execDenied;
  if (!execAllowed) return 'flat';
  if (mode === 'exec') return 'exec';
  return input.visibleToolCount >= EXEC_THRESHOLD ? 'exec' : 'flat';
}
