import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/**
 * Global leak check (testkit): sets WAVE_REAPER_NAMESPACE for the run and fails
 * it if a process marked with that namespace survives.
 */
const leakCheck = fileURLToPath(new URL('./packages/testkit/src/leak-check.ts', import.meta.url));
/** Global home guard (testkit): a temporary WAVE_HOME for the whole run; fails it if ~/.wave appears. */
const homeGuard = fileURLToPath(new URL('./packages/testkit/src/home-guard.ts', import.meta.url));

/**
 * Shared vitest settings. Tests run on TypeScript source through the
 * `@wave/source` export condition, so no build is needed first.
 */
export function waveVitestConfig(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  const extraSetup = overrides.globalSetup === undefined ? [] : [overrides.globalSetup].flat();
  return defineConfig({
    ssr: { resolve: { conditions: ['@wave/source'] } },
    resolve: { conditions: ['@wave/source'] },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
      ...overrides,
      globalSetup: [leakCheck, homeGuard, ...extraSetup],
    },
  });
}
