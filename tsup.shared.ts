import { defineConfig, type Options } from 'tsup';

/**
 * Shared tsup settings: ESM + CJS + type declarations for Node 20, from
 * `src/index.ts`. Packages pass only what differs.
 */
export function waveTsupConfig(overrides: Options = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    ...overrides,
  });
}
