import { waveTsupConfig } from '../../tsup.shared.ts';

// fixturePath/realServer use import.meta.url; shim it in the CJS build.
// `./vitest` runs only inside vitest, which the test runner provides.
export default waveTsupConfig({
  entry: ['src/index.ts', 'src/vitest.ts'],
  external: ['vitest'],
  shims: true,
});
