import { defineConfig, type ViteUserConfig } from 'vitest/config';

/**
 * Shared vitest settings. Tests run on TypeScript source through the
 * `@wave/source` export condition, so no build is needed first.
 */
export function waveVitestConfig(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  return defineConfig({
    ssr: { resolve: { conditions: ['@wave/source'] } },
    resolve: { conditions: ['@wave/source'] },
    test: {
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 30_000,
      ...overrides,
    },
  });
}
